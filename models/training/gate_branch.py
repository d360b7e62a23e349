"""A gate branch for the scene reader: TRIED, NOT SHIPPED (models/NOTEBOOK.md, "A gate branch").
Like the wear branch (wear_branch.py), a copy of the pretrained network's blocks 15-16 and its
1 280-channel head fine-tuned, here for the three scene classes (tread, tread not visible, no tire)
on every set the head learns from (michelin-twi never); export_real.py --gate adds its scene
logits, times `scale`, to the head's. Measured with the head's own folds (--head-pred), out of fold
it refused no more hard negatives than the head alone (87.6-88.6 % against 88.5 % at the same 4 %
of tread photos refused); a first measurement that showed 96 % had put 8 696 of its 21 344 views in
other folds than the head's (real_data.py hashes some sets' groups from the path as spelt) and
scored photos its fold branches had learned from. train_real.sh does not run it.

    python gate_branch.py cache --realdata R --pretrained runs/mbv2_nsfwjs.pt --debian data/deb1/x \
        --debian2 data/deb2/x --renders data/renders --out data/cache_gate.npz
    python gate_branch.py train --cache data/cache_gate.npz --pretrained runs/mbv2_nsfwjs.pt \
        (--fold K --head-pred runs/cv/foldK/pred.npz | --exclude SET | nothing: every photo) --out runs/gate/fold0
    python gate_branch.py combine --cv runs/cv --gate runs/gate

The cache keeps, per view, block 12's mean and block 14's output (160 x 5 x 5, fp16) of the app's
view (the same as real_cache.py's view 0, so each photo's reading can be matched), two augmented
views (renders one) and the made-up unreadable copies real_cache.py makes.
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
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
import real_cache as rc  # noqa: E402
import real_data as rd  # noqa: E402
from nets import MobileNetV2  # noqa: E402
from wear_branch import FROM_BLOCK, HIDDEN, WearBranch, combine_folds, fit, norm  # noqa: E402

WEIGHT = 2.0  # the branch's scene logits weigh twice the head's (fixed on fold 0 in the leaky first measurement)
VIEWS = 3


class GateBranch(WearBranch):
    """Block 14's output (and block 12's mean) -> three scene logits, times `scale`."""

    def __init__(self, backbone: MobileNetV2, hidden: int = HIDDEN):
        super().__init__(backbone, hidden, outputs=3)


def load_gate(path: str, backbone: MobileNetV2) -> GateBranch:
    sd = torch.load(path, map_location="cpu")
    g = GateBranch(backbone, hidden=sd["fc.weight"].shape[0])
    g.load_state_dict(sd)
    return g.eval()


def _views(n: int) -> None:
    """In each worker (whatever the start method): the number of views real_cache.views_of makes."""
    rc.DEFAULT_VIEWS = n


def cmd_cache(a) -> None:
    # the same sample lists, seeds and job seeds as train_real.sh's three caches: view 0 is the same image
    lists = [(rd.all_samples(a.realdata, a.debian, None, seed=0), 0),
             ([s for s in rd.all_samples(a.realdata, a.debian2, None, seed=1) if s.set == "debian-photos"], 1),
             ([s for s in rd.all_samples(a.realdata, None, a.renders, seed=0) if s.set == "renders"], 0)]
    net = rc.trunk(a.pretrained)
    cols = {k: [] for k in ("b12", "x14", "scene", "worn", "setname", "group", "key", "view", "degraded")}
    t0 = time.time()
    for samples, seed in lists:
        jobs = [(i, s.path, s.box, s.set, s.scene, seed * 1_000_003 + i) for i, s in enumerate(samples)]
        buf, meta = [], []

        @torch.no_grad()
        def flush():
            if not buf:
                return
            x = net.stem(torch.from_numpy(np.stack(buf)).permute(0, 3, 1, 2).float() / 255.0)
            for b in net.blocks[:13]:
                x = b(x)
            cols["b12"].append(x.mean((2, 3)).half().numpy())
            for b in net.blocks[13:FROM_BLOCK]:
                x = b(x)
            cols["x14"].append(x.half().numpy())
            for i, v, degraded in meta:
                s = samples[i]
                cols["scene"].append(rd.NOT_READ if degraded else s.scene)
                cols["worn"].append(-1 if degraded else s.worn)
                for k, val in (("setname", s.set), ("group", s.group), ("key", s.key), ("view", v), ("degraded", degraded)):
                    cols[k].append(val)
            buf.clear()
            meta.clear()

        with Pool(a.workers, initializer=_views, initargs=(VIEWS,)) as pool:
            for i, views, err in pool.imap_unordered(rc.views_of, jobs, chunksize=8):
                if views is None:
                    print("  failed:", samples[i].path, err)
                    continue
                for u8, v, degraded in views:
                    buf.append(u8)
                    meta.append((i, v, degraded))
                if len(buf) >= 256:
                    flush()
        flush()
    np.savez(a.out, b12=np.concatenate(cols["b12"]), x14=np.concatenate(cols["x14"]),
             **{k: np.array(v) for k, v in cols.items() if k not in ("b12", "x14")})
    print(f"wrote {a.out}: {len(cols['scene'])} views in {time.time() - t0:.0f} s")


def photo_of(key) -> tuple[str, str]:
    """A sample key's photo (set and normalised path, without the crop box): every crop of a photo
    shares the photo's fold."""
    name, path, _ = norm(key)
    return name, path


