"""Does a shop's own reader carry to photos taken another way? (docs/CALIBRATION.md; measuring only)

    python reader_conditions.py [--cache data/cache_real.npz] [--realdata ../../../shared/realdata]

michelin-twi's photos by flash, in sunlight, from above and in ambient light, each read by the
reader's recipe (src/core/analysis/shop-reader.ts: features standardised over the fitting photos and
held within +-3, ridge in its dual form; here with the penalty fixed at 0.3 x the feature count, the
middle of the app's three) fitted on the other capture days (a) with every kind of photo, (b) with
none taken that way. Also how many of them the reader calls unlike its photos (squared distance off
the plane of the fitting photos' first 10 principal directions above their 99th percentile). The
features are the training cache's plain views (real_cache.py), not read through the app; the gauge
is realdata/README.md's approximation 1.6 + pct/100 x (7.5 - 1.6) mm. Nothing is written: michelin-twi
may be measured, not trained on.
"""
import argparse
import csv
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import train_real as tr  # noqa: E402
from real_report import auc, spearman  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", default=os.path.join(HERE, "data", "cache_real.npz"))
    ap.add_argument("--realdata", default=os.path.join(HERE, "..", "..", "..", "shared", "realdata"))
    a = ap.parse_args()
    c = tr.load_caches([a.cache])
    m = (c["setname"] == "michelin-twi") & (c["view"] == 0) & ~c["degraded"]
    F = c["feats"][m].astype(np.float64)
    pct = c["pct"][m]
    with open(os.path.join(a.realdata, "michelin-twi", "labels.csv")) as f:
        lab = {r["file"].split("/")[-1]: r for r in csv.DictReader(f)}
    names = [k.split(":")[1].split("/")[-1] for k in c["sample"][m]]
    fold = np.array([int(lab[n]["fold"]) for n in names])
    light = np.array([lab[n]["light"] for n in names])
    pose = np.array([lab[n]["pose"] for n in names])
    y = 1.6 + pct / 100 * (7.5 - 1.6)
    flagged = np.zeros(len(y), bool)

    def fit_predict(fit, read):
        mu, sd = F[fit].mean(0), F[fit].std(0) + 1e-3
        Z, Zr = np.clip((F[fit] - mu) / sd, -3, 3), np.clip((F[read] - mu) / sd, -3, 3)
        yf = y[fit]
        alpha = np.linalg.solve(Z @ Z.T + 0.3 * Z.shape[1] * np.eye(len(yf)), yf - yf.mean())
        centre = Z.mean(0)
        P = np.linalg.svd(Z - centre, full_matrices=False)[2][:10]

        def spread(A):
            d = A - centre
            return ((d**2).sum(1) - ((d @ P.T) ** 2).sum(1)) / A.shape[1]

        flagged[read] = spread(Zr) > np.quantile(spread(Z), 0.99)
        return Zr @ (Z.T @ alpha) + yf.mean()

    print("| photos | n | regime | Spearman | ends AUC | mean error | median error | flagged unlike |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    for name, cond in [("by flash", light == "flash"), ("in sunlight", light == "soleil"), ("from above", pose == "dessus"),
                       ("in ambient light", light == "lumiereAmbiante")]:
        for regime in ("a: every kind", "b: none taken that way"):
            pred = np.full(len(y), np.nan)
            for k in range(5):
                read = (fold == k) & cond
                if read.any():
                    pred[read] = fit_predict((fold != k) if regime.startswith("a") else ((fold != k) & ~cond), read)
            ends = cond & ((pct <= 25) | (pct >= 75))
            e = auc(pred[ends], (pct[ends] >= 75).astype(int)) if len(set(pct[ends] >= 75)) == 2 else float("nan")
            err = pred[cond] - y[cond]
            print(f"| {name} | {cond.sum()} | {regime} | {spearman(pred[cond], pct[cond]):.3f} | {e:.3f} | {np.abs(err).mean():.2f} mm "
                  f"| {np.median(err):+.2f} mm | {100 * flagged[cond].mean():.1f} % |", flush=True)


if __name__ == "__main__":
    main()
