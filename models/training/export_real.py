"""Export the scene reader (frozen pretrained MobileNetV2 + the trained head of train_real.py) to
one ONNX file, opset 17, and check onnxruntime against PyTorch.

    python export_real.py --top runs/real_all/top.pt --out ../scene.onnx

Input `input`: N x 3 x 160 x 160, the app's shared tensor ((x/255 - 0.5)/0.5, preprocess.ts);
the graph maps it back to 0..1, the range the nsfwjs weights were trained on. Outputs: `scene`
N x 3 probabilities (tread, tread not visible, no tire), `worn` N (probability the tire is not
usable), `depth` N (mm), `sigma` N (mm), `worn_logit` N (the worn probability's logit, unsaturated),
and with --support (support_head.py, since tread-2026.11.29.3) `support` N: the probability that the
photo is like those the worn probability learned from (averaged over the photo and its mirror image),
and with --features (since tread-2026.11.29.4) `features` N x 3 296: the frozen network's pooled
features the head reads (real_cache.FEATURES; averaged over the photo and its mirror image), which a
shop's own reader (src/core/analysis/shop-reader.ts) is fitted on. Neither changes the other outputs.
With --wear (wear_branch.py, since tread-2026.11.28.3) the worn logit is the head's plus the wear
branch's, which forks after block 14 (blocks 15-16 and the 1 280-channel head fine-tuned); with
--gate (gate_branch.py, since tread-2026.11.28.4) the scene logits are the head's plus the gate
branch's, forked at the same place (tried, not shipped: models/NOTEBOOK.md, "A gate branch"). With
--mirror (since tread-2026.11.29) the graph reads each image and its mirror image (flipped inside,
one batch of twice the size) and averages the two readings: the scene probabilities, the worn logit
(the worn probability is its sigmoid), depth and sigma. With --zoom N (since tread-2026.11.29.6;
needs --mirror and --support) the worn logit also reads the photo zoomed out N times: the image tiled
N x N with its mirror images, box-filtered back to 160 x 160, and that copy's mirror image (two more
images in the batch; the two readings averaged, so that a photo and its mirror image still read
alike). A photo unlike those the worn probability learned from (a close-up, where the web photos
show whole tires) moves toward that copy's reading by what its support lacks:
worn = p + (1 − support) · (z − p) / 2, p the photo and mirror readings' mean, z the zoomed-out copy
and its mirror's; a photo with full support keeps p. Nothing else reads that copy: the scene
probabilities, depth, sigma, support and features stay the photo and mirror image's. With
--float16 the weights are stored in float16 and cast to float32 when onnxruntime loads the graph
(constant folding: it computes in float32), which halves the file (tried with the gate branch).
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
from nets import MobileNetV2  # noqa: E402
from real_cache import SIZE, pooled  # noqa: E402
from train_real import SceneHead, load_head  # noqa: E402
from gate_branch import GateBranch, load_gate  # noqa: E402
from wear_branch import FROM_BLOCK, WearBranch, load_branch  # noqa: E402


OUTPUTS = ["scene", "worn", "depth", "sigma", "worn_logit"]


def zoomed_out(x: torch.Tensor, n: int) -> torch.Tensor:
    """The images of x zoomed out n times: each tiled n x n with its mirror images (left-right in odd
    columns, top-bottom in odd rows, so that every seam continues the picture), then each n x n block
    averaged back to the input's size."""
    row = torch.cat([x if j % 2 == 0 else torch.flip(x, [3]) for j in range(n)], 3)
    canvas = torch.cat([row if i % 2 == 0 else torch.flip(row, [2]) for i in range(n)], 2)
    return F.avg_pool2d(canvas, n)