def head_groups(c, pred_path: str) -> np.ndarray:
    """Each cached view's fold group as the head's caches have it (pred.npz `group`, by photo).
    real_data.py hashes some sets' groups from the path string as given, so a cache made with
    another spelling of the same path would put a photo in another fold; the gate branch's folds
    must be the head's, or a fold's branch would score photos it learned from. Photos the head's
    caches do not have (none in a fresh run) keep their own group."""
    p = np.load(pred_path)
    by = {photo_of(k): gr for k, gr in zip(p["sample"], p["group"])}
    groups = np.array([by.get(photo_of(k), gr) for k, gr in zip(c["key"], c["group"])])
    moved = int((groups != c["group"]).sum())
    print(f"groups from {pred_path}: {moved} of {len(groups)} views take the head's fold, "
          f"{sum(photo_of(k) not in by for k in c['key'])} have no photo in the head's caches")
    return groups


def cmd_train(a) -> None:
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    rng = np.random.default_rng(a.seed)
    c = np.load(a.cache)
    b12, x14 = torch.from_numpy(c["b12"]), torch.from_numpy(c["x14"])
    setname, scene = c["setname"], c["scene"].astype(np.int64)
    excluded = set(filter(None, a.exclude.split(",")))
    train = ~np.isin(setname, list(excluded | {"michelin-twi"}))
    if a.fold >= 0:
        groups = head_groups(c, a.head_pred) if a.head_pred else c["group"]
        train &= np.array([not g.endswith(str(a.fold)) for g in groups])
    tr = np.flatnonzero(train)
    net = rc.trunk(a.pretrained)
    branch = GateBranch(net).eval()
    counts = np.bincount(scene[tr], minlength=3).astype(np.float64)
    weight = torch.tensor(counts.sum() / (3 * np.maximum(counts, 1)), dtype=torch.float32)  # the classes weigh the same
    t0 = time.time()
    fit(branch, b12, x14, tr, lambda b, raw: F.cross_entropy(raw, torch.from_numpy(scene[b]), weight=weight), a, 64, rng, sort=True)
    branch.scale.fill_(a.weight)
    v0 = np.flatnonzero(c["view"] == 0)
    with torch.no_grad():
        logits = torch.cat([branch(b12[v0[j:j + 512]].float(), x14[v0[j:j + 512]].float()) for j in range(0, len(v0), 512)]).numpy()
    os.makedirs(a.out, exist_ok=True)
    torch.save(branch.state_dict(), os.path.join(a.out, "branch.pt"))
    np.savez(os.path.join(a.out, "logits.npz"), key=c["key"][v0], degraded=c["degraded"][v0], logits=logits)
    json.dump({"fold": a.fold, "exclude": sorted(excluded), "epochs": a.epochs, "lr": a.lr, "seed": a.seed, "weight": a.weight,
               "headGroups": bool(a.head_pred),
               "trainViews": len(tr)}, open(os.path.join(a.out, "train.json"), "w"), indent=1)
    print(f"wrote {a.out}, {time.time() - t0:.0f} s")


def cmd_combine(a) -> None:
    """Each fold's gate branch added to its head's scene reading (pred.npz columns 0-2: the softmax
    of log p + the branch's logits), photo by photo (wear_branch.combine_folds)."""

    def readings(k):
        trained = json.load(open(os.path.join(a.gate, f"fold{k}", "train.json")))
        assert trained.get("headGroups"), f"fold {k}'s gate branch did not take the head's fold groups (--head-pred)"
        g = np.load(os.path.join(a.gate, f"fold{k}", "logits.npz"))
        return {norm(key): x for key, x, d in zip(g["key"], g["logits"], g["degraded"]) if not d}

    def update(pred, head, i, x):
        lp = np.log(np.clip(head[i, :3].astype(np.float64), 1e-12, 1)) + x
        e = np.exp(lp - lp.max())
        pred[i, :3] = e / e.sum()

    combine_folds(a.cv, readings, update, what="gate branch logits")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cache")
    for name in ("--realdata", "--pretrained", "--debian", "--debian2", "--renders", "--out"):
        c.add_argument(name, required=True)
    c.add_argument("--workers", type=int, default=2)
    t = sub.add_parser("train")
    t.add_argument("--cache", required=True)
    t.add_argument("--pretrained", required=True)
    t.add_argument("--fold", type=int, default=-1)
    t.add_argument("--exclude", default="")
    t.add_argument("--head-pred", default="", help="with --fold: the head's pred.npz, whose fold groups the branch takes")
    t.add_argument("--out", required=True)
    t.add_argument("--epochs", type=int, default=5)
    t.add_argument("--lr", type=float, default=1e-4)
    t.add_argument("--weight", type=float, default=WEIGHT)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--threads", type=int, default=1)
    m = sub.add_parser("combine")
    m.add_argument("--cv", required=True)
    m.add_argument("--gate", required=True)
    a = ap.parse_args()
    {"cache": cmd_cache, "train": cmd_train, "combine": cmd_combine}[a.cmd](a)


if __name__ == "__main__":
    main()
