"""Train the TWI detector (nets.TwiNet) on twi_dataset.py shards, export twi.onnx, report.
The experiment of 2026-11-24 (nineteenth session), not shipped: models/NOTEBOOK.md, "A TWI detector
on the tread crop". Not part of train_all.sh; reproduced by

    python twi_dataset.py --count 1000 --seed-base 8100000 --out data/twival
    python twi_dataset.py --count 16000 --seed-base 8000000 --out data/twi
    python train_twi.py --data data/twi --val data/twival --threads 2 --minutes 55 --out runs/twi
    python train_twi.py --report runs/twi/twi.onnx --val data/twival [--rule '{"threshold": 0.9, ...}']
    python train_twi.py --report runs/twi/twi.onnx --val data/twival --heldout data/heldoutS

At twice the photo size (twenty-fourth session, also not better; models/NOTEBOOK.md, "The same at
twice the size"):

    python twi_dataset.py --count 10000 --seed-base 8200000 --out data/twi2x --shard 125 --photo-scale 2 --input 512
    python twi_dataset.py --count 1000 --seed-base 8300000 --out data/twival2x --shard 150 --photo-scale 2 --input 512
    python train_twi.py --data data/twi2x --val data/twival2x --threads 2 --batch 16 --minutes 62 --resume runs/twi2x/best.pt --out runs/twi2x10k
    python train_twi.py --report runs/twi2x10k/twi.onnx --val data/twival2x --rule '{"threshold": 0.5, "minCells": 4, "maxCells": 240, "ring": 0.5}'

(runs/twi2x is the pilot: the first 2 000 of those renders and the first 300 validation crops,
25 minutes from scratch.)

Loss: binary cross-entropy per cell, bars weighted TWI_POS_WEIGHT (about 0.5 % of the cells are
bars), the main-groove channel at GROOVE_WEIGHT. Flips (both axes) and brightness / contrast
jitter. The checkpoint kept is the one with the lowest validation loss; the export averages the
crop and its mirror image. The report counts bars by TWI_RULE: connected regions of cells above
the threshold, each confirmed where the groove channel lies on both sides of it along one axis,
against the bars visible in the render (twi_dataset: make_dataset.bar_count on the crop).
"""
from __future__ import annotations

import argparse
import glob
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
import nets  # noqa: E402
import preprocess as pp  # noqa: E402
from twi_dataset import TWI_INPUT  # noqa: E402

TWI_POS_WEIGHT = 20.0
GROOVE_WEIGHT = 0.5
# How bars are read off the maps (the rule the report applies; models/NOTEBOOK.md gives its figures
# at other thresholds too).
TWI_RULE = {"threshold": 0.5, "minCells": 2, "maxCells": 60, "ring": 0.5}


def load(folder: str, limit: int | None = None) -> dict:
    out: dict[str, list] = {}
    n = 0
    for p in sorted(glob.glob(os.path.join(folder, "twi_*.npz"))):
        with np.load(p) as z:
            for k in z.files:
                out.setdefault(k, []).append(z[k])
            n += len(z["bars"])
        if limit and n >= limit:
            break
    d = {k: np.concatenate(v) for k, v in out.items()}
    if limit:
        d = {k: v[:limit] for k, v in d.items()}
    return d


def batch(net, d, idx, train):
    xb = d["x"][idx].astype(np.float32)
    t = d["twi"][idx].astype(np.float32)
    g = d["groove"][idx].astype(np.float32)
    if train:
        for axis_x, axis_t in ((2, 2), (1, 1)):
            flip = np.random.rand(len(idx)) < 0.5
            xb[flip] = np.flip(xb[flip], axis_x)
            t[flip] = np.flip(t[flip], axis_t)
            g[flip] = np.flip(g[flip], axis_t)
        mean = xb.mean(axis=(1, 2, 3), keepdims=True)
        xb = (xb - mean) * np.random.uniform(0.7, 1.4, (len(idx), 1, 1, 1)) + mean
        xb = np.clip(xb + np.random.uniform(-20, 20, (len(idx), 1, 1, 1)), 0, 255)
    logits = net(torch.from_numpy(pp.normalise(xb)))
    tt, gt = torch.from_numpy(np.ascontiguousarray(t)), torch.from_numpy(np.ascontiguousarray(g))
    lt = F.binary_cross_entropy_with_logits(logits[:, 0], tt, pos_weight=torch.tensor(TWI_POS_WEIGHT))
    lg = F.binary_cross_entropy_with_logits(logits[:, 1], gt)
    return lt + GROOVE_WEIGHT * lg


