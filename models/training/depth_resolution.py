"""Does depth, like the bars, read better from finer renders? A diagnostic (twenty-sixth session,
2026-11-24; models/NOTEBOOK.md, Training, "Does depth read better from finer renders?"),
not part of train_all.sh.

twi_visibility.py found the 1.6 mm bars barely visible at the size of the photo-like renders the
crop reader is trained on (make_dataset.PHOTO_SIZES, 360-400 px on the long side) and mostly
visible at four times it. This asks the same of the depth itself, the
target the shipped model misses most (MAE 0.92 mm against 0.5): patches of main groove, an eighth
of the tread crop on a side, each labelled with its tire's shallowest depth, and the same small
network (twi_visibility.PatchNet: every patch folded to 32 x 32 cells, so each resolution costs the
network the same) regressing it. Every size gets the same photos' count, the same patches per
photo and the same steps. Photos are split into training and test by index; a test photo's
estimate is the mean of its patches' estimates. A patch sees one stretch of one groove, while the
label is the shallowest groove of the tire, so uneven wear puts a floor under every row's error;
the comparison between rows is what the diagnostic is for, not the figures' level.

The same scenes at three sizes (a seed draws the same scene at every size; the 4x folder is
twi_visibility.py's):

    python twi_dataset.py --count 1000 --seed-base 8400000 --out data/same1x --shard 250
    python twi_dataset.py --count 1000 --seed-base 8400000 --out data/same2x --shard 125 --photo-scale 2 --input 512
    python twi_dataset.py --count 1000 --seed-base 8400000 --out data/twi4x --shard 50 --photo-scale 4 --input 1024
    python depth_resolution.py --data data/same1x [--seed 6]
    python depth_resolution.py --data data/same2x [--seed 6]
    python depth_resolution.py --data data/twi4x [--seed 6]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
from twi_visibility import BASE, DEPTH_BINS, PatchNet, add_common_args, predict, prepare, tensor, train_epoch  # noqa: E402


def patches(d: dict, side: int, per_photo: int, rng: np.random.Generator):
    """(patch, depth, photo index): per_photo main-groove spots of every tire photo that has them."""
    xs, depths, photos = [], [], []
    size = d["x"].shape[1]
    cell = size // d["groove"].shape[1]
    half = side // 2
    padded = np.pad(d["x"], ((0, 0), (half, half), (half, half), (0, 0)), mode="reflect")
    for i in range(len(d["x"])):
        if not d["is_tire"][i]:
            continue
        cand = np.argwhere(d["groove"][i] > 0)
        if len(cand) < per_photo:
            continue
        for gy, gx in cand[rng.choice(len(cand), size=per_photo, replace=False)]:
            px, py = int(gx * cell + cell // 2), int(gy * cell + cell // 2)
            xs.append(padded[i, py:py + side, px:px + side])
        depths += [float(d["min_depth"][i])] * per_photo
        photos += [i] * per_photo
    return np.stack(xs), np.array(depths, dtype=np.float32), np.array(photos)


def report(name: str, pred: np.ndarray, truth: np.ndarray) -> str:
    err = np.abs(pred - truth)
    return f"{name} MAE {err.mean():.3f} mm, within 1 mm {100 * (err <= 1).mean():.1f} %"


def by_depth(pred: np.ndarray, truth: np.ndarray, bins, noun: str) -> None:
    """The report and the bias per band of true depth (also crop_resolution.py's)."""
    for lo, hi in bins:
        m = (truth >= lo) & (truth < hi)
        if m.any():
            print(f"  true depth {lo:.1f}-{hi:.1f} mm: {report(noun, pred[m], truth[m])}, "
                  f"bias {np.mean(pred[m] - truth[m]):+.3f} mm ({m.sum()} {noun}s)")


def main():
    ap = argparse.ArgumentParser()
    add_common_args(ap)
    ap.add_argument("--per-photo", type=int, default=8, help="groove patches per tire photo")
    a = ap.parse_args()
    d, side = prepare(ap, a)
    x, depth, photo = patches(d, side, a.per_photo, np.random.default_rng(a.seed))
    cut = int(len(d["x"]) * (1 - a.test_share))
    tr, te = photo < cut, photo >= cut
    print(f"{len(d['x'])} photos, crop {d['x'].shape[1]} px, patch {side} px: {tr.sum()} training patches "
          f"({len(np.unique(photo[tr]))} photos), {te.sum()} test ({len(np.unique(photo[te]))} photos)", flush=True)
    net = PatchNet(side // BASE)
    # Start the output at the training mean so the first epochs learn shape, not the offset.
    with torch.no_grad():
        net.head.bias.fill_(float(depth[tr].mean()))
    opt = torch.optim.AdamW(net.parameters(), lr=2e-3, weight_decay=1e-4)
    xtr, ytr = x[tr], torch.from_numpy(depth[tr])
    xte, yte, pte = tensor(x[te]), depth[te], photo[te]
    ids = np.unique(pte)
    photo_truth = np.array([yte[pte == p][0] for p in ids])
    base = float(np.median(depth[tr]))
    print(report("constant (training median) baseline: photo", np.full(len(ids), base), photo_truth), flush=True)
    end = time.time() + a.minutes * 60
    epoch, recent = 0, []
    while time.time() < end and epoch < a.epochs:
        loss = train_epoch(net, opt, xtr, ytr, F.smooth_l1_loss, end)
        epoch += 1
        pred = predict(net, xte)
        photo_pred = np.array([pred[pte == p].mean() for p in ids])
        recent = (recent + [float(np.abs(photo_pred - photo_truth).mean())])[-10:]
        print(f"epoch {epoch}: train loss {loss:.3f}, test {report('patch', pred, yte)}; "
              f"{report('photo', photo_pred, photo_truth)}", flush=True)
    # Only the last epochs are reported: nothing is chosen on the test photos.
    print(f"last epoch ({epoch}): {report('photo', photo_pred, photo_truth)} ({len(ids)} test photos); "
          f"photo MAE averaged over the last {len(recent)} epochs {np.mean(recent):.3f} mm (it swings by "
          f"0.1-0.2 mm from one epoch to the next)")
    by_depth(photo_pred, photo_truth, DEPTH_BINS, "photo")


if __name__ == "__main__":
    main()
