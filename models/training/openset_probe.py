"""Would distance from every real tire photo refuse scenes the gate never saw? (models/NOTEBOOK.md,
"Distance from the tire photos"; measuring only)

    python openset_probe.py [--k 5] [--dim 64]

For each set left out (runs/loso/SET/pred.npz, train_real.py --exclude SET), the real tire photos
the head trained on (web-good-defective, tyre-defect-ccby, vehicles-wheels' vehicles and wheels;
every plain view) are the reference: their cached features (real_cache.py) standardised and held
within +-3 as the head reads them, projected on the reference's first DIM principal directions.
A photo's distance is the mean distance to its K nearest reference views (its own photo's views
left out). The threshold is a quantile of the reference photos' own distances, each photo's fold
group left out. A photo is refused as no tire when the held-out head refuses it (its thresholds,
calibration.scene noTire and notVisible) or when it lies beyond the threshold. Printed: the
left-out set's refusals before -> after, and michelin-twi's (never trained on). Nothing is written.
"""
import argparse
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TIRE_SETS = ("web-good-defective", "tyre-defect-ccby", "vehicles-wheels")


def knn_mean(q, ref, k, qkey, rkey, qgroup=None, rgroup=None):
    out = np.empty(len(q), np.float32)
    rn = (ref**2).sum(1)
    for i in range(0, len(q), 512):
        d = (q[i : i + 512] ** 2).sum(1)[:, None] + rn[None] - 2 * q[i : i + 512] @ ref.T
        d[qkey[i : i + 512, None] == rkey[None]] = np.inf
        if qgroup is not None:
            d[qgroup[i : i + 512, None] == rgroup[None]] = np.inf
        out[i : i + 512] = np.sqrt(np.maximum(np.partition(d, k, 1)[:, :k], 0)).mean(1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--no-tire", type=float, default=0.45)
    ap.add_argument("--not-visible", type=float, default=0.74)
    a = ap.parse_args()
    cs = [np.load(os.path.join(HERE, "data", f + ".npz"), allow_pickle=True) for f in ("cache_real", "cache_deb2", "cache_renders")]
    feats = np.concatenate([c["feats"] for c in cs]).astype(np.float32)

    def col(k):
        return np.concatenate([c[k] for c in cs])

    key, view, deg, scene, kind, group = col("key"), col("view"), col("degraded"), col("scene"), col("kind"), col("group")
    setname = np.concatenate([np.asarray(c["sets"])[c["setid"]] for c in cs])
    print(f"k {a.k}, {a.dim} principal directions")
    print("| left out | photos | refused by the held-out head | + beyond the 95th / 98th / 99th percentile | michelin-twi refused (never trained on) |")
    print("|---|---|---|---|---|")
    for held in ("vehicles-wheels", "debian-photos", "web-good-defective", "tyre-defect-ccby"):
        pr = np.load(os.path.join(HERE, "runs", "loso", held, "pred.npz"), allow_pickle=True)
        assert (pr["sample"] == key).all(), "the caches are not the ones the held-out head read"
        p = pr["pred"][:, :3]  # the scene probabilities (train_real.predict)
        refused = (p[:, 2] >= a.no_tire) | (p[:, 1] >= a.not_visible)
        ref = np.isin(setname, TIRE_SETS) & (setname != held) & ~deg & (scene <= 1)
        mu, sd = feats[ref].mean(0), feats[ref].std(0) + 1e-3
        zf = np.clip((feats - mu) / sd, -3, 3)
        vt = np.linalg.svd(zf[ref][::2], full_matrices=False)[2][: a.dim]
        pz = zf @ vt.T
        rq = ref & (view == 0)
        cut = np.quantile(knn_mean(pz[rq], pz[ref], a.k, key[rq], key[ref], group[rq], group[ref]), [0.95, 0.98, 0.99])
        plain = (view == 0) & ~deg

        def row(m):
            d = knn_mean(pz[m], pz[ref], a.k, key[m], key[ref])
            return f"{refused[m].mean():.1%}", " / ".join(f"{(refused[m] | (d > t)).mean():.1%}" for t in cut)

        parts = [(f"{held} ({k})", plain & (setname == held) & (kind == k)) for k in np.unique(kind[plain & (setname == held)])]
        mich = row(plain & (setname == "michelin-twi"))
        for name, m in parts:
            before, after = row(m)
            print(f"| {name.replace(' ()', '')} | {int(m.sum())} | {before} | {after} | {mich[0]} → {mich[1]} |", flush=True)


if __name__ == "__main__":
    main()