def lr_factor(frac: float) -> float:
    return 0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * frac))


def export(net, path: str, size: int = TWI_INPUT):
    torch.onnx.export(nets.TwiNetExport(net.eval()), torch.zeros(1, 3, size, size), path, opset_version=17,
                      input_names=["input"], output_names=["twi"], dynamic_axes={"input": {0: "n"}, "twi": {0: "n"}},
                      dynamo=False)


def session(path: str, threads: int = 2):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def predict(s, x_u8: np.ndarray) -> np.ndarray:
    """The detector's maps of uint8 crops (N x side x side x 3), 64 at a time, with session `s`."""
    return np.concatenate([s.run(None, {"input": pp.normalise(x_u8[i:i + 64])})[0] for i in range(0, len(x_u8), 64)])


def count_bars(p: np.ndarray, rule: dict = TWI_RULE) -> list[dict]:
    """Bars in one crop's maps p (2 x side x side): 4-connected regions of TWI cells (probability above
    the rule's threshold), minCells..maxCells cells; confirmed when the main-groove channel exceeds
    `ring` (and is no bar) one or two cells beyond the region on both sides along one axis (a bar
    interrupts a groove)."""
    threshold, min_cells, max_cells, ring = rule["threshold"], rule["minCells"], rule["maxCells"], rule["ring"]
    twi, groove = p[0], p[1]
    side = twi.shape[0]
    on = twi > threshold
    seen = np.zeros_like(on)
    bars = []
    for start in zip(*np.nonzero(on)):
        if seen[start]:
            continue
        stack, cells = [start], []
        seen[start] = True
        while stack:
            y, x = stack.pop()
            cells.append((y, x))
            for ny, nx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                if 0 <= ny < side and 0 <= nx < side and on[ny, nx] and not seen[ny, nx]:
                    seen[ny, nx] = True
                    stack.append((ny, nx))
        if not (min_cells <= len(cells) <= max_cells):
            continue
        ys = np.array([c[0] for c in cells])
        xs = np.array([c[1] for c in cells])
        y0, y1, x0, x1 = ys.min(), ys.max(), xs.min(), xs.max()
        cy, cx = int(math.floor(ys.mean() + 0.5)), int(math.floor(xs.mean() + 0.5))  # Math.round

        def g(y, x):
            return 0 <= y < side and 0 <= x < side and groove[y, x] > ring and twi[y, x] <= threshold

        vertical = any(g(y0 - k, cx) for k in (1, 2)) and any(g(y1 + k, cx) for k in (1, 2))
        horizontal = any(g(cy, x0 - k) for k in (1, 2)) and any(g(cy, x1 + k) for k in (1, 2))
        bars.append({"cx": float(xs.mean()), "cy": float(ys.mean()), "cells": len(cells), "confirmed": vertical or horizontal})
    return bars


