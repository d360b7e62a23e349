"""What a trained scene reader's predictions (train_real.py's pred.npz) say, set by set, on each
photo's plain view (the app's own input). For choosing between runs; the model card's figures come
from the app itself (`npm run eval -- --real`), which reads the exported networks.

    python real_report.py runs/real_no_web [--sets web-good-defective]
"""
from __future__ import annotations

import argparse
import os

import numpy as np


def spearman(a, b):
    """Rank correlation with average ranks for ties on both sides. (Until 2026.11.28.2 only `b`'s ties
    were averaged: the 700-odd michelin-twi photos whose float P(worn) is exactly 1 were then ranked
    by file order, which inflated the figure; the notebook says where.)"""
    from scipy.stats import rankdata

    return float(np.corrcoef(rankdata(a), rankdata(b))[0, 1])


def auc(score, label) -> float:
    """The chance that a photo labelled 1 scores above one labelled 0, ties counting half (average ranks)."""
    from scipy.stats import rankdata

    y = np.asarray(label).astype(bool)
    n1, n0 = int(y.sum()), int((~y).sum())
    if n1 == 0 or n0 == 0:
        return float("nan")  # no pair to compare
    r = rankdata(np.asarray(score, dtype=np.float64))
    return float((r[y].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def bal_acc(truth, said):
    pos, neg = truth == 1, truth == 0
    if not pos.any() or not neg.any():
        return float("nan")
    return 0.5 * (said[pos].mean() + (~said[neg]).mean())


def report(run: str, only: list[str] | None = None, worn_from: str = "depth") -> dict:
    z = np.load(os.path.join(run, "pred.npz"))
    pred = z["pred"]
    plain = (z["view"] == 0) & ~z["degraded"]
    scene = pred[:, :3].argmax(1)
    depth, pworn = pred[:, 4], pred[:, 3]
    said_worn = depth < 3.0 if worn_from == "depth" else pworn > 0.5
    out = {}
    for s in sorted(set(z["setname"].tolist())):
        if only and s not in only:
            continue
        m = plain & (z["setname"] == s)
        r: dict = {"n": int(m.sum())}
        if s in ("web-good-defective", "tyre-defect-ccby", "michelin-twi"):
            r["refused"] = float((scene[m] != 0).mean())
            r["refused_no_tire"] = float((scene[m] == 2).mean())
        ans = m & (scene == 0)
        if s == "web-good-defective":
            r["ba_depth"] = bal_acc(z["worn"][ans], depth[ans] < 3.0)
            r["ba_pworn"] = bal_acc(z["worn"][ans], pworn[ans] > 0.5)
            w = ans & (z["worn"] == 1)
            r["dangerous"] = float(((depth[w] >= 3.0) & (pworn[w] < 0.2)).mean()) if w.any() else float("nan")
        if s == "michelin-twi":
            a = m  # every photo, answered or not, for the order
            r["spearman_depth"] = spearman(depth[a], z["pct"][a])
            r["spearman_pworn"] = spearman(-pworn[a], z["pct"][a])
            e = ans & (z["worn"] >= 0)
            r["ends_ba_depth"] = bal_acc(z["worn"][e], depth[e] < 3.0)
            r["ends_ba_pworn"] = bal_acc(z["worn"][e], pworn[e] > 0.5)
        if s == "vehicles-wheels":
            for k in ("vehicle", "wheel", "outside"):
                mk = m & (z["kind"] == k)
                r[k] = {"n": int(mk.sum()), "tread": float((scene[mk] == 0).mean()), "not_visible": float((scene[mk] == 1).mean()),
                        "no_tire": float((scene[mk] == 2).mean())}
        if s == "debian-photos":
            r["refused"] = float((scene[m] != 0).mean())
            r["no_tire"] = float((scene[m] == 2).mean())
        if s == "renders":
            t = m & ~np.isnan(z["depth"])
            r["tires_refused"] = float((scene[t] != 0).mean())
            r["mae"] = float(np.abs(depth[t] - z["depth"][t]).mean())
            nt = m & np.isnan(z["depth"])
            r["negatives_refused"] = float((scene[nt] != 0).mean()) if nt.any() else float("nan")
        out[s] = r
    d = z["degraded"] & ((only is None) | np.isin(z["setname"], only or []))
    if d.any():
        out["degraded"] = {"n": int(d.sum()), "not_visible": float((scene[d] == 1).mean()), "no_tire": float((scene[d] == 2).mean())}
    return out


def fmt(r: dict) -> str:
    lines = []
    for s, v in r.items():
        parts = []
        for k, x in v.items():
            if isinstance(x, dict):
                parts.append(f"{k}[" + " ".join(f"{kk}={vv:.3f}" if isinstance(vv, float) else f"{kk}={vv}" for kk, vv in x.items()) + "]")
            else:
                parts.append(f"{k}={x:.3f}" if isinstance(x, float) else f"{k}={x}")
        lines.append(f"{s}: " + " ".join(parts))
    return "\n".join(lines)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("--sets", default="")
    a = ap.parse_args()
    print(fmt(report(a.run, a.sets.split(",") if a.sets else None)))
