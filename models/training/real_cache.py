"""Decode every sample of real_data.py once, make its views (the app's own framing, then augmented
copies), run the frozen pretrained trunk on them and keep what the scene reader's trainable top
needs, so that training and leave-one-set-out runs never decode a photo again.

    python real_cache.py --realdata ../../../shared/realdata --debian DEB --renders data/renders \
        --pretrained runs/mbv2_nsfwjs.pt --out data/real_cache.npz

Per view it stores pooled features of the frozen network (FEATURES values, fp16) and the labels. View 0 of every sample is the app's input (app_frame, mirror-extended to 4:3, stretched to
160 x 160, models/training/preprocess.py); later views are augmented (a random crop of 45-100 % of
the area, a mirror, colour, gamma, blur, JPEG). Tread photos also give, at random, one view blurred
or darkened past reading, labelled NOT_READ (the photo to take again).
"""
from __future__ import annotations

import argparse
import io
import math
import os
import random
import sys
import time
from multiprocessing import Pool

import numpy as np
import torch
from PIL import Image, ImageEnhance, ImageFilter, ImageOps

sys.path.insert(0, os.path.dirname(__file__))
import preprocess as pp  # noqa: E402
import real_data as rd  # noqa: E402
from nets import MobileNetV2  # noqa: E402

SIZE = 160
# The whole pretrained network stays frozen; the cache holds pooled features of three depths:
# block 12 (96 ch, 1/16), block 16 (320 ch, 1/32) and the 1280-channel head, mean-pooled, and the
# last two max-pooled too: 96 + 2 x 320 + 2 x 1280 = 3296 values a view (FEATURES).
FEATURES = 96 + 2 * 320 + 2 * 1280
VIEWS = {"renders": 2, "michelin-twi": 2}
DEFAULT_VIEWS = 5
DEGRADE_P = 0.35


def extend_to_4_3(img: Image.Image) -> Image.Image:
    """preprocess.ts extendToModelShape: a frame longer than 4:3 is mirror-extended to 4:3."""
    w, h = img.size
    landscape = w >= h
    long, short = (w, h) if landscape else (h, w)
    if long <= 4 / 3 * short + 0.5:
        return img
    extra = round(long / (4 / 3)) - short
    before = extra // 2
    after = extra - before
    a = np.asarray(img)
    pad = ((before, after), (0, 0), (0, 0)) if landscape else ((0, 0), (before, after), (0, 0))
    return Image.fromarray(np.pad(a, pad, mode="symmetric"))


def load(sample_path: str, box) -> Image.Image:
    with open(sample_path, "rb") as f:
        data = f.read()
    img = pp.app_frame(data)
    if box is not None:
        w, h = img.size
        x1, y1, x2, y2 = box
        img = img.crop((int(x1 * w), int(y1 * h), max(int(x1 * w) + 8, int(x2 * w)), max(int(y1 * h) + 8, int(y2 * h))))
    return img


def app_view(img: Image.Image) -> np.ndarray:
    """View 0: the app's input made from its frame (mirror-extended to 4:3, stretched to SIZE x SIZE)."""
    return np.asarray(extend_to_4_3(img).resize((SIZE, SIZE), Image.BILINEAR))


def augment(img: Image.Image, rng: random.Random) -> Image.Image:
    w, h = img.size
    area = rng.uniform(0.45, 1.0)
    ar = math.exp(rng.uniform(math.log(3 / 4), math.log(4 / 3)))
    cw = min(w, max(8, int(round(math.sqrt(area * w * h * ar)))))
    ch = min(h, max(8, int(round(math.sqrt(area * w * h / ar)))))
    x, y = rng.randint(0, w - cw), rng.randint(0, h - ch)
    img = img.crop((x, y, x + cw, y + ch))
    img = extend_to_4_3(img).resize((SIZE, SIZE), Image.BILINEAR)
    if rng.random() < 0.5:
        img = ImageOps.mirror(img)
    if rng.random() < 0.1:
        img = img.rotate(rng.choice([90, 180, 270]))
    img = ImageEnhance.Brightness(img).enhance(rng.uniform(0.65, 1.35))
    img = ImageEnhance.Contrast(img).enhance(rng.uniform(0.7, 1.3))
    img = ImageEnhance.Color(img).enhance(rng.uniform(0.5, 1.4))
    if rng.random() < 0.05:
        img = ImageOps.grayscale(img).convert("RGB")
    if rng.random() < 0.2:
        img = img.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.2)))
    if rng.random() < 0.3:
        buf = io.BytesIO()
        img.save(buf, "JPEG", quality=rng.randint(35, 90))
        img = Image.open(io.BytesIO(buf.getvalue())).convert("RGB")
    return img


def degrade(img: Image.Image, rng: random.Random) -> Image.Image:
    """A tread photo past reading: heavily out of focus, or nearly black."""
    img = extend_to_4_3(img).resize((SIZE, SIZE), Image.BILINEAR)
    if rng.random() < 0.5:
        return img.filter(ImageFilter.GaussianBlur(rng.uniform(4.0, 8.0)))
    a = np.asarray(img).astype(np.float32) * rng.uniform(0.03, 0.1)
    a += np.random.default_rng(rng.randrange(1 << 30)).normal(0, rng.uniform(0.5, 2.5), a.shape)
    return Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))


