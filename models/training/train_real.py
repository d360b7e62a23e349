"""Train the scene reader's top on the cached trunk outputs (real_cache.py), and measure it.

    python train_real.py --cache data/cache_real.npz data/cache_renders.npz --out runs/real_all
    python train_real.py --cache ... --exclude web-good-defective --out runs/real_no_web   # leave one set out

The head reads the frozen pretrained MobileNetV2's pooled features (real_cache.py), through one
hidden layer, to six outputs: three scene logits (tread, tread not visible, no tire), a
worn logit (not usable), a depth and a log-sigma. Losses: scene cross-entropy, class-balanced; worn
binary cross-entropy on photos with a worn label (real ones weigh more than renders); a Gaussian
depth likelihood on renders; and on real photos with a worn label, a hinge that keeps the depth on
its side of 3.0 mm (worn below 2.5, usable above 3.5), so the depth follows what real tread looks
like while renders set its scale. `--exclude` leaves sets out of training (and of the class
weights); predictions for every view are written beside the checkpoint for real_report.py.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
import real_data as rd  # noqa: E402
from real_cache import FEATURES  # noqa: E402

WORN_MM = 3.0  # SPEC §2: worn and critical are under 3.0 mm


class SceneHead(nn.Module):
    """On the frozen network's pooled features (real_cache.FEATURES): standardised, one hidden
    layer, six outputs (scene logits x 3, worn logit, depth, log-sigma)."""

    def __init__(self, mean: np.ndarray, std: np.ndarray, hidden: int = 256, clip: float = 0.0, l2: bool = False):
        super().__init__()
        # l2: each pooled group (real_cache.FEATURES: 96, 320, 320, 1280, 1280) scaled to unit length before standardising (tried)
        self.register_buffer("l2", torch.tensor(1.0 if l2 else 0.0))
        self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32))
        self.register_buffer("std", torch.tensor(std, dtype=torch.float32))
        # > 0: standardised features are clamped to ±clip, so that a photo unlike the training photos
        # (a close-up, far out on some features) cannot drive the outputs to any extreme it likes
        self.register_buffer("clip", torch.tensor(float(clip)))
        self.fc = nn.Linear(FEATURES, hidden)
        self.drop_in = nn.Dropout(0.2)
        self.drop = nn.Dropout(0.3)
        self.out = nn.Linear(hidden, 6)

    def standardised(self, f):
        """The features the hidden layer reads (before dropout): standardised, clamped."""
        if float(self.l2) > 0:
            f = torch.cat([g / (g.norm(dim=1, keepdim=True) + 1e-6) for g in torch.split(f, [96, 320, 320, 1280, 1280], 1)], 1)
        x = (f - self.mean) / self.std
        if float(self.clip) > 0:
            x = x.clamp(-float(self.clip), float(self.clip))
        return x

    def forward(self, f):
        x = self.drop_in(self.standardised(f))
        o = self.out(self.drop(F.relu(self.fc(x))))
        return o[:, 0:3], o[:, 3], o[:, 4], o[:, 5].clamp(-2.5, 1.5)


def load_head(top: str) -> SceneHead:
    """A trained head from its top.pt (heads trained before --clip and --l2 have neither buffer)."""
    sd = torch.load(top, map_location="cpu")
    sd.setdefault("clip", torch.tensor(0.0))
    sd.setdefault("l2", torch.tensor(0.0))
    head = SceneHead(sd["mean"].numpy(), sd["std"].numpy(), hidden=sd["fc.weight"].shape[0], clip=float(sd["clip"]), l2=bool(float(sd["l2"])))
    head.load_state_dict(sd)
    return head.eval()


def load_caches(paths: list[str]) -> dict:
    parts = [dict(np.load(p, allow_pickle=False)) for p in paths]
    sets = sorted({str(s) for p in parts for s in p["sets"]})
    out: dict = {}
    for p in parts:
        local = [str(s) for s in p["sets"]]
        p["setname"] = np.array([local[i] for i in p["setid"]])
        p["sample"] = np.array([f"{k}" for k in p["key"]])
    for k in ("feats", "view", "degraded", "scene", "worn", "depth", "pct", "group", "kind", "setname", "sample"):
        out[k] = np.concatenate([p[k] for p in parts])
    out["sets"] = sets
    return out


def losses(model_out, scene, worn, depth, is_real, scene_w, sample_w=None):
    logits, worn_logit, d, logsig = model_out
    if sample_w is None:
        l_scene = F.cross_entropy(logits, scene, weight=scene_w)
    else:  # the class weights' weighted mean, each view also weighted by sample_w
        w = scene_w[scene] * sample_w
        l_scene = (F.cross_entropy(logits, scene, reduction="none") * w).sum() / w.sum()
    has_worn = worn >= 0
    l_worn = torch.tensor(0.0)
    l_hinge = torch.tensor(0.0)
    if has_worn.any():
        w = torch.where(is_real[has_worn], 1.0, 0.3)
        l_worn = (F.binary_cross_entropy_with_logits(worn_logit[has_worn], worn[has_worn].float(), reduction="none") * w).mean()
        rw = has_worn & is_real
        if rw.any():
            dd, ww = d[rw], worn[rw].float()
            l_hinge = (ww * F.relu(dd - (WORN_MM - 0.5)) + (1 - ww) * F.relu((WORN_MM + 0.5) - dd)).mean()
    has_d = ~torch.isnan(depth)
    l_depth = torch.tensor(0.0)
    if has_d.any():
        z = (d[has_d] - depth[has_d]) / torch.exp(logsig[has_d])
        l_depth = (0.5 * z**2 + logsig[has_d]).mean()
    return l_scene + l_worn + 0.3 * l_depth + 0.3 * l_hinge, (l_scene.item(), l_worn.item(), l_depth.item(), l_hinge.item())


@torch.no_grad()
def predict(model, feats, batch=512):
    model.eval()
    outs = []
    for i in range(0, len(feats), batch):
        f = torch.from_numpy(feats[i : i + batch].astype(np.float32))
        logits, wl, d, ls = model(f)
        outs.append(torch.cat([F.softmax(logits, 1), torch.sigmoid(wl)[:, None], d[:, None], torch.exp(ls)[:, None], wl[:, None]], 1).numpy())
    return np.concatenate(outs)


def ccby_photos(c, test) -> np.ndarray:
    """tyre-defect-ccby's views whose photo's box classes (a set of ints) pass `test`."""
    out = np.zeros(len(c["setname"]), dtype=bool)
    known: dict[str, bool] = {}
    for i in np.flatnonzero(c["setname"] == "tyre-defect-ccby"):
        path = rd.split_key(c["sample"][i])[1]
        if path not in known:
            known[path] = bool(test(rd.ccby_classes(path)))
        out[i] = known[path]
    return out


FLAT_SPOTS, NON_DEFECTIVE = 2, 3  # tyre-defect-ccby's data.yaml


def sidewall_closeups(c) -> np.ndarray:
    """Views of photos with only Non-defective boxes: a sample of 80 of those photos held 80
    sidewall close-ups and no tread (models/NOTEBOOK.md)."""
    return ccby_photos(c, lambda k: k == {NON_DEFECTIVE})


def unsure_views(c) -> np.ndarray:
    """Views of photos with no Flat spots box: bulges and cracks on a sidewall as often as on the
    tread (flat spots are on the tread)."""
    return ccby_photos(c, lambda k: FLAT_SPOTS not in k)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", nargs="+", required=True)
    ap.add_argument("--exclude", default="", help="comma-separated sets left out of training")
    ap.add_argument("--ccby-wear", action="store_true", help="also learn wear from tyre-defect-ccby's damage boxes (worse on michelin-twi)")
    ap.add_argument("--ccby-sidewalls", action="store_true",
                    help="tyre-defect-ccby's photos with only Non-defective boxes (sidewall close-ups) as tread not visible")
    ap.add_argument("--sidewall-weight", type=float, default=1.0, help="those views' weight in the scene loss (--ccby-sidewalls)")
    ap.add_argument("--unsure-weight", type=float, default=1.0,
                    help="with --ccby-sidewalls, the scene-loss weight of tyre-defect-ccby's photos with Bulge or Cracks and no Flat spots (sidewall or tread)")
    ap.add_argument("--ccby-flat-worn", action="store_true",
                    help="tyre-defect-ccby's photos with a Flat spots box (bald tread) as worn; no other ccby wear label")
    ap.add_argument("--ccby-usable", choices=["", "non-defective", "not-flat"], default="",
                    help="tyre-defect-ccby's photos without flat spots as usable: those with only Non-defective boxes, or all without a "
                         "Flat spots box (tried, not shipped: michelin-twi's order 0.50 -> 0.25; models/NOTEBOOK.md)")
    ap.add_argument("--web-wear-only", default="",
                    help="comma-separated labels/web_defective_by_eye.csv kinds (worn, flat, damaged, looks_usable, other) whose "
                         "defective web photos keep their worn label; the others get none (train_real.sh: all but looks_usable, "
                         "since tread-2026.11.29.5; models/NOTEBOOK.md, \"What the defective web photos show\")")
    ap.add_argument("--render-labels", action="store_true", help="also learn wear and depth from the renders (worse on real photos)")
    ap.add_argument("--fold", type=int, default=-1, help="leave out fold K (0-4) of every set (real_data groups end in the fold)")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--clip", type=float, default=0.0, help="clamp the standardised features to ±CLIP (0: no clamp)")
    ap.add_argument("--wd", type=float, default=1e-3, help="AdamW weight decay")
    ap.add_argument("--l2", action="store_true", help="each pooled group to unit length first (tried, models/NOTEBOOK.md)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    # one thread: the head is small, and two threads spend more time waiting for each other than
    # they gain whenever anything else runs on the two cores
    torch.set_num_threads(1)
    torch.manual_seed(a.seed)
    rng = np.random.default_rng(a.seed)
    os.makedirs(a.out, exist_ok=True)
    c = load_caches(a.cache)
    excluded = set(filter(None, a.exclude.split(",")))
    never = {"michelin-twi"}  # measured only (realdata/README.md)
    train = ~np.isin(c["setname"], list(excluded | never))
    if a.fold >= 0:
        train &= np.array([not g.endswith(str(a.fold)) for g in c["group"]])
    idx = np.flatnonzero(train)
    scene = c["scene"].astype(np.int64)
    sample_w = None
    if a.ccby_sidewalls:
        sidewalls = sidewall_closeups(c)
        scene[sidewalls] = rd.NOT_READ
        sample_w = np.where(sidewalls, a.sidewall_weight, 1.0).astype(np.float32)
        if a.unsure_weight != 1.0:
            unsure = unsure_views(c) & ~sidewalls
            sample_w[unsure] = a.unsure_weight
            print(f"{int(unsure.sum())} views of tyre-defect-ccby's bulges and cracks at weight {a.unsure_weight}", flush=True)
        if (sample_w == 1.0).all():
            sample_w = None
        print(f"{int(sidewalls.sum())} views of tyre-defect-ccby's sidewall close-ups as tread not visible", flush=True)
    counts = np.bincount(scene[idx], minlength=3).astype(np.float64)
    scene_w = torch.tensor(counts.sum() / (3 * np.maximum(counts, 1)), dtype=torch.float32)
    print(f"training on {len(idx)} views; scene counts {counts.tolist()}; left out {sorted(excluded | never)}", flush=True)
    sub = c["feats"][idx[:: max(1, len(idx) // 8000)]].astype(np.float32)
    if a.l2:
        sub = np.concatenate([g / (np.linalg.norm(g, axis=1, keepdims=True) + 1e-6) for g in np.split(sub, np.cumsum([96, 320, 320, 1280])[:], 1)], 1)
    model = SceneHead(sub.mean(0), sub.std(0) + 1e-3, clip=a.clip, l2=a.l2)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=a.wd)
    steps = a.epochs * math.ceil(len(idx) / a.batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=a.lr, total_steps=steps, pct_start=0.15)
    is_real_all = c["setname"] != "renders"
    # tried and not shipped: tyre-defect-ccby's damage boxes as "not usable" (real_data.ccby_worn)
    ccby = (c["setname"] == "tyre-defect-ccby") & ~c["degraded"] & (c["worn"] < 0)
    if a.ccby_wear and ccby.any():
        worn = c["worn"].copy()
        for i in np.flatnonzero(ccby):
            worn[i] = rd.ccby_worn(str(c["sample"][i]).split(":", 2)[1])
        c["worn"] = worn
    if a.ccby_flat_worn:
        worn = c["worn"].copy()
        flat = ccby & ccby_photos(c, lambda k: FLAT_SPOTS in k)
        worn[flat] = 1
        c["worn"] = worn
        print(f"{int(flat.sum())} views of tyre-defect-ccby's flat spots as worn", flush=True)
    if a.web_wear_only:
        drop = rd.web_worn_dropped(c["sample"], c["worn"], c["setname"], a.web_wear_only)
        worn = c["worn"].copy()
        worn[drop] = -1
        c["worn"] = worn
        print(f"{int(drop.sum())} views of web-good-defective's defective photos without a worn label (kept: {sorted(a.web_wear_only.split(','))})", flush=True)
    if a.ccby_usable:
        worn = c["worn"].copy()
        keep = (lambda k: k == {NON_DEFECTIVE}) if a.ccby_usable == "non-defective" else (lambda k: FLAT_SPOTS not in k)
        usable = ccby & ccby_photos(c, keep)
        worn[usable] = 0
        c["worn"] = worn
        print(f"{int(usable.sum())} views of tyre-defect-ccby ({a.ccby_usable}) as usable", flush=True)
    if not a.render_labels:
        # Renders teach the gate what a tread is and is not, but not wear: with their worn and depth
        # labels the out-of-fold Spearman on michelin-twi fell from 0.44 to 0.05 (models/NOTEBOOK.md,
        # "The scene reader"): the renderer's idea of worn tread is not what real worn tread looks like.
        c["worn"] = np.where(is_real_all, c["worn"], -1).astype(c["worn"].dtype)
        c["depth"] = np.where(is_real_all, c["depth"], np.nan).astype(np.float32)
    t0 = time.time()
    for ep in range(a.epochs):
        model.train()
        perm = rng.permutation(idx)
        agg = np.zeros(4)
        for bi in range(0, len(perm), a.batch):
            b = np.sort(perm[bi : bi + a.batch])
            f = torch.from_numpy(c["feats"][b].astype(np.float32))
            loss, parts = losses(model(f), torch.from_numpy(scene[b]), torch.from_numpy(c["worn"][b].astype(np.int64)),
                                 torch.from_numpy(c["depth"][b]), torch.from_numpy(is_real_all[b]), scene_w,
                                 None if sample_w is None else torch.from_numpy(sample_w[b]))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            agg += parts
        print(f"epoch {ep + 1}/{a.epochs}: scene {agg[0] / (len(perm) / a.batch):.3f} worn {agg[1] / (len(perm) / a.batch):.3f} "
              f"depth {agg[2] / (len(perm) / a.batch):.3f} hinge {agg[3] / (len(perm) / a.batch):.3f} ({time.time() - t0:.0f} s)", flush=True)
    torch.save(model.state_dict(), os.path.join(a.out, "top.pt"))
    pred = predict(model, c["feats"])
    # a branch combine's copy of an earlier head's readings, and the support fitted on that head's features
    for name in ("pred_head.npz", "support.pt", "support.npz", "support.json"):
        stale = os.path.join(a.out, name)
        if os.path.exists(stale):
            os.remove(stale)
    np.savez(os.path.join(a.out, "pred.npz"), pred=pred, setname=c["setname"], view=c["view"], degraded=c["degraded"], scene=c["scene"],
             worn=c["worn"], depth=c["depth"], pct=c["pct"], kind=c["kind"], sample=c["sample"], group=c["group"])
    with open(os.path.join(a.out, "train.json"), "w") as f:
        json.dump({"exclude": sorted(excluded), "fold": a.fold, "renderLabels": a.render_labels, "ccbyWear": a.ccby_wear, "ccbySidewalls": a.ccby_sidewalls, "ccbyFlatWorn": a.ccby_flat_worn, "ccbyUsable": a.ccby_usable, "webWearOnly": a.web_wear_only, "sidewallWeight": a.sidewall_weight, "unsureWeight": a.unsure_weight, "epochs": a.epochs, "lr": a.lr, "seed": a.seed, "clip": a.clip, "wd": a.wd, "views": int(len(idx)),
                   "cache": a.cache, "seconds": round(time.time() - t0)}, f, indent=1)
    print(f"wrote {a.out} in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
