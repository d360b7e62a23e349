"""How well the shipped segmenter separates tread, main grooves and TWI bars (model card figures).

    python seg_report.py [--models ../] [--split cal]

Per-class IoU, precision and recall over the 80 x 80 label cells of a split, and the segmenter as an image-level TWI
detector: the share of images with a TWI bar in their labels where at least one cell is called
TWI, and the share of images without one where a cell is (false alarms). And whether the dense
depth map's pattern within one photo follows the true one (what the depth heat map shows): over the
cells that are tread in truth and for the segmenter, in the images whose true depth varies across
the tread (standard deviation >= 0.3 mm, at least 50 cells), the mean correlation of map and truth.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from finalize import run  # noqa: E402
from train import load  # noqa: E402

CLASSES = ["background", "tread", "main_groove", "twi"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--split", default="cal")
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "data"))
    ap.add_argument("--limit", type=int, default=None, help="the split's first N images")
    a = ap.parse_args()
    d = load(a.split, a.data, a.limit)
    probs, depth = run(os.path.join(a.models, "seg.onnx"), d["x"])
    pred = probs.argmax(1)
    cls = d["cls"].astype(np.int64)
    assert pred.shape == cls.shape, (pred.shape, cls.shape)
    iou, precision, recall = {}, {}, {}
    r3 = lambda num, den: round(float(num / den), 3) if den else None  # noqa: E731
    for k, name in enumerate(CLASSES):
        inter = np.logical_and(pred == k, cls == k).sum()
        iou[name] = r3(inter, np.logical_or(pred == k, cls == k).sum())
        precision[name] = r3(inter, (pred == k).sum())  # of the cells called k, the share that are k
        recall[name] = r3(inter, (cls == k).sum())  # of the cells that are k, the share called k
    has_bar = (cls == 3).reshape(len(cls), -1).any(1)
    fired = (pred == 3).reshape(len(pred), -1).any(1)
    report = {
        "split": a.split,
        "images": int(len(cls)),
        "iou": iou,
        "precision": precision,
        "recall": recall,
        "images_with_bar": int(has_bar.sum()),
        "twi_fires_with_bar": round(float(fired[has_bar].mean()), 3) if has_bar.any() else None,
        "twi_fires_without_bar": round(float(fired[~has_bar].mean()), 3) if (~has_bar).any() else None,
    }
    report["depth_map_within_image"] = within_image(probs, depth.reshape(cls.shape), cls, d["dmap"])
    print(json.dumps(report, indent=1))


def within_image(probs, depth, cls, truth, min_sd=0.3, min_cells=50):
    """The dense map against the true depth cell by cell inside each photo (not its level)."""
    tread = (cls >= 1) & (probs[:, 1:].sum(1) > 0.5)
    cors, sd_true, sd_map, considered = [], [], [], 0
    for i in range(len(cls)):
        m = tread[i] & np.isfinite(truth[i])
        if m.sum() < min_cells:
            continue
        considered += 1
        t, p = truth[i][m].astype(np.float64), depth[i][m].astype(np.float64)
        if t.std() < min_sd or p.std() == 0:
            continue
        cors.append(np.corrcoef(t, p)[0, 1])
        sd_true.append(t.std())
        sd_map.append(p.std())
    r = lambda v: round(float(np.mean(v)), 3) if v else None  # noqa: E731
    return {"images": considered, "images_varying": len(cors), "correlation": r(cors),
            "true_sd_mm": r(sd_true), "map_sd_mm": r(sd_map)}


if __name__ == "__main__":
    main()
