"""The scene reader's wear branch (since tread-2026.11.28.3): the pretrained network's last two blocks
(15, 16) and its 1 280-channel head, fine-tuned on web-good-defective's worn/usable labels, with one
trained layer on their pooled features; its logit is added to the frozen head's worn logit inside
scene.onnx (export_real.py --wear), scaled so that both weigh the same (`scale`: the ratio of their
spreads on the training photos).

    python wear_branch.py cache --realdata R --pretrained runs/mbv2_nsfwjs.pt --out data/cache_wear.npz
    python wear_branch.py train --cache data/cache_wear.npz --pretrained runs/mbv2_nsfwjs.pt \
        --head-pred runs/cv/fold0/pred.npz --fold 0 --out runs/wear/fold0      # or no --fold: all photos
    python wear_branch.py combine --cv runs/cv --wear runs/wear                  # the folds' worn logits

Why (models/NOTEBOOK.md, "Fine-tuning the top blocks"): over the five folds, out of fold, the frozen
head alone ordered web-good-defective at AUC 0.891 and michelin-twi at Spearman 0.456; with the
branch added (the shipped recipe) 0.910 and 0.445. Fine-tuned from block 13 the branch learned the web set better (0.912
alone) but cost michelin-twi's order (0.319 alone); from block 15 it keeps it. Only the web set
teaches it (michelin-twi is measured, never trained on); a set left out that is not the web set is
scored with the shipped branch, which never saw it.

The cache keeps block 12's output (96 x 10 x 10, fp16) of the same views real_cache.py makes
(web-good-defective: the app's view and four augmented; michelin-twi: the app's view and its
mirror, for measuring); blocks 13-14 stay frozen and run once per view before training.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time
from multiprocessing import Pool

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
import real_cache as rc  # noqa: E402
import real_data as rd  # noqa: E402
from nets import MobileNetV2  # noqa: E402

SETS = ("web-good-defective", "michelin-twi")
FROM_BLOCK = 15  # blocks 15, 16 and the head are fine-tuned; 0-14 stay as pretrained
FEATURES = 96 + 2 * 320 + 2 * 1280  # real_cache.FEATURES, the same pooling
HIDDEN = 128
CLIP = 3.0


class WearBranch(nn.Module):
    """Block 14's output (and block 12's mean) -> the branch's worn logit (or, with `outputs` > 1,
    that many logits: gate_branch.py), times `scale`."""

    def __init__(self, backbone: MobileNetV2, hidden: int = HIDDEN, outputs: int = 1):
        super().__init__()
        self.outputs = outputs
        self.blocks = nn.ModuleList(copy.deepcopy(b) for b in backbone.blocks[FROM_BLOCK:])
        self.head = copy.deepcopy(backbone.head)
        self.fc = nn.Linear(FEATURES, hidden)
        self.out = nn.Linear(hidden, outputs)
        self.drop = nn.Dropout(0.3)
        self.register_buffer("mean", torch.zeros(FEATURES))
        self.register_buffer("std", torch.ones(FEATURES))
        self.register_buffer("scale", torch.tensor(1.0))

    def pooled(self, b12_mean: torch.Tensor, x14: torch.Tensor) -> torch.Tensor:
        x = x14
        for b in self.blocks:
            x = b(x)
        h = self.head(x)
        return torch.cat([b12_mean, x.mean((2, 3)), x.amax((2, 3)), h.mean((2, 3)), h.amax((2, 3))], 1)

    def raw(self, b12_mean: torch.Tensor, x14: torch.Tensor) -> torch.Tensor:
        f = ((self.pooled(b12_mean, x14) - self.mean) / self.std).clamp(-CLIP, CLIP)
        o = self.out(self.drop(F.relu(self.fc(f))))
        return o[:, 0] if self.outputs == 1 else o

    def forward(self, b12_mean: torch.Tensor, x14: torch.Tensor) -> torch.Tensor:
        return self.scale * self.raw(b12_mean, x14)


def fit(branch: WearBranch, b12: torch.Tensor, x14: torch.Tensor, tr: np.ndarray, loss_of, a, batch: int, rng, sort: bool = False) -> None:
    """Standardises the branch's features on the training views `tr`, then fine-tunes blocks 15-16
    and the head (a.lr) and its layer (1e-3) for a.epochs, BatchNorm statistics kept (the
    pretrained ones: a few thousand photos are too few); loss_of(views, raw output) -> loss."""
    with torch.no_grad():
        sub = tr[:: max(1, len(tr) // 6000)]
        f0 = torch.cat([branch.pooled(b12[sub[j:j + 512]].float(), x14[sub[j:j + 512]].float()) for j in range(0, len(sub), 512)])
        branch.mean.copy_(f0.mean(0))
        branch.std.copy_(f0.std(0) + 1e-4)
    tuned = list(branch.blocks.parameters()) + list(branch.head.parameters())
    opt = torch.optim.AdamW([{"params": list(branch.fc.parameters()) + list(branch.out.parameters()), "lr": 1e-3, "weight_decay": 1e-3},
                             {"params": tuned, "lr": a.lr, "weight_decay": 1e-4}])
    t0 = time.time()
    for ep in range(a.epochs):
        branch.train()
        for m in branch.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.eval()
        perm, total = rng.permutation(tr), 0.0
        for j in range(0, len(perm), batch):
            b = np.sort(perm[j:j + batch]) if sort else perm[j:j + batch]
            loss = loss_of(b, branch.raw(b12[b].float(), x14[b].float()))
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(b)
        print(f"epoch {ep + 1}/{a.epochs}: loss {total / len(perm):.3f}, {time.time() - t0:.0f} s", flush=True)
    branch.eval()


def load_branch(path: str, backbone: MobileNetV2) -> WearBranch:
    sd = torch.load(path, map_location="cpu")
    w = WearBranch(backbone, hidden=sd["fc.weight"].shape[0])
    w.load_state_dict(sd)
    return w.eval()


def cmd_cache(a) -> None:
    samples = [s for s in rd.all_samples(a.realdata, None, None) if s.set in SETS]
    net = rc.trunk(a.pretrained)
    jobs = [(i, s.path, s.box, s.set, s.scene, i) for i, s in enumerate(samples)]
    maps, meta, buf, bm = [], [], [], []

    @torch.no_grad()
    def flush():
        if buf:
            x = net.stem(torch.from_numpy(np.stack(buf)).permute(0, 3, 1, 2).float() / 255.0)
            for b in net.blocks[:13]:
                x = b(x)
            maps.append(x.half().numpy())
            meta.extend(bm)
            buf.clear()
            bm.clear()

    t0 = time.time()
    with Pool(a.workers) as pool:
        for i, out, err in pool.imap_unordered(rc.views_of, jobs, chunksize=8):
            if out is None:
                print("  failed:", samples[i].path, err)
                continue
            for u8, v, degraded in out:
                if not degraded:  # a view blurred past reading has no worn label
                    buf.append(u8)
                    bm.append((i, v))
            if len(buf) >= 256:
                flush()
    flush()
    s = [samples[m[0]] for m in meta]
    np.savez(a.out, maps=np.concatenate(maps), view=np.array([m[1] for m in meta], np.int16),
             worn=np.array([x.worn for x in s], np.int8), pct=np.array([x.pct for x in s], np.float32),
             group=np.array([x.group for x in s]), setname=np.array([x.set for x in s]), key=np.array([x.key for x in s]))
    print(f"wrote {a.out}: {len(meta)} views of {len(samples)} photos in {time.time() - t0:.0f} s")


@torch.no_grad()
def frozen_inputs(net: MobileNetV2, maps: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """Block 12's mean and block 14's output of every cached view (blocks 13-14 stay frozen)."""
    means, x14 = [], []
    for j in range(0, len(maps), 512):
        x = torch.from_numpy(maps[j:j + 512]).float()
        means.append(x.mean((2, 3)))
        for b in net.blocks[13:FROM_BLOCK]:
            x = b(x)
        x14.append(x)
    return torch.cat(means), torch.cat(x14)


def norm(key) -> tuple[str, str, str]:
    """A sample key (real_data.Sample.key: set:path:box) with its path resolved, so that caches made
    with ../shared/realdata and with its absolute path match (run from the training folder: the
    caches name data/ relative to it)."""
    name, path, _, box = rd.split_key(key)
    if name == "debian-photos":  # by the path inside the unpacked packages (a cache may have unpacked them elsewhere)
        return name, path.rsplit("/x/", 1)[-1], box
    return name, os.path.realpath(path), box


def head_logits(pred_path: str, keys: np.ndarray, views: np.ndarray) -> np.ndarray:
    """The frozen head's worn logit (pred.npz column 6) of each cached view; once `combine` has run,
    the head's own readings are in pred_head.npz beside it."""
    own = os.path.join(os.path.dirname(pred_path), "pred_head.npz")
    p = np.load(own if os.path.exists(own) else pred_path)
    by = {(norm(k), int(v)): float(x) for k, v, x in zip(p["sample"], p["view"], p["pred"][:, 6]) if not np.isnan(x)}
    return np.array([by.get((norm(k), int(v)), np.nan) for k, v in zip(keys, views)])


