"""The wear reader's support: how much a photo looks like the photos the worn probability learned
from (models/README.md, "What the wear reader has seen"; since tread-2026.11.29.3).

    python support_head.py --cache data/cache_real.npz --head runs/real_all

The head's worn probability learned from photos with a wear label: web-good-defective's usable and
worn tires and tyre-defect-ccby's flat spots (bald tread). tyre-defect-ccby's other photos —
tread and sidewall close-ups with cracks, bulges or nothing wrong — are real tires whose wear no
label gives, and a kind of photo the labelled ones hardly cover: close-ups of tread. A photo of
that kind gets a worn reading the head never learned to make (michelin-twi's close-ups of new
tires read as worn: their nearest training photos are those unlabelled close-ups, 60 % of their
ten nearest, and of the labelled ones almost only worn tires; models/NOTEBOOK.md). The support is
one logistic layer on the head's own standardised, clamped features (the head's `mean`, `std` and
`clip`), labelled 1 for the views the worn probability learned from and 0 for those unlabelled
close-ups, the two classes weighted equally, an L2 penalty: P(the photo is like the labelled ones).
The app (scene.ts) shrinks the worn probability toward even by it for the confidence, and a photo
under `supportBelow` gets a preliminary result with the whole depth scale as its interval.

The views and folds are the head's (its train.json: the same sets left out, the same fold left
out), so an out-of-fold or held-out reading of the support comes from photos it never saw. Writes
HEAD/support.pt (`weight` 3 296, `bias` 1) and HEAD/support.json; a head trained without
tyre-defect-ccby has nothing to tell apart and gets none (the app then reads full support).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
import train_real as tr  # noqa: E402

CCBY = "tyre-defect-ccby"


def support_labels(c: dict, flat_worn: bool, web_wear_only: str = "") -> np.ndarray:
    """1: a view the worn probability learned from; 0: an unlabelled real close-up; -1: neither.
    `web_wear_only`: the head's train.json webWearOnly (train_real.py --web-wear-only): the defective
    web photos whose by-eye kind it does not name gave the head no worn label, so they are neither."""
    real = c["setname"] != "renders"
    ccby = c["setname"] == CCBY
    flat = tr.ccby_photos(c, lambda k: tr.FLAT_SPOTS in k) if flat_worn else np.zeros(len(ccby), bool)
    y = np.full(len(ccby), -1, np.int8)
    y[real & ~ccby & (c["worn"] >= 0)] = 1
    y[flat] = 1
    y[ccby & ~flat] = 0
    y[c["degraded"] | (c["setname"] == "michelin-twi")] = -1  # made-up unreadable copies; measured only
    if web_wear_only:
        y[tr.rd.web_worn_dropped(c["sample"], c["worn"], c["setname"], web_wear_only)] = -1
    return y


def fit(x: np.ndarray, y: np.ndarray, wd: float, iters: int = 200) -> tuple[np.ndarray, float]:
    """Logistic regression, classes weighted equally, L2 penalty wd·|w|² (L-BFGS, float32)."""
    xt = torch.from_numpy(x)
    yt = torch.from_numpy(y.astype(np.float32))
    sw = torch.from_numpy(np.where(y == 1, 0.5 / y.mean(), 0.5 / (1 - y.mean())).astype(np.float32))
    w = torch.zeros(x.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], max_iter=iters, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = (F.binary_cross_entropy_with_logits(xt @ w + b, yt, reduction="none") * sw).sum() / sw.sum() + wd * (w**2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    return w.detach().numpy(), float(b.detach())


@torch.no_grad()
def standardised(head: tr.SceneHead, feats: np.ndarray, batch: int = 4096) -> np.ndarray:
    """The features the head's hidden layer reads (SceneHead.standardised), as the graph computes them."""
    return np.concatenate([head.standardised(torch.from_numpy(feats[i : i + batch].astype(np.float32))).numpy() for i in range(0, len(feats), batch)])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", nargs="+", required=True, help="real_cache.py caches (the renders are not used)")
    ap.add_argument("--head", required=True, help="a train_real.py run folder (top.pt, train.json)")
    ap.add_argument("--wd", type=float, default=1e-2, help="L2 penalty")
    a = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    t0 = time.time()
    info = json.load(open(os.path.join(a.head, "train.json")))
    out_pt = os.path.join(a.head, "support.pt")
    if CCBY in info["exclude"]:
        if os.path.exists(out_pt):
            os.remove(out_pt)
        print(f"{a.head}: trained without {CCBY}: no support")
        return
    head = tr.load_head(os.path.join(a.head, "top.pt"))
    c = tr.load_caches(a.cache)
    y = support_labels(c, bool(info.get("ccbyFlatWorn")), info.get("webWearOnly", ""))
    train = (y >= 0) & ~np.isin(c["setname"], info["exclude"])
    if info["fold"] >= 0:
        train &= np.array([not g.endswith(str(info["fold"])) for g in c["group"]])
    x = standardised(head, c["feats"])
    w, b = fit(x[train], y[train], a.wd)
    torch.save({"weight": torch.from_numpy(w), "bias": torch.tensor([b])}, out_pt)
    # every view's reading, beside the head's pred.npz (same order): a fold's own photos were not learned from
    s = 1 / (1 + np.exp(-(x @ w + b)))
    np.savez(os.path.join(a.head, "support.npz"), support=s, sample=c["sample"], view=c["view"], setname=c["setname"], label=y)
    plain = c["view"] == 0
    summary = {
        "views": int(train.sum()),
        "labelled": int((y[train] == 1).sum()),
        "unlabelled": int((y[train] == 0).sum()),
        "wd": a.wd,
        "shareUnderHalfAllPhotos": {
            str(s_): round(float((s[plain & (c["setname"] == s_)] < 0.5).mean()), 4) for s_ in sorted(set(c["setname"])) if (plain & (c["setname"] == s_)).any()
        },
        "seconds": round(time.time() - t0),
    }
    with open(os.path.join(a.head, "support.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(f"{a.head}: support on {summary['views']} views ({summary['labelled']} labelled, {summary['unlabelled']} unlabelled close-ups); "
          f"under 0.5 (plain views, trained ones included): {summary['shareUnderHalfAllPhotos']} ({summary['seconds']} s)")


if __name__ == "__main__":
    main()