def bar_hits(probs: np.ndarray, twi: np.ndarray, rule: dict) -> dict:
    """Bar by bar: a bar found is right when the 3 x 3 cells around its centre touch a true bar
    cell (the true bars grown by one cell); recall is the share of the true bars (connected regions
    of the target) that a right, confirmed bar touches within two cells."""
    from scipy import ndimage as ndi
    found = right = confirmed = confirmed_right = 0
    hit, total = 0, 0
    for p, t in zip(probs, twi.astype(bool)):
        labels, n = ndi.label(t)
        total += n
        grown = ndi.binary_dilation(t, iterations=1)
        touched = set()
        for b in count_bars(p, rule):
            cy, cx = int(math.floor(b["cy"] + 0.5)), int(math.floor(b["cx"] + 0.5))
            ok = bool(grown[max(0, cy - 1):cy + 2, max(0, cx - 1):cx + 2].any())
            found, right = found + 1, right + ok
            if b["confirmed"]:
                confirmed, confirmed_right = confirmed + 1, confirmed_right + ok
                if ok:
                    touched |= set(labels[max(0, cy - 2):cy + 3, max(0, cx - 2):cx + 3].ravel().tolist()) - {0}
        hit += len(touched)
    r = lambda a, b: round(a / b, 3) if b else None  # noqa: E731
    return {"bars_found": found, "bar_precision": r(right, found), "bars_confirmed": confirmed,
            "confirmed_precision": r(confirmed_right, confirmed), "bar_recall": r(hit, total)}


def report(probs: np.ndarray, d: dict, rule: dict = TWI_RULE) -> dict:
    threshold = rule["threshold"]
    tire = d["is_tire"]
    pred = probs[:, 0] > threshold
    t = d["twi"].astype(bool)
    inter = (pred & t).sum()
    bars = [count_bars(p, rule) for p in probs]
    counts = np.array([sum(b["confirmed"] for b in bs) for bs in bars])
    found = np.array([len(bs) for bs in bars])
    true = d["bars"].astype(np.int64)
    r = lambda v: round(float(v), 3)  # noqa: E731
    with_bar, without = tire & (true > 0), tire & (true == 0)
    return {
        "images": int(len(true)), "tires": int(tire.sum()), "rule": rule,
        "cell_iou": r(inter / max(1, (pred | t).sum())), "cell_precision": r(inter / max(1, pred.sum())),
        "cell_recall": r(inter / max(1, t.sum())),
        "true_bars_mean": r(true[tire].mean()), "confirmed_mean": r(counts[tire].mean()), "found_mean": r(found[tire].mean()),
        "count_corr": r(np.corrcoef(counts[tire], true[tire])[0, 1]),
        "found_corr": r(np.corrcoef(found[tire], true[tire])[0, 1]),
        "count_exact": r((counts[tire] == true[tire]).mean()),
        "count_within_1": r((np.abs(counts[tire] - true[tire]) <= 1).mean()),
        "count_mae": r(np.abs(counts[tire] - true[tire]).mean()),
        "any_with_bar": r((counts[with_bar] > 0).mean()) if with_bar.any() else None,
        "any_without_bar": r((counts[without] > 0).mean()) if without.any() else None,
        "tires_without_bar": int(without.sum()),
        "any_non_tire": r((counts[~tire] > 0).mean()) if (~tire).any() else None,
        **bar_hits(probs, t, rule),
    }


