"""Training checkpoints back from a shipped regressor graph (tread.onnx or crop.onnx), so a later
stage can resume from the shipped networks without rerunning the recipe that made them.

    python unfold_onnx.py --onnx ../crop.onnx --pretrained runs/mbv2_nsfwjs.pt \
        --data data --split cal --out runs/cropA_unfolded.pt runs/cropB_unfolded.pt

The export folds every BatchNorm into the convolution before it (weight W', bias b'), and the
training checkpoints are not kept (`runs/` is not committed). This rebuilds one TreadNet per
member of the graph: the frozen trunk (stem, blocks 0-5) and the unused 1280-channel head from
the pretrained MobileNetV2, which the graph's trunk must equal (checked); blocks 6-12 from the
graph's folded convolutions; the heads (fc, out) by name. Each BatchNorm of blocks 6-12 is
unfolded against the statistics of its convolution's output on images of `--split`: with the
convolution's weight W' and that output's per-channel mean m and variance v, the BatchNorm gets
running mean m, running variance v, scale sqrt(v + eps) and shift m + b', which in eval mode is
exactly W'x + b' and in train mode (batch statistics near m and v) nearly so, so training resumes
from the shipped function instead of from a BatchNorm that normalises it away. The training-only
auxiliary head is not in the graph and starts untrained (train.py accepts its absence).

At the end the members are exported again exactly as finalize.py does and read on images of the
split next to the graph: the largest difference of each output is printed and must be tiny.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(__file__))
import nets  # noqa: E402
import preprocess as pp  # noqa: E402
from finalize import export, run  # noqa: E402
from nets import TreadEnsemble, TreadNet, TreadNetExport  # noqa: E402
from train import load  # noqa: E402

OUTPUTS = ["gate", "depth", "sigma", "wear_logits"]


def convs_of(net: TreadNet, blocks: range, stem: bool) -> list[tuple[torch.nn.Conv2d, torch.nn.BatchNorm2d]]:
    """(conv, batchnorm) pairs in the order the forward pass runs them (and the export writes them)."""
    pairs = [(net.backbone.stem[0], net.backbone.stem[1])] if stem else []
    for i in blocks:
        b = net.backbone.blocks[i]
        for seq in (b.expand, b.dw, b.project):
            if seq is not None:
                pairs.append((seq[0], seq[1]))
    return pairs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--onnx", required=True, help="tread.onnx or crop.onnx (a plain graph: no mirror inside)")
    ap.add_argument("--pretrained", required=True, help="runs/mbv2_nsfwjs.pt (train_all.sh step 1)")
    ap.add_argument("--data", required=True)
    ap.add_argument("--split", default="cal", help="images for the BatchNorm statistics and the check (calibration photos, or the "
                                                    "split the resumed run will train on)")
    ap.add_argument("--images", type=int, default=1000)
    ap.add_argument("--out", required=True, nargs="+", help="one checkpoint per member, in the graph's order")
    a = ap.parse_args()
    torch.set_num_threads(2)

    model = onnx.load(a.onnx)
    inits = {i.name: numpy_helper.to_array(i).copy() for i in model.graph.initializer}
    graph_convs = [(inits[n.input[1]], inits[n.input[2]]) for n in model.graph.node if n.op_type == "Conv"]
    members = [TreadNet() for _ in a.out]
    for m in members:
        m.backbone.load_state_dict(torch.load(a.pretrained))
        m.eval()
    trunk = convs_of(members[0], range(nets.FROZEN_BLOCKS), stem=True)
    tops = [convs_of(m, range(nets.FROZEN_BLOCKS, nets.TOP_BLOCKS), stem=False) for m in members]
    expected = len(trunk) + sum(len(t) for t in tops)
    assert len(graph_convs) == expected, f"{a.onnx} has {len(graph_convs)} convolutions, {len(a.out)} member(s) need {expected}"

    # The frozen trunk must be the pretrained one: its BatchNorm folded gives the graph's weights.
    for (conv, bn), (w, b) in zip(trunk, graph_convs[:len(trunk)]):
        scale = (bn.weight / torch.sqrt(bn.running_var + bn.eps)).detach()
        folded_w = conv.weight.detach() * scale[:, None, None, None]
        folded_b = (bn.bias - bn.running_mean * scale).detach()
        assert np.allclose(folded_w.numpy(), w, atol=1e-5) and np.allclose(folded_b.numpy(), b, atol=1e-5), \
            "the graph's frozen trunk is not the pretrained MobileNetV2 given"

    # Blocks 6-12: the folded weights, an identity BatchNorm for now (exact in eval mode).
    at = len(trunk)
    for m, pairs in zip(members, tops):
        for conv, bn in pairs:
            w, b = graph_convs[at]
            at += 1
            assert tuple(conv.weight.shape) == w.shape, (conv, w.shape)
            with torch.no_grad():
                conv.weight.copy_(torch.from_numpy(w))
                bn.weight.fill_(1.0)
                bn.bias.copy_(torch.from_numpy(b))
                bn.running_mean.zero_()
                bn.running_var.fill_(1.0 - bn.eps)
    for k, m in enumerate(members):
        for layer in ("fc", "out"):
            for p in ("weight", "bias"):
                getattr(getattr(m, layer), p).data.copy_(torch.from_numpy(inits[f"net.members.{k}.{layer}.{p}"]))

    # Unfold: the statistics of every top convolution's output (the eval-mode network is exact).
    u8 = load(a.split, a.data, a.images)["x"]
    x = torch.from_numpy(pp.normalise(u8))
    stats: dict[torch.nn.Conv2d, list] = {}
    hooks = [conv.register_forward_hook(lambda mod, _i, out: stats.setdefault(mod, []).append(
        (out.sum((0, 2, 3)).double(), (out.double() ** 2).sum((0, 2, 3)), out.numel() / out.shape[1])))
        for pairs in tops for conv, _ in pairs]
    with torch.no_grad():
        for m in members:
            for i in range(0, len(x), 100):
                m(x[i:i + 100])
    for h in hooks:
        h.remove()
    for pairs in tops:
        for conv, bn in pairs:
            s = stats[conv]
            count = sum(c for _, _, c in s)
            mean = sum(t for t, _, _ in s) / count
            var = (sum(q for _, q, _ in s) / count - mean ** 2).clamp(min=1e-6)
            with torch.no_grad():
                shift = bn.bias.clone()
                bn.running_mean.copy_(mean.float())
                bn.running_var.copy_(var.float())
                bn.weight.copy_(torch.sqrt(var + bn.eps).float())
                bn.bias.copy_(mean.float() + shift)

    for m, path in zip(members, a.out):
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        torch.save({k: v for k, v in m.state_dict().items() if not k.startswith("aux.")}, path)
        print("wrote", path)

    # The check: the members exported as finalize.py exports them, against the graph.
    net = members[0] if len(members) == 1 else TreadEnsemble(members)
    tmp = os.path.join(os.path.dirname(os.path.abspath(a.out[0])), "unfold_check.onnx")
    export(TreadNetExport(net, "none"), tmp, OUTPUTS)
    for name, mine, theirs in zip(OUTPUTS, run(tmp, u8), run(a.onnx, u8)):
        print(f"{name:12s} largest difference {float(np.abs(mine - theirs).max()):.2e}")
    os.remove(tmp)


if __name__ == "__main__":
    main()
