"""Out-of-fold readings of the scene reader as the app runs it since tread-2026.11.29: each photo read
as it is and mirrored, the two readings averaged (export_real.py --mirror), by the fold model that did
not learn from it (the head of runs/cv/foldK and, where given, the wear branch of runs/wear/foldK);
with --zoom N (since tread-2026.11.29.6) also the photo zoomed out N times and that copy's mirror image,
weighed by the fold's support (runs/cv/foldK/support.pt, support_head.py), as export_real.py --zoom.

    python mirror_oof.py --cv runs/cv --wear runs/wear --zoom 3 --out runs/cv_mirror

The photos are the app's view (view 0) of every photo in the folds' pred.npz, decoded again from the
paths their keys hold (real_cache.load: the app's frame, mirror-extended to 4:3, 160 x 160). It
writes OUT/foldK/pred.npz (the view-0 rows, the same columns as train_real.py's, each photo's reading
in every fold file: finalize_real.out_of_fold keeps fold K's) and train.json, so that
finalize_real.py --cv OUT fits the constants on what the shipped graph computes.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from multiprocessing import Pool

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
import preprocess as pp  # noqa: E402
from export_real import build  # noqa: E402
import real_data as rd  # noqa: E402
from real_cache import app_view, load  # noqa: E402


def view0(job):
    """The app's view of one photo from its key (set:path:box), or None if it no longer decodes."""
    i, key = job
    _, path, box, _ = rd.split_key(key)
    try:
        return i, app_view(load(path, box))
    except Exception:  # noqa: BLE001 - reported by the caller
        return i, None


@torch.no_grad()
def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cv", required=True, help="train_real.py --fold K runs (fold0 … fold4)")
    ap.add_argument("--wear", default="", help="wear_branch.py train --fold K runs (fold0 … fold4)")
    ap.add_argument("--pretrained", default="runs/mbv2_nsfwjs.pt")
    ap.add_argument("--zoom", type=int, default=0, help="the worn logit also reads the photo zoomed out (export_real.py --zoom; since tread-2026.11.29.6)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(2)
    z = dict(np.load(os.path.join(a.cv, "fold0", "pred.npz")))
    rows = np.flatnonzero((z["view"] == 0) & ~z["degraded"])
    sub = {k: v[rows] for k, v in z.items() if k != "pred"}
    pred = np.full((len(rows), z["pred"].shape[1]), np.nan, np.float32)
    t0 = time.time()
    failed = 0
    for k in range(5):
        wear = os.path.join(a.wear, f"fold{k}", "branch.pt") if a.wear else ""
        # the zoomed-out reading is weighed by the fold's support (support_head.py, run before this)
        support = os.path.join(a.cv, f"fold{k}", "support.pt") if a.zoom else ""
        net = build(a.pretrained, os.path.join(a.cv, f"fold{k}", "top.pt"), wear, mirror=True, support=support, zoom=a.zoom)
        mine = np.flatnonzero([g.endswith(str(k)) for g in sub["group"]])
        jobs = [(int(i), str(sub["sample"][i])) for i in mine]
        buf: list[tuple[int, np.ndarray]] = []

        def flush():
            if buf:
                x = torch.from_numpy(pp.normalise(np.stack([u for _, u in buf])))
                probs, worn, depth, sigma, logit = (t.numpy() for t in net(x)[:5])
                at = [i for i, _ in buf]
                pred[at] = np.concatenate([probs, worn[:, None], depth[:, None], sigma[:, None], logit[:, None]], 1)
                buf.clear()

        with Pool(a.workers) as pool:
            for i, u8 in pool.imap_unordered(view0, jobs, chunksize=8):
                if u8 is None:
                    failed += 1
                    continue
                buf.append((i, u8))
                if len(buf) >= 64:
                    flush()
        flush()
        print(f"fold {k}: {len(mine)} photos read ({time.time() - t0:.0f} s)", flush=True)
    for k in range(5):
        run = os.path.join(a.out, f"fold{k}")
        os.makedirs(run, exist_ok=True)
        np.savez(os.path.join(run, "pred.npz"), pred=pred, **sub)
        with open(os.path.join(run, "train.json"), "w") as f:
            json.dump({"fold": k, "mirror": True, "zoom": a.zoom, "head": os.path.join(a.cv, f"fold{k}"), "wear": a.wear or None}, f, indent=1)
    print(f"wrote {a.out}: {len(rows)} photos, {failed} no longer decode, {time.time() - t0:.0f} s")
    if failed:
        print("WARNING: photos that did not decode keep no reading (nan): the constants leave them out")


if __name__ == "__main__":
    main()