class SceneReader(nn.Module):
    def __init__(self, backbone: MobileNetV2, head: SceneHead, wear: WearBranch | None = None, gate: GateBranch | None = None,
                 mirror: bool = False, support: dict | None = None, features: bool = False, zoom: int = 0):
        super().__init__()
        # zoom: the worn logit also reads the photo zoomed out `zoom` times, by what the support lacks (since
        # tread-2026.11.29.6): close-ups read at the scale of the labelled web photos (models/NOTEBOOK.md)
        if zoom and (not mirror or support is None):
            raise ValueError("zoom needs mirror and support")
        self.zoom = zoom
        # features: the pooled features f as a last output (since tread-2026.11.29.4)
        self.features = features
        self.backbone = backbone
        self.head = head
        # support_head.py (since tread-2026.11.29.3): one logistic layer on the head's standardised features
        self.support = None
        if support is not None:
            self.support = nn.Linear(support["weight"].numel(), 1)
            with torch.no_grad():
                self.support.weight.copy_(support["weight"].reshape(1, -1))
                self.support.bias.copy_(support["bias"].reshape(1))
        self.wear = wear
        self.gate = gate
        # mirror: each photo is read twice, as it is and mirrored left to right, and the two readings
        # averaged (the scene probabilities, the worn logit, depth and sigma); since tread-2026.11.29
        self.mirror = mirror

    def forward(self, x):
        if not self.mirror:
            logits, worn, depth, logsig, support, f = self.readings(x)
            probs, sigma = F.softmax(logits, 1), torch.exp(logsig)
        else:
            views = [x, torch.flip(x, [3])]
            if self.zoom:  # the zoomed-out copy is read with its mirror image too: a photo and its mirror image read alike
                z = zoomed_out(x, self.zoom)
                views += [z, torch.flip(z, [3])]
            n = x.shape[0]
            logits, worn, depth, logsig, support, f = self.readings(torch.cat(views, 0))
            # slices (not reshapes) keep the counts static in the graph; the zoomed-out copy is read for wear only
            probs = 0.5 * (F.softmax(logits[:n], 1) + F.softmax(logits[n : 2 * n], 1))
            worn_z = 0.5 * (worn[2 * n : 3 * n] + worn[3 * n :])
            worn = 0.5 * (worn[:n] + worn[n : 2 * n])
            depth = 0.5 * (depth[:n] + depth[n : 2 * n])
            sigma = 0.5 * (torch.exp(logsig[:n]) + torch.exp(logsig[n : 2 * n]))
            support = None if support is None else 0.5 * (support[:n] + support[n : 2 * n])
            if self.zoom:
                worn = worn + (1 - support) * 0.5 * (worn_z - worn)
            f = 0.5 * (f[:n] + f[n : 2 * n])
        # worn_logit beside the probability: a float32 sigmoid is 1 exactly above a logit of ≈ 17,
        # which ties the photos the app must still put in order (scene.ts SceneOutput.wornLogit)
        out = (probs, torch.sigmoid(worn), depth, sigma, worn) + (() if support is None else (support,))
        return (*out, f) if self.features else out

    def readings(self, x):
        """Scene logits, worn logit, depth, log-sigma, support (or None) and pooled features of each image of x (the app's tensor)."""
        x = x * 0.5 + 0.5
        if self.wear is None and self.gate is None:
            f = pooled(self.backbone, x)
        else:  # real_cache.pooled, with block 14's output kept for the branch
            bb = self.backbone
            x = bb.stem(x)
            for b in bb.blocks[:13]:
                x = b(x)
            b12 = x.mean((2, 3))
            for b in bb.blocks[13:FROM_BLOCK]:
                x = b(x)
            x14 = x
            for b in bb.blocks[FROM_BLOCK:]:
                x = b(x)
            h = bb.head(x)
            f = torch.cat([b12, x.mean((2, 3)), x.amax((2, 3)), h.mean((2, 3)), h.amax((2, 3))], 1)
        logits, worn, depth, logsig = self.head(f)
        if self.wear is not None:
            worn = worn + self.wear(b12, x14)
        if self.gate is not None:
            logits = logits + self.gate(b12, x14)
        support = None if self.support is None else torch.sigmoid(self.support(self.head.standardised(f))[:, 0])
        return logits, worn, depth, logsig, support, f