def cmd_train(a) -> None:
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    rng = np.random.default_rng(a.seed)
    c = np.load(a.cache)
    net = rc.trunk(a.pretrained)
    b12, x14 = frozen_inputs(net, c["maps"])
    web = c["setname"] == "web-good-defective"
    train = web & (c["group"] != f"web{a.fold}") if a.fold >= 0 else web
    worn = c["worn"].copy()
    if a.web_wear_only:
        drop = rd.web_worn_dropped(c["key"], worn, c["setname"], a.web_wear_only)
        worn[drop] = -1
        print(f"{int(drop.sum())} views without a worn label (kept: {a.web_wear_only})", flush=True)
    train &= worn >= 0
    tr = np.where(train)[0]
    branch = WearBranch(net).eval()
    y = torch.from_numpy(np.maximum(worn, 0).astype(np.float32))
    share = float((worn[tr] == 1).mean())

    def loss_of(b, raw):
        w = torch.where(y[b] > 0.5, 0.5 / share, 0.5 / (1 - share))  # the two classes weigh the same
        return (F.binary_cross_entropy_with_logits(raw, y[b], reduction="none") * w).mean()

    t0 = time.time()
    fit(branch, b12, x14, tr, loss_of, a, 32, rng)
    with torch.no_grad():
        raw = torch.cat([branch.raw(b12[j:j + 512], x14[j:j + 512]) for j in range(0, len(b12), 512)]).numpy()
    # scale: the frozen head's spread over the branch's on the training photos (the app's view), so
    # that the two readings weigh the same in the sum
    head = head_logits(a.head_pred, c["key"], c["view"])
    app_view = train & (c["view"] == 0) & ~np.isnan(head)
    scale = float(np.std(head[app_view]) / np.std(raw[app_view]))
    branch.scale.fill_(scale)
    os.makedirs(a.out, exist_ok=True)
    torch.save(branch.state_dict(), os.path.join(a.out, "branch.pt"))
    np.savez(os.path.join(a.out, "logits.npz"), key=c["key"], view=c["view"], logit=raw * scale)
    json.dump({"fold": a.fold, "epochs": a.epochs, "lr": a.lr, "seed": a.seed, "scale": scale, "trainViews": len(tr), "webWearOnly": a.web_wear_only},
              open(os.path.join(a.out, "train.json"), "w"), indent=1)
    print(f"wrote {a.out}: scale {scale:.3f}, {time.time() - t0:.0f} s")