def heldout(folder: str, onnx: str, seg: str, rule: dict, threads: int) -> dict:
    """The count as the app would have made it on a held-out folder (make_dataset.py --split heldout,
    whose labels.csv counts the bars visible in each render, twiBars): the shipped segmenter on the
    photo's frame, its box around the tread (preprocess.tread_box), the detector on that crop at its
    own input side."""
    import csv
    from finalize import crop_inputs, run
    rows = [r for r in csv.DictReader(open(os.path.join(folder, "labels.csv"))) if r["wear"] != "notire"]
    truth = np.array([int(r["twiBars"]) for r in rows])
    jpegs = [open(os.path.join(folder, r["file"]), "rb").read() for r in rows]
    probs, _ = run(seg, np.stack([pp.to_input_u8(pp.app_frame(j)) for j in jpegs]))
    s = session(onnx, threads)
    x, boxed = crop_inputs(jpegs, probs, pp.CROP, s.get_inputs()[0].shape[2])
    maps = predict(s, x)
    counts = np.array([sum(b["confirmed"] for b in count_bars(m, rule)) if ok else 0 for m, ok in zip(maps, boxed)])
    r = lambda v: round(float(v), 3)  # noqa: E731
    return {"tires": int(len(truth)), "rule": rule, "true_bars_mean": r(truth.mean()), "confirmed_mean": r(counts.mean()),
            "count_corr": r(np.corrcoef(counts, truth)[0, 1]), "count_exact": r((counts == truth).mean()),
            "any_with_bar": r((counts[truth > 0] > 0).mean()), "any_without_bar": r((counts[truth == 0] > 0).mean()),
            "tires_without_bar": int((truth == 0).sum())}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", help="training shards")
    ap.add_argument("--val", required=True, help="validation shards (checkpoint choice and report)")
    ap.add_argument("--minutes", type=float, default=45)
    ap.add_argument("--out", default=None)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--resume", default=None)
    ap.add_argument("--report", default=None, help="only report on --val with this twi.onnx")
    ap.add_argument("--rule", default=None, help="the reading rule as JSON (default TWI_RULE)")
    ap.add_argument("--heldout", default=None, help="with --report: a held-out folder read through the app's path instead")
    ap.add_argument("--seg", default=os.path.join(os.path.dirname(__file__), "..", "seg.onnx"), help="with --heldout")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    rule = json.loads(a.rule) if a.rule else TWI_RULE
    if a.report and a.heldout:
        print(json.dumps(heldout(a.heldout, a.report, a.seg, rule, a.threads), indent=1))
        return
    va = load(a.val)
    if a.report:
        print(json.dumps(report(predict(session(a.report, a.threads), va["x"]), va, rule), indent=1))
        return
    torch.manual_seed(a.seed)
    np.random.seed(a.seed)
    os.makedirs(a.out, exist_ok=True)
    tr = load(a.data, a.limit)
    print(f"train {len(tr['bars'])} val {len(va['bars'])}", flush=True)
    net = nets.TwiNet()
    if a.resume:
        net.load_state_dict(torch.load(a.resume))
    opt = torch.optim.AdamW(net.parameters(), lr=a.lr, weight_decay=5e-4)

    def validate():
        net.eval()
        tot = 0.0
        with torch.no_grad():
            for i in range(0, len(va["bars"]), 64):
                idx = np.arange(i, min(i + 64, len(va["bars"])))
                tot += float(batch(net, va, idx, False)) * len(idx)
        return tot / len(va["bars"])

    best, log, budget, t0, epoch = float("inf"), [], a.minutes * 60, time.time(), 0
    while time.time() - t0 < budget:
        net.train()
        perm = np.random.permutation(len(tr["bars"]))
        tl, n = 0.0, 0
        for i in range(0, len(perm) - a.batch + 1, a.batch):
            frac = min(1.0, (time.time() - t0) / budget)
            for grp in opt.param_groups:
                grp["lr"] = a.lr * lr_factor(frac)
            loss = batch(net, tr, np.sort(perm[i:i + a.batch]), True)
            opt.zero_grad()
            loss.backward()
            opt.step()
            tl, n = tl + loss.item(), n + 1
            if time.time() - t0 > budget:
                break
        vl = validate()
        epoch += 1
        log.append({"epoch": epoch, "t": round(time.time() - t0), "train_loss": tl / max(n, 1), "val_loss": vl})
        print(json.dumps(log[-1]), flush=True)
        if vl < best:
            best = vl
            torch.save(net.state_dict(), os.path.join(a.out, "best.pt"))
    json.dump(log, open(os.path.join(a.out, "log.json"), "w"), indent=1)
    net.load_state_dict(torch.load(os.path.join(a.out, "best.pt")))
    path = os.path.join(a.out, "twi.onnx")
    export(net, path, tr["x"].shape[1])
    print(json.dumps(report(predict(session(path, a.threads), va["x"]), va, rule), indent=1), flush=True)


if __name__ == "__main__":
    main()
