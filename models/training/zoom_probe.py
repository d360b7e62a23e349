"""Does reading a zoomed-out copy of the photo help the worn logit? (tread-2026.11.29.6; measured with
the five fold models, as the app runs them; models/NOTEBOOK.md, "Reading close-ups zoomed out").

    python zoom_probe.py --cv runs/cv --wear runs/wear

Each photo of web-good-defective and michelin-twi (the app's view, real_cache.app_view) is read by
its fold's head, wear branch and support (export_real.build, mirror on): as it is, mirrored, and zoomed
out 2 and 3 times (export_real.zoomed_out: tiled with its mirror images, box-filtered back to 160 px)
and the 3x copy mirrored; the shipped reading (export_real.py --zoom 3) moves the photo's toward the
3x copy and its mirror image's by what the support lacks. The
web photos are scored out of fold (usable against the defective photos that show worn tread by eye,
and against every defective photo), michelin-twi (never trained on) by its capture day's fold model:
the Spearman of the worn logit with the gauge and its ends' AUC. Prints one line per reading; no
model is written.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from multiprocessing import Pool

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
import preprocess as pp  # noqa: E402
import real_data as rd  # noqa: E402
from export_real import build, zoomed_out  # noqa: E402
from mirror_oof import view0  # noqa: E402
from real_report import auc, spearman  # noqa: E402

SETS = ["web-good-defective", "michelin-twi"]


@torch.no_grad()
def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cv", required=True, help="train_real.py --fold K runs (fold0 … fold4)")
    ap.add_argument("--wear", required=True, help="wear_branch.py train --fold K runs (fold0 … fold4)")
    ap.add_argument("--pretrained", default="runs/mbv2_nsfwjs.pt")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(2)
    z = dict(np.load(os.path.join(a.cv, "fold0", "pred.npz")))
    rows = np.flatnonzero((z["view"] == 0) & ~z["degraded"] & np.isin(z["setname"], SETS))
    keys, group, setname, pct = z["sample"][rows], z["group"][rows], z["setname"][rows], z["pct"][rows]
    logit = np.full((len(rows), 6), np.nan, np.float32)  # plain, mirror, zoomed out 2x, 3x, 3x mirrored; the support
    t0 = time.time()
    for k in range(5):
        fold = os.path.join(a.cv, f"fold{k}")
        net = build(a.pretrained, os.path.join(fold, "top.pt"), os.path.join(a.wear, f"fold{k}", "branch.pt"), mirror=True,
                    support=os.path.join(fold, "support.pt"))
        mine = [i for i in range(len(rows)) if group[i].endswith(str(k))]
        with Pool(a.workers) as pool:
            got = [(i, u) for i, u in pool.imap(view0, [(i, str(keys[i])) for i in mine], chunksize=8) if u is not None]
        for s in range(0, len(got), 64):
            part = got[s : s + 64]
            x = torch.from_numpy(pp.normalise(np.stack([u for _, u in part])))
            z3 = zoomed_out(x, 3)
            r = net.readings(torch.cat([x, torch.flip(x, [3]), zoomed_out(x, 2), z3, torch.flip(z3, [3])], 0))
            at = [i for i, _ in part]
            logit[at, :5] = r[1].reshape(5, -1).T.numpy()
            logit[at, 5] = r[4].reshape(5, -1)[:2].mean(0).numpy()  # the photo and mirror image's, as the graph weighs it
        print(f"fold {k}: {len(got)} photos ({time.time() - t0:.0f} s)", flush=True)
    by_eye = rd.web_defective_by_eye()
    kind = np.array([rd.web_kind(key, by_eye) for key in keys])
    web, mich = setname == SETS[0], setname == SETS[1]
    uw = web & np.isin(kind, ["usable", "worn"])
    ends = mich & ((pct <= 25) | (pct >= 75))
    shown = ~np.isnan(logit).any(1)
    pm = logit[:, :2].mean(1)
    sup = logit[:, 5]
    z3 = logit[:, 3:5].mean(1)
    for name, l in [("photo + mirror (tread-2026.11.29.5)", pm), ("zoomed out 2x", logit[:, 2]), ("zoomed out 3x", logit[:, 3]),
                    ("photo + mirror, and 2x", 0.5 * (pm + logit[:, 2])), ("photo + mirror, and 3x", 0.5 * (pm + logit[:, 3])),
                    ("photo + mirror, 2x and 3x", (pm + logit[:, 2] + logit[:, 3]) / 3),
                    ("3x and its mirror by what the support lacks (shipped)", pm + (1 - sup) * 0.5 * (z3 - pm))]:
        w, u, m, e = web & shown, uw & shown, mich & shown, ends & shown
        print(f"{name:54s} web AUC usable vs worn by eye {auc(l[u], kind[u] == 'worn'):.3f}, vs every defective "
              f"{auc(l[w], kind[w] != 'usable'):.3f} | michelin-twi Spearman {spearman(-l[m], pct[m]):.3f}, ends AUC {auc(-l[e], pct[e] >= 75):.3f}")


if __name__ == "__main__":
    main()