def combine_folds(cv: str, readings, update, sets: tuple[str, ...] | None = None, what: str = "branch reading") -> None:
    """For each fold of `cv`: the head's own readings kept once in pred_head.npz (so that a rerun
    starts from them), then, for the app's view of each photo (view 0: the augmented views of the
    caches are not the same crops; the constants and the out-of-fold table read view 0 only) in
    `sets` (default: all), update(pred, head_pred, i, x) writes the head's reading combined with the
    branch's x = readings(k)[norm(key)] into pred.npz; the other columns stay as pred.npz has them."""
    for k in range(5):
        run = os.path.join(cv, f"fold{k}")
        src = os.path.join(run, "pred_head.npz")
        if not os.path.exists(src):
            os.replace(os.path.join(run, "pred.npz"), src)
            np.savez(os.path.join(run, "pred.npz"), **dict(np.load(src)))
        head = np.load(src)["pred"]
        p = dict(np.load(os.path.join(run, "pred.npz")))
        add = readings(k)
        pred = p["pred"].copy()
        n = missing = 0
        for i, (key, v) in enumerate(zip(p["sample"], p["view"])):
            if int(v) != 0 or p["degraded"][i] or (sets is not None and p["setname"][i] not in sets):
                continue
            x = add.get(norm(key))
            if x is None:
                missing += 1
                continue
            update(pred, head, i, x)
            n += 1
        if missing:
            print(f"fold {k}: WARNING {missing} photos have no {what} (the head's alone)")
        p["pred"] = pred
        np.savez(os.path.join(run, "pred.npz"), **p)
        print(f"fold {k}: {n} views given {what}")


def cmd_combine(a) -> None:
    """Adds each fold's branch logit to its head's worn logit (pred.npz column 6; column 3 its
    probability) for the photos of SETS (combine_folds)."""

    def readings(k):
        w = np.load(os.path.join(a.wear, f"fold{k}", "logits.npz"))
        return {norm(key): float(x) for key, v, x in zip(w["key"], w["view"], w["logit"]) if int(v) == 0}

    def update(pred, head, i, x):
        pred[i, 6] = head[i, 6] + x
        pred[i, 3] = 1 / (1 + np.exp(-pred[i, 6]))

    combine_folds(a.cv, readings, update, SETS, "wear branch logit")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cache")
    c.add_argument("--realdata", required=True)
    c.add_argument("--pretrained", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--workers", type=int, default=2)
    t = sub.add_parser("train")
    t.add_argument("--cache", required=True)
    t.add_argument("--pretrained", required=True)
    t.add_argument("--head-pred", required=True, help="the frozen head's pred.npz of the same photos (for the scale)")
    t.add_argument("--fold", type=int, default=-1, help="leave this web fold out (default: train on every photo)")
    t.add_argument("--out", required=True)
    t.add_argument("--epochs", type=int, default=4)
    t.add_argument("--lr", type=float, default=1e-4)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--threads", type=int, default=1)
    t.add_argument("--web-wear-only", default="", help="as train_real.py's: the by-eye kinds whose defective photos keep their worn label")
    m = sub.add_parser("combine")
    m.add_argument("--cv", required=True)
    m.add_argument("--wear", required=True)
    a = ap.parse_args()
    {"cache": cmd_cache, "train": cmd_train, "combine": cmd_combine}[a.cmd](a)


if __name__ == "__main__":
    main()
