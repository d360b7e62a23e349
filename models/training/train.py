"""Train one of the two networks within a wall-clock budget.

    python train.py --model tread --minutes 40 --out runs/tread
    python train.py --model seg --minutes 40 --out runs/seg

tread: the pretrained MobileNetV2 stem and blocks 0..5 are frozen; their
features are computed once with onnxruntime (much faster than PyTorch on a
CPU) and blocks 6..12 plus the heads are trained on them. `--scratch`
trains the same network from random weights end to end, for comparison.
`--aux-weight` adds a dense auxiliary loss on the trunk's own 1/16 features
(per-cell tire and main-groove share, local groove depth), training only.
seg: the small U-Net, from scratch, on full images.
The learning rate follows a cosine over the time budget (after a linear rise
over its first `--warmup` share, none by default); the checkpoint with the best
validation loss is kept. A resumed run is validated before its first step
(epoch 0), so it never ends worse than where it began; `--freeze-bn` keeps every
BatchNorm in eval mode (for resuming a converged or unfolded network: in train
mode the running statistics drift toward those of dropout-perturbed batches).
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
import preprocess as pp  # noqa: E402
import nets  # noqa: E402
from nets import SegNet, TreadNet  # noqa: E402

WEAR_EDGES = np.array([7.0, 5.0, 3.0, 1.6])  # new, good, medium, worn, critical


def wear_index(depth: np.ndarray) -> np.ndarray:
    idx = np.full(depth.shape, 4, np.int64)
    for i, e in reversed(list(enumerate(WEAR_EDGES))):
        idx[depth >= e] = np.minimum(idx[depth >= e], i)
    return idx


def shards(split: str, data_dir: str, limit: int | None):
    """The split's shard files in order, their sizes and the number of images to take. With a
    limit, only the shards it needs: later ones may still be rendering."""
    files, sizes, n = [], [], 0
    for f in sorted(glob.glob(os.path.join(data_dir, f"{split}_*.npz"))):
        if limit and n >= limit:
            break
        with np.load(f) as z:
            sizes.append(len(z["min_depth"]))
        files.append(f)
        n += sizes[-1]
    return files, sizes, min(n, limit) if limit else n


def with_labels(out: dict) -> dict:
    """Adds has_depth and the wear class; min_depth 0 where there is no depth."""
    d = out["min_depth"]
    out["has_depth"] = out["is_tire"] & np.isfinite(d)
    out["min_depth"] = np.where(out["has_depth"], d, 0).astype(np.float32)
    out["wear"] = wear_index(out["min_depth"])
    return out


def load(split: str, data_dir: str, limit: int | None = None):
    files, sizes, n = shards(split, data_dir, limit)
    parts = [np.load(f) for f in files]
    keys = sorted(set.intersection(*(set(p.files) for p in parts)))
    out = {}
    for k in keys:
        first = parts[0][k]
        if first.dtype.kind not in "biuf":  # strings (their width differs per shard): small, concatenated
            out[k] = np.concatenate([p[k] for p in parts])[:n]
            continue
        # Filled shard by shard: the images of 100 000 renders are 8 GB, a concatenation would need twice that.
        out[k] = np.empty((n,) + first.shape[1:], first.dtype)
        at = 0
        for p, size in zip(parts, sizes):
            take = min(size, n - at)
            if take <= 0:
                break
            out[k][at:at + take] = (first if p is parts[0] else p[k])[:take]
            at += take
    return with_labels(out)


def early_session(pretrained: str, tmp: str, threads: int = 1):
    """The frozen stem and blocks as an onnxruntime session (much faster than PyTorch on a CPU)."""
    import onnxruntime as ort
    net = TreadNet()
    net.backbone.load_state_dict(torch.load(pretrained))
    net.eval()

    class Early(torch.nn.Module):
        def __init__(self, n):
            super().__init__()
            self.n = n

        def forward(self, x):
            return self.n.early(x)

    path = os.path.join(tmp, "early.onnx")
    torch.onnx.export(Early(net), torch.zeros(1, 3, pp.INPUT, pp.INPUT), path, opset_version=17, input_names=["x"],
                      output_names=["f"], dynamic_axes={"x": {0: "n", 2: "h", 3: "w"}, "f": {0: "n", 2: "fh", 3: "fw"}},
                      dynamo=False)  # any input side: the crop reader may take a larger one than INPUT
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    return ort.InferenceSession(path, so)


def early_features(x_u8: np.ndarray, sess) -> np.ndarray:
    out = []
    for i in range(0, len(x_u8), 64):
        out.append(sess.run(None, {"x": pp.normalise(x_u8[i:i + 64])})[0].astype(np.float16))
    return np.concatenate(out)


def load_features(split: str, data_dir: str, limit: int | None, sess, with_aux: bool, cache: str | None = None,
                  trunk: str = ""):
    """tread with the frozen trunk: shard by shard, the early features, the auxiliary targets and
    the per-image labels. The images and masks are never all in memory (those of 156 000 renders
    are 15 GB, their features 4 GB). With `cache`, the features are saved there once and read back
    by the next run over the same shards (members of an ensemble trained side by side); the file
    name holds the split, the image count, the last shard, the frozen depth and `trunk` (a digest
    of the pretrained weights), so other shards or other weights never read a stale cache."""
    files, sizes, n = shards(split, data_dir, limit)
    name = f"{split}_{n}_{os.path.basename(files[-1])[:-4]}_frozen{nets.FROZEN_BLOCKS}_{trunk}.npy"
    cached = os.path.join(cache, name) if cache else None
    feats = np.load(cached) if cached and os.path.exists(cached) else None
    out: dict[str, list] = {}
    computed = None  # filled shard by shard: a concatenation would need twice the features' memory
    at = 0
    for f, size in zip(files, sizes):
        take = min(size, n - at)
        if take <= 0:
            break
        with np.load(f) as z:
            part = {k: z[k][:take] for k in z.files if k not in ("x", "cls", "dmap")}
            if with_aux:
                aux_targets(part, z["cls"][:take], z["dmap"][:take])
            if feats is None:
                fx = early_features(z["x"][:take], sess)
                if computed is None:
                    computed = np.empty((n,) + fx.shape[1:], fx.dtype)
                computed[at:at + take] = fx
        for k, v in part.items():
            out.setdefault(k, []).append(v)
        at += take
    data = {k: np.concatenate(v) for k, v in out.items()}
    if feats is not None:
        assert len(feats) == n, (cached, len(feats), n)
        data["f"] = feats
    else:
        data["f"] = computed
    if feats is None and cached:
        os.makedirs(cache, exist_ok=True)
        np.save(cached + ".tmp.npy", data["f"])
        os.replace(cached + ".tmp.npy", cached)
    return with_labels(data)


def tread_loss(out, y, gate_w, has_depth, wear):
    gate, depth, log_sigma, logits = out
    lg = (F.binary_cross_entropy_with_logits(gate, y, reduction="none") * gate_w).sum() / gate_w.sum().clamp(min=1)
    m = has_depth
    if m.any():
        d, ls, t = depth[m], log_sigma[m], y_depth_of(y, m)
        nll = (0.5 * ((t - d) / ls.exp()) ** 2 + ls).mean()
        l1 = (t - d).abs().mean()
        lc = F.cross_entropy(logits[m], wear[m])
    else:
        nll = l1 = lc = torch.zeros(())
    return lg + 0.5 * nll + l1 + 0.5 * lc, float(l1)


_depth_target = {}


def y_depth_of(_y, m):
    return _depth_target["t"][m]


def run_tread(a, tr, va):
    """tr/va: from load() with --scratch (images), else from load_features() (features in "f")."""
    xtr, xva = (tr["x"], va["x"]) if a.scratch else (tr.pop("f"), va.pop("f"))
    net = TreadNet()
    if not a.scratch:
        net.backbone.load_state_dict(torch.load(a.pretrained))
    params = [p for n, p in net.named_parameters() if a.scratch or not n.startswith(("backbone.stem", "backbone.head"))
              and not any(n.startswith(f"backbone.blocks.{i}.") for i in range(nets.FROZEN_BLOCKS))]
    return net, params, xtr, xva


def aux_targets(data, cls=None, dm=None) -> None:
    """Per 8x8 cell of the 80x80 labels (the 10x10 grid of the trunk's 1/16 features):
    tire share, main-groove share and the mean local groove depth over tire pixels."""
    cls = data["cls"] if cls is None else cls
    dm = data["dmap"] if dm is None else dm
    n = len(cls)
    out = np.zeros((n, 3, 10, 10), np.float32)
    for i in range(0, n, 1000):
        c = cls[i:i + 1000].reshape(-1, 10, 8, 10, 8)
        d = dm[i:i + 1000].astype(np.float32).reshape(-1, 10, 8, 10, 8)
        tire = (c > 0).astype(np.float32)
        out[i:i + 1000, 0] = tire.mean((2, 4))
        out[i:i + 1000, 1] = (c >= 2).mean((2, 4))
        out[i:i + 1000, 2] = (d * tire).sum((2, 4)) / np.maximum(tire.sum((2, 4)), 1)
    data["aux"] = out


def aux_loss(a, t):
    """a: N x 3 x 10 x 10 logits/depth of the auxiliary head, t: targets of aux_targets."""
    share = F.binary_cross_entropy_with_logits(a[:, :2], t[:, :2])
    m = t[:, 0] > 0.25
    depth = (F.softplus(a[:, 2])[m] - t[:, 2][m]).abs().mean() if m.any() else torch.zeros(())
    return share + 0.3 * depth


AUX_W = 0.0


def batch_tread(net, x, idx, data, scratch, train):
    xb = x[idx]
    if scratch:
        xb = torch.from_numpy(pp.normalise(xb))
        f = net.early(xb)
    else:
        f = torch.from_numpy(xb.astype(np.float32))
    at = torch.from_numpy(data["aux"][idx]) if AUX_W > 0 and "aux" in data else None
    if train:
        if np.random.rand() < 0.5:
            f = torch.flip(f, dims=[3])
            at = torch.flip(at, dims=[3]) if at is not None else None
        f = F.dropout2d(f, 0.05)
    _depth_target["t"] = torch.from_numpy(data["min_depth"][idx])
    feat = net.features(f)
    out = net.heads(feat)
    loss, mae = tread_loss(out, torch.from_numpy(data["is_tire"][idx].astype(np.float32)),
                           torch.from_numpy(data["gate_w"][idx]), torch.from_numpy(data["has_depth"][idx]),
                           torch.from_numpy(data["wear"][idx]))
    if at is not None and train:
        loss = loss + AUX_W * aux_loss(net.aux(feat), at)
    return loss, mae


CLASS_W = torch.tensor([1.0, 1.0, 2.0, 8.0])


def lr_factor(frac: float, warmup: float) -> float:
    """The learning rate's share of its peak at `frac` of the budget: a linear rise over the first
    `warmup` share (none by default), then a cosine from 1 down to 0.02."""
    if frac < warmup:
        return 0.02 + 0.98 * frac / warmup
    rest = (frac - warmup) / (1 - warmup) if warmup < 1 else 1.0
    return 0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * rest))


def batch_seg(net, x, idx, data, train):
    xb = x[idx].astype(np.float32)
    cls = data["cls"][idx].astype(np.int64)
    dm = data["dmap"][idx].astype(np.float32)
    if train:
        flip = np.random.rand(len(idx)) < 0.5
        xb[flip] = xb[flip, :, ::-1]
        cls[flip] = cls[flip, :, ::-1]
        dm[flip] = dm[flip, :, ::-1]
        xb = xb * np.random.uniform(0.7, 1.3, (len(idx), 1, 1, 1)) + np.random.uniform(-20, 20, (len(idx), 1, 1, 1))
        xb = np.clip(xb, 0, 255)
    xt = torch.from_numpy(pp.normalise(xb))
    c_t, d_t = torch.from_numpy(np.ascontiguousarray(cls)), torch.from_numpy(np.ascontiguousarray(dm))
    logits, depth = net(xt)
    lc = F.cross_entropy(logits, c_t, weight=CLASS_W)
    m = c_t > 0
    ld = (depth[m] - d_t[m]).abs().mean() if m.any() else torch.zeros(())
    return lc + 0.3 * ld, float(ld)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=["tread", "seg"], required=True)
    ap.add_argument("--minutes", type=float, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "data"))
    ap.add_argument("--pretrained", default=os.path.join(os.path.dirname(__file__), "runs", "mbv2_nsfwjs.pt"))
    ap.add_argument("--scratch", action="store_true")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--twi-weight", type=float, default=8.0, help="cross-entropy weight of the TWI class (seg)")
    ap.add_argument("--resume", default=None, help="start from this checkpoint (a second cosine cycle)")
    ap.add_argument("--aux-weight", type=float, default=0.0,
                    help="tread: weight of the auxiliary dense loss (per-cell tire/groove share and groove depth)")
    ap.add_argument("--seed", type=int, default=0, help="shuffling, dropout and initialisation (members of an ensemble differ here)")
    ap.add_argument("--feature-cache", default=None,
                    help="tread: save the frozen trunk's features here once; runs over the same shards read them back")
    ap.add_argument("--frozen", type=int, default=nets.FROZEN_BLOCKS,
                    help="tread: MobileNetV2 blocks kept frozen (features cached once); fewer fine-tunes more")
    ap.add_argument("--train-split", default="train",
                    help="shards to train on (crop: renders cut to the tread, for the crop reader since 2026.11.9)")
    ap.add_argument("--val-split", default="val", help="shards that choose the checkpoint (cropval for the crop reader)")
    ap.add_argument("--freeze-bn", action="store_true",
                    help="keep every BatchNorm in eval mode while training (running statistics used, never "
                         "updated); for resuming a converged or unfolded network, whose statistics otherwise drift "
                         "toward those of dropout-perturbed batches and change the function even at a zero learning rate")
    ap.add_argument("--warmup", type=float, default=0.0,
                    help="share of the budget over which the learning rate rises linearly to its peak before the cosine "
                         "(for resuming a converged network: Adam's first steps at the peak move every weight at once)")
    a = ap.parse_args()
    nets.FROZEN_BLOCKS = a.frozen
    global AUX_W
    AUX_W = a.aux_weight
    torch.manual_seed(a.seed)
    np.random.seed(a.seed)
    torch.set_num_threads(a.threads)
    CLASS_W[3] = a.twi_weight
    os.makedirs(a.out, exist_ok=True)
    if a.model == "tread" and not a.scratch:
        t0 = time.time()
        sess = early_session(a.pretrained, a.out, a.threads)
        with open(a.pretrained, "rb") as f:
            trunk = hashlib.sha256(f.read()).hexdigest()[:12]
        tr = load_features(a.train_split, a.data, a.limit, sess, AUX_W > 0, a.feature_cache, trunk)
        va = load_features(a.val_split, a.data, None, sess, False, a.feature_cache, trunk)
        del sess
        print(f"features {tr['f'].shape} in {time.time() - t0:.0f}s", flush=True)
    else:
        tr, va = load(a.train_split, a.data, a.limit), load(a.val_split, a.data)
        if a.model == "tread" and AUX_W > 0:
            aux_targets(tr)
    print(f"train {len(tr['min_depth'])} val {len(va['min_depth'])}", flush=True)
    if a.model == "tread":
        net, params, xtr, xva = run_tread(a, tr, va)
        step = lambda idx, d, x, train: batch_tread(net, x, idx, d, a.scratch, train)
    else:
        net = SegNet()
        params = list(net.parameters())
        xtr, xva = tr["x"], va["x"]
        step = lambda idx, d, x, train: batch_seg(net, x, idx, d, train)
    if a.resume:
        nets.load_checkpoint(net, a.resume)
    opt = torch.optim.AdamW(params, lr=a.lr, weight_decay=5e-4)

    def validate():
        net.eval()
        vl, vm, vn = 0.0, 0.0, 0
        with torch.no_grad():
            for i in range(0, len(xva), 128):
                idx = np.arange(i, min(i + 128, len(xva)))
                loss, mae = step(idx, va, xva, False)
                vl, vm, vn = vl + float(loss) * len(idx), vm + mae * len(idx), vn + len(idx)
        return vl / vn, vm / vn

    best, epoch, log = float("inf"), 0, []
    if a.resume:
        # Epoch 0 is the starting point: a resumed run keeps it unless an epoch does better, so it
        # never ends worse on the validation split than where it began.
        vl, vm = validate()
        best = vl
        log.append({"epoch": 0, "t": 0, "val_loss": vl, "val_mae": vm})
        print(json.dumps(log[-1]), flush=True)
        torch.save(net.state_dict(), os.path.join(a.out, "best.pt"))
    budget = a.minutes * 60
    t0 = time.time()
    while time.time() - t0 < budget:
        net.train()
        if a.model == "tread" and not a.scratch:
            net.backbone.stem.eval()
            for b in net.backbone.blocks[:nets.FROZEN_BLOCKS]:
                b.eval()
        if a.freeze_bn:
            for mod in net.modules():
                if isinstance(mod, torch.nn.BatchNorm2d):
                    mod.eval()
        perm = np.random.permutation(len(xtr))
        tl, n = 0.0, 0
        for i in range(0, len(perm) - a.batch + 1, a.batch):
            frac = min(1.0, (time.time() - t0) / budget)
            for g in opt.param_groups:
                g["lr"] = a.lr * lr_factor(frac, a.warmup)
            loss, _ = step(np.sort(perm[i:i + a.batch]), tr, xtr, True)
            opt.zero_grad()
            loss.backward()
            opt.step()
            tl, n = tl + float(loss), n + 1
            if time.time() - t0 > budget:
                break
        vl, vm = validate()
        epoch += 1
        rec = {"epoch": epoch, "t": round(time.time() - t0), "train_loss": tl / max(n, 1), "val_loss": vl, "val_mae": vm}
        log.append(rec)
        print(json.dumps(rec), flush=True)
        if vl < best:
            best = vl
            torch.save(net.state_dict(), os.path.join(a.out, "best.pt"))
    json.dump(log, open(os.path.join(a.out, "log.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