def build(pretrained: str, top: str, wear: str = "", gate: str = "", mirror: bool = False, support: str = "",
          features: bool = False, zoom: int = 0) -> SceneReader:
    bb = MobileNetV2()
    bb.load_state_dict(torch.load(pretrained, map_location="cpu"))
    head = load_head(top)
    sup = torch.load(support, map_location="cpu") if support else None
    return SceneReader(bb, head, load_branch(wear, bb) if wear else None, load_gate(gate, bb) if gate else None, mirror, sup,
                       features, zoom).eval()


def float16_weights(path: str) -> None:
    """Stores each float32 weight of at least 1 024 values as float16 behind a Cast to float32 (the
    graph computes as before, in float32; the file is half the size)."""
    import onnx
    from onnx import helper, numpy_helper

    m = onnx.load(path)
    casts, keep = [], []
    for init in m.graph.initializer:
        a = numpy_helper.to_array(init)
        if a.dtype == np.float32 and a.size >= 1024:
            keep.append(numpy_helper.from_array(a.astype(np.float16), init.name + "_f16"))
            casts.append(helper.make_node("Cast", [init.name + "_f16"], [init.name], to=onnx.TensorProto.FLOAT))
        else:
            keep.append(init)
    del m.graph.initializer[:]
    m.graph.initializer.extend(keep)
    nodes = casts + list(m.graph.node)
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    onnx.save(m, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pretrained", default="runs/mbv2_nsfwjs.pt")
    ap.add_argument("--top", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--wear", default="", help="wear_branch.py's branch.pt: its logit is added to the head's")
    ap.add_argument("--gate", default="", help="gate_branch.py's branch.pt: its scene logits are added to the head's")
    ap.add_argument("--mirror", action="store_true", help="read each photo and its mirror image, and average (since tread-2026.11.29)")
    ap.add_argument("--support", default="", help="support_head.py's support.pt: a `support` output (since tread-2026.11.29.3)")
    ap.add_argument("--features", action="store_true", help="a `features` output: the pooled features, for a shop's reader (since tread-2026.11.29.4)")
    ap.add_argument("--zoom", type=int, default=0, help="the worn logit also reads the photo zoomed out ZOOM times (with --mirror; since tread-2026.11.29.6)")
    ap.add_argument("--float16", action="store_true", help="store the weights in float16 behind Casts (half the file)")
    a = ap.parse_args()
    torch.set_num_threads(2)
    net = build(a.pretrained, a.top, a.wear, a.gate, a.mirror, a.support, a.features, a.zoom)
    x = torch.rand(2, 3, SIZE, SIZE) * 2 - 1
    names = OUTPUTS + (["support"] if a.support else []) + (["features"] if a.features else [])
    torch.onnx.export(net, (x,), a.out, input_names=["input"], output_names=names,
                      dynamic_axes={"input": {0: "n"}, **{n: {0: "n"} for n in names}}, opset_version=17, dynamo=False)
    import onnx
    import onnxruntime as ort

    if a.float16:
        float16_weights(a.out)
    m = onnx.load(a.out)
    onnx.checker.check_model(m)
    sess = ort.InferenceSession(a.out, providers=["CPUExecutionProvider"])
    got = sess.run(None, {"input": x.numpy()})
    with torch.no_grad():
        want = [t.numpy() for t in net(x)]
    # float16 weights move the outputs a little: measured against 1 + |value| (a logit of 50 may move by ~0.1)
    worst = max(float((np.abs(g - w) / (1 + np.abs(w))).max()) for g, w in zip(got, want))
    print(f"wrote {a.out} ({os.path.getsize(a.out)} bytes); onnxruntime vs torch max |diff| / (1 + |value|) {worst:.2e}")
    assert worst < (2e-2 if a.float16 else 1e-3), "onnxruntime disagrees with torch"


if __name__ == "__main__":
    main()