def views_of(job):
    i, path, box, setname, scene, seed = job
    rng = random.Random(seed)
    try:
        img = load(path, box)
    except Exception as e:  # noqa: BLE001 - a photo that will not decode is reported, not fatal
        return i, None, str(e)
    out = [(app_view(img), 0, False)]
    n = VIEWS.get(setname, DEFAULT_VIEWS)
    if setname == "michelin-twi":
        out.append((np.asarray(ImageOps.mirror(Image.fromarray(out[0][0]))), 1, False))
    else:
        for v in range(1, n):
            out.append((np.asarray(augment(img, rng)), v, False))
    if scene == rd.TREAD and setname != "michelin-twi" and rng.random() < DEGRADE_P:
        out.append((np.asarray(degrade(img, rng)), n, True))
    return i, out, None


def trunk(pretrained: str) -> MobileNetV2:
    net = MobileNetV2()
    net.load_state_dict(torch.load(pretrained, map_location="cpu"))
    return net.eval()


def pooled(net: MobileNetV2, x: torch.Tensor) -> torch.Tensor:
    """x: N x 3 x H x W in 0..1 (nsfwjs' own input range) -> N x FEATURES."""
    x = net.stem(x)
    for b in net.blocks[:13]:
        x = b(x)
    b12 = x.mean((2, 3))
    for b in net.blocks[13:]:
        x = b(x)
    h = net.head(x)
    return torch.cat([b12, x.mean((2, 3)), x.amax((2, 3)), h.mean((2, 3)), h.amax((2, 3))], 1)


@torch.no_grad()
def run_trunk(net: MobileNetV2, u8: np.ndarray) -> np.ndarray:
    x = torch.from_numpy(u8).permute(0, 3, 1, 2).float() / 255.0
    return pooled(net, x).half().numpy()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--realdata", required=True)
    ap.add_argument("--debian", default=None)
    ap.add_argument("--renders", default=None)
    ap.add_argument("--pretrained", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=int, default=0, help="N random samples only (a smoke test)")
    ap.add_argument("--sets", default="", help="comma-separated set names to keep (default: all)")
    a = ap.parse_args()
    torch.set_num_threads(2)
    samples = rd.all_samples(a.realdata, a.debian, a.renders, seed=a.seed)
    if a.sets:
        keep = set(a.sets.split(","))
        samples = [s for s in samples if s.set in keep]
    if a.limit:
        samples = random.Random(1).sample(samples, a.limit)
    net = trunk(a.pretrained)
    jobs = [(i, s.path, s.box, s.set, s.scene, a.seed * 1_000_003 + i) for i, s in enumerate(samples)]
    feats, meta, failed = [], [], []
    t0 = time.time()
    buf, bufmeta = [], []

    def flush():
        if buf:
            feats.append(run_trunk(net, np.stack(buf)))
            meta.extend(bufmeta)
            buf.clear()
            bufmeta.clear()

    with Pool(a.workers) as pool:
        for k, (i, out, err) in enumerate(pool.imap_unordered(views_of, jobs, chunksize=8)):
            if out is None:
                failed.append((samples[i].path, err))
                continue
            for u8, v, degraded in out:
                buf.append(u8)
                bufmeta.append((i, v, degraded))
            if len(buf) >= 256:
                flush()
            if k % 500 == 0:
                print(f"{k}/{len(jobs)} samples, {sum(len(f) for f in feats)} views, {time.time() - t0:.0f} s", flush=True)
    flush()
    f = np.concatenate(feats)
    idx = np.array([m[0] for m in meta], np.int32)
    s = [samples[i] for i in idx]
    sets = sorted({x.set for x in samples})
    np.savez(
        a.out,
        feats=f,
        sample=idx,
        view=np.array([m[1] for m in meta], np.int16),
        degraded=np.array([m[2] for m in meta], bool),
        scene=np.array([rd.NOT_READ if m[2] else x.scene for m, x in zip(meta, s)], np.int8),
        worn=np.array([-1 if m[2] else x.worn for m, x in zip(meta, s)], np.int8),
        depth=np.array([math.nan if m[2] else x.depth for m, x in zip(meta, s)], np.float32),
        pct=np.array([x.pct for x in s], np.float32),
        setid=np.array([sets.index(x.set) for x in s], np.int8),
        sets=np.array(sets),
        group=np.array([x.group for x in s]),
        key=np.array([x.key for x in s]),
        kind=np.array([x.extra.get("kind", "") for x in s]),
    )
    print(f"wrote {a.out}: {len(f)} views of {len(samples) - len(failed)} samples in {time.time() - t0:.0f} s; {len(failed)} failed")
    for p, e in failed[:20]:
        print("  failed:", p, e)


if __name__ == "__main__":
    main()
