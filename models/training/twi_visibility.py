"""Can the TWI bars be seen in the renders at all? A diagnostic (twenty-fifth session, 2026-11-24;
models/NOTEBOOK.md, Training, "Are the bars visible at all?"), not part of train_all.sh.

Two detectors trained on whole tread crops (train_twi.py, at the renders' own size and at twice
it) never told photos with bars from photos without. This asks the simpler question underneath:
given a patch of a main groove, centred either on a bar or on a stretch of the same groove without
one, in the same photo, can a small network tell which? The patches come from twi_dataset.py
shards (the tread crop and its bar and groove maps on a quarter-size grid): one patch per bar
(each connected bar region's centre) and as many from that photo's main-groove cells at least
MIN_GAP cells from any bar. Pairs from one photo share its light, camera, depth and tone, so only
the bar itself can separate them. Photos are split into training and test by index, so no photo
has patches on both sides. The report gives the test AUC overall and by the tire's shallowest
depth (a bar is 1.6 mm tall: on a new tire it sits 6 mm down a dark groove, on a worn one it is
nearly flush).

    python twi_dataset.py --count 2000 --seed-base 8200000 --out data/twi2x --shard 125 --photo-scale 2 --input 512
    python twi_dataset.py --count 2000 --seed-base 8000000 --out data/twi1x --shard 250
    python twi_dataset.py --count 1000 --seed-base 8400000 --out data/twi4x --shard 50 --photo-scale 4 --input 1024
    python twi_visibility.py --data data/twi1x --limit 1000
    python twi_visibility.py --data data/twi2x --limit 1000
    python twi_visibility.py --data data/twi4x --limit 1000
    python twi_visibility.py --data data/twi4x --limit 1000 --max-train 5762   # the 1x run's patch count
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import cv2
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
import preprocess as pp  # noqa: E402
from real_report import auc  # noqa: E402
from train_twi import load  # noqa: E402

MIN_GAP = 6  # grid cells between a negative patch's centre and the nearest bar cell
DEPTH_BINS = [(0.0, 2.5), (2.5, 4.0), (4.0, 6.0), (6.0, 99.0)]


def patches(d: dict, side: int, rng: np.random.Generator):
    """(patch, label, depth, photo index) for every bar and as many bar-free groove spots."""
    xs, ys, depths, photos = [], [], [], []
    size = d["x"].shape[1]
    cell = size // d["twi"].shape[1]
    half = side // 2
    padded = np.pad(d["x"], ((0, 0), (half, half), (half, half), (0, 0)), mode="reflect")
    for i in range(len(d["x"])):
        if not d["is_tire"][i]:
            continue
        twi = d["twi"][i].astype(np.uint8)
        n, _, _, cent = cv2.connectedComponentsWithStats(twi, connectivity=8)
        if n <= 1:
            continue
        far = cv2.distanceTransform(1 - twi, cv2.DIST_L2, 3) >= MIN_GAP
        cand = np.argwhere((d["groove"][i] > 0) & far)
        if len(cand) == 0:
            continue
        bars = cent[1:]  # (x, y) in grid cells
        negs = cand[rng.choice(len(cand), size=min(len(bars), len(cand)), replace=False)]
        for (cx, cy) in bars:
            px, py = int(round(cx * cell + cell / 2)), int(round(cy * cell + cell / 2))
            xs.append(padded[i, py:py + side, px:px + side])
            ys.append(1)
        for (gy, gx) in negs:
            px, py = int(gx * cell + cell // 2), int(gy * cell + cell // 2)
            xs.append(padded[i, py:py + side, px:px + side])
            ys.append(0)
        k = len(bars) + len(negs)
        depths += [float(d["min_depth"][i])] * k
        photos += [i] * k
    return np.stack(xs), np.array(ys), np.array(depths), np.array(photos)


BASE = 32  # every patch is folded to BASE x BASE cells before the network (space to depth)


class PatchNet(nn.Module):
    """The same network and the same cost per patch at every resolution: a patch of side
    f * BASE is folded losslessly into BASE x BASE cells of 3 f^2 values (pixel unshuffle), so a
    finer render gives the network more detail, not more work."""

    def __init__(self, fold: int):
        super().__init__()
        self.fold = fold
        chans = [3 * fold * fold, 24, 48, 96, 128]
        self.convs = nn.ModuleList(
            nn.Sequential(nn.Conv2d(a, b, 3, padding=1, bias=False), nn.BatchNorm2d(b), nn.ReLU(inplace=True),
                          nn.Conv2d(b, b, 3, padding=1, bias=False), nn.BatchNorm2d(b), nn.ReLU(inplace=True))
            for a, b in zip(chans[:-1], chans[1:]))
        self.head = nn.Linear(chans[-1], 1)

    def forward(self, x):
        if self.fold > 1:
            x = F.pixel_unshuffle(x, self.fold)
        for i, c in enumerate(self.convs):
            x = c(x)
            if i < len(self.convs) - 1:
                x = F.max_pool2d(x, 2)
        return self.head(x.mean((2, 3))).squeeze(1)


def tensor(x: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(pp.normalise(x))


def augment(x: np.ndarray) -> np.ndarray:
    x = x.copy()
    f = np.random.rand(len(x)) < 0.5
    x[f] = x[f, :, ::-1]
    f = np.random.rand(len(x)) < 0.5
    x[f] = x[f, ::-1]
    f = np.random.rand(len(x)) < 0.5
    x[f] = np.transpose(x[f], (0, 2, 1, 3))
    return x


def train_epoch(net: nn.Module, opt, x: np.ndarray, y: torch.Tensor, loss_fn, end: float) -> float:
    """One pass over (x, y) in shuffled batches of 64, flips and transposes on; stops early at
    time `end`. Returns the mean training loss."""
    net.train()
    perm = np.random.permutation(len(x))
    total, seen = 0.0, 0
    for s in range(0, len(perm), 64):
        idx = perm[s:s + 64]
        loss = loss_fn(net(tensor(augment(x[idx]))), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += float(loss.detach()) * len(idx)
        seen += len(idx)
        if time.time() > end:
            break
    return total / max(seen, 1)


def predict(net: nn.Module, x: torch.Tensor) -> np.ndarray:
    net.eval()
    with torch.no_grad():
        return torch.cat([net(x[s:s + 256]) for s in range(0, len(x), 256)]).numpy()


def add_common_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--data", required=True)
    ap.add_argument("--epochs", type=int, default=60)
    ap.add_argument("--minutes", type=float, default=60, help="a cap on the training time")
    ap.add_argument("--limit", type=int, default=0, help="use the first N photos only")
    ap.add_argument("--side", type=int, default=0, help="patch side in px (default: an eighth of the crop)")
    ap.add_argument("--test-share", type=float, default=0.2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=5)


def prepare(ap: argparse.ArgumentParser, a: argparse.Namespace) -> tuple[dict, int]:
    """Threads and seeds set, the shards loaded; returns them and the patch side."""
    if a.minutes <= 0 or a.epochs < 1:  # the reports need at least one epoch
        ap.error("--minutes must be above 0 and --epochs at least 1")
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    np.random.seed(a.seed)
    d = load(a.data, a.limit or None)
    side = a.side or d["x"].shape[1] // 8
    if side % BASE:
        ap.error(f"the patch side must be a multiple of {BASE}")
    return d, side


def main():
    ap = argparse.ArgumentParser()
    add_common_args(ap)
    ap.add_argument("--max-train", type=int, default=0,
                    help="at most N training patches (a random subset), for equal data across resolutions")
    a = ap.parse_args()
    d, side = prepare(ap, a)
    x, y, depth, photo = patches(d, side, np.random.default_rng(a.seed))
    cut = int(len(d["x"]) * (1 - a.test_share))
    tr, te = photo < cut, photo >= cut
    if a.max_train and tr.sum() > a.max_train:
        keep = np.random.default_rng(a.seed).choice(np.flatnonzero(tr), a.max_train, replace=False)
        tr = np.zeros_like(tr)
        tr[keep] = True
    print(f"{len(d['x'])} photos, crop {d['x'].shape[1]} px, patch {side} px: "
          f"{tr.sum()} training patches ({y[tr].mean():.2f} bars), {te.sum()} test ({y[te].mean():.2f} bars)", flush=True)
    net = PatchNet(side // BASE)
    opt = torch.optim.AdamW(net.parameters(), lr=2e-3, weight_decay=1e-4)
    xtr, ytr = x[tr], torch.from_numpy(y[tr].astype(np.float32))
    xte = tensor(x[te])
    end = time.time() + a.minutes * 60
    epoch, best = 0, (0.0, None)
    while time.time() < end and epoch < a.epochs:
        loss = train_epoch(net, opt, xtr, ytr, F.binary_cross_entropy_with_logits, end)
        epoch += 1
        score = predict(net, xte)
        a_all = auc(score, y[te])
        print(f"epoch {epoch}: train loss {loss:.3f}, test AUC {a_all:.3f}", flush=True)
        if a_all > best[0]:
            best = (a_all, score)
    yt, dt = y[te], depth[te]
    # The last epoch's figures are the honest ones; the best epoch is chosen on the test patches
    # themselves, so it is an upper bound.
    for name, (a_val, sc) in (("last epoch", (a_all, score)), ("best epoch (chosen on test)", best)):
        print(f"{name}: test AUC {a_val:.3f} ({(yt == 1).sum()} bars, {(yt == 0).sum()} groove spots without)")
        for lo, hi in DEPTH_BINS:
            m = (dt >= lo) & (dt < hi)
            print(f"  shallowest depth {lo:.1f}-{hi:.1f} mm: AUC {auc(sc[m], yt[m]):.3f} "
                  f"({(yt[m] == 1).sum()} bars, {(yt[m] == 0).sum()} without)")


if __name__ == "__main__":
    main()
