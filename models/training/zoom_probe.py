"""Does reading a zoomed-out copy of the photo help the worn logit? (tread-2026.11.29.6; measured with
the five fold models, as the app runs them; models/NOTEBOOK.md, "Reading close-ups zoomed out").

    python zoom_probe.py --cv runs/cv --wear runs/wear

Each photo of web-good-defective, michelin-twi and tyre-defect-ccby (the app's view,
real_cache.app_view) is read by its fold's head, wear branch and support (export_real.build, mirror
on): as it is, mirrored, and zoomed out 2 to 5 times (export_real.zoomed_out: tiled with its mirror
images, box-filtered back to 160 px), each copy with its mirror image too; the shipped reading
(export_real.py --zoom 3) moves the photo's toward the 3x copy and its mirror image's by what the
support lacks. The
web photos are scored out of fold (usable against the defective photos that show worn tread by eye,
and against every defective photo), michelin-twi (never trained on) by its capture day's fold model:
the Spearman of the worn logit with the gauge and its ends' AUC. Prints one line per reading; no
model is written.

Why tyre-defect-ccby and 4x-5x (since 2026-11-29, forty-third session): 3x was first chosen over 2x
with michelin-twi's figures in view. The support of each copy (with its mirror image) on
tyre-defect-ccby's close-ups without a wear label, out of fold, chooses without that set: the scale
at which they look most like the photos the worn logit learned from. 22–27 minutes on two cores (2026-11-29).
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

SETS = ["web-good-defective", "michelin-twi", "tyre-defect-ccby"]
FACTORS = [2, 3, 4, 5]  # the zoomed-out copies read, each with its mirror image


@torch.no_grad()
def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cv", required=True, help="train_real.py --fold K runs (fold0 … fold4)")
    ap.add_argument("--wear", required=True, help="wear_branch.py train --fold K runs (fold0 … fold4)")
    ap.add_argument("--pretrained", default="runs/mbv2_nsfwjs.pt")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--save", default="", help="also write the readings (worn logits and supports of every view) to this .npz")
    a = ap.parse_args()
    torch.set_num_threads(2)
    z = dict(np.load(os.path.join(a.cv, "fold0", "pred.npz")))
    rows = np.flatnonzero((z["view"] == 0) & ~z["degraded"] & np.isin(z["setname"], SETS))
    keys, group, setname, pct, worn = z["sample"][rows], z["group"][rows], z["setname"][rows], z["pct"][rows], z["worn"][rows]
    # columns: the photo, its mirror image, then each factor's copy and the copy's mirror image
    logit = np.full((len(rows), 2 + 2 * len(FACTORS)), np.nan, np.float32)
    support = np.full((len(rows), 1 + len(FACTORS)), np.nan, np.float32)  # the photo's (with its mirror image), then each copy's
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
            views = [x, torch.flip(x, [3])]
            for f in FACTORS:
                zf = zoomed_out(x, f)
                views += [zf, torch.flip(zf, [3])]
            r = net.readings(torch.cat(views, 0))
            at = [i for i, _ in part]
            logit[at] = r[1].reshape(len(views), -1).T.numpy()
            # the photo and mirror image's support weighs the copy in the graph; each copy's own is the diagnostic
            support[at] = r[4].reshape(-1, 2, len(part)).mean(1).T.numpy()
        print(f"fold {k}: {len(got)} photos ({time.time() - t0:.0f} s)", flush=True)
    if a.save:
        np.savez(a.save, logit=logit, support=support, sample=keys, setname=setname, pct=pct, worn=worn, factors=np.array(FACTORS))
    by_eye = rd.web_defective_by_eye()
    kind = np.array([rd.web_kind(key, by_eye) for key in keys])
    web, mich, ccby = setname == SETS[0], setname == SETS[1], setname == SETS[2]
    uw = web & np.isin(kind, ["usable", "worn"])
    ends = mich & ((pct <= 25) | (pct >= 75))
    shown = ~np.isnan(logit).any(1)
    print("support (the copy and its mirror image), mean / share >= 0.5, by zoom factor " + " | ".join(["1x"] + [f"{f}x" for f in FACTORS]))
    for name, m in [("tyre-defect-ccby, unlabelled close-ups", ccby & (worn != 1)), ("tyre-defect-ccby, flat spots (worn)", ccby & (worn == 1)),
                    ("web-good-defective", web), ("michelin-twi (measured only)", mich)]:
        m = m & shown
        print(f"{name:40s} n {m.sum():4d}: " + " | ".join(f"{support[m, j].mean():.3f} / {np.mean(support[m, j] >= 0.5):.3f}" for j in range(support.shape[1])))
    pm = logit[:, :2].mean(1)
    sup = support[:, 0]
    at = {f: 2 + 2 * j for j, f in enumerate(FACTORS)}  # each factor's copy (its mirror image next)
    copy = {f: logit[:, at[f] : at[f] + 2].mean(1) for f in FACTORS}
    readings = [("photo + mirror (tread-2026.11.29.5)", pm), ("zoomed out 2x", logit[:, at[2]]), ("zoomed out 3x", logit[:, at[3]]),
                ("photo + mirror, and 2x", 0.5 * (pm + logit[:, at[2]])), ("photo + mirror, and 3x", 0.5 * (pm + logit[:, at[3]])),
                ("photo + mirror, 2x and 3x", (pm + logit[:, at[2]] + logit[:, at[3]]) / 3),
                ("3x by what the support lacks (the copy read once)", pm + (1 - sup) * 0.5 * (logit[:, at[3]] - pm))]
    readings += [(f"{f}x and its mirror by what the support lacks" + (" (shipped)" if f == 3 else ""), pm + (1 - sup) * 0.5 * (copy[f] - pm))
                 for f in FACTORS]
    for name, l in readings:
        w, u, m, e = web & shown, uw & shown, mich & shown, ends & shown
        print(f"{name:54s} web AUC usable vs worn by eye {auc(l[u], kind[u] == 'worn'):.3f}, vs every defective "
              f"{auc(l[w], kind[w] != 'usable'):.3f} | michelin-twi Spearman {spearman(-l[m], pct[m]):.3f}, ends AUC {auc(-l[e], pct[e] >= 75):.3f}")


if __name__ == "__main__":
    main()
