"""Generate the synthetic training/validation shards and the held-out test set.

    python make_dataset.py --split train --count 16000 --seed-base 0
    python make_dataset.py --split heldout --count 200 --out ../../test/fixtures/tires/heldout
    python make_dataset.py --split cal --count 2000 --seed-base 6000000 --out data

Splits train and val render at SIZES straight into the shard; cal (calibration) and
heldout render like photos reaching the service (PHOTO_SIZES, JPEG q80 round trip); the crop
splits render the same way and keep the box around the tread. `--frames NAME` with a crop split
also writes each render's whole frame into NAME_*.npz (one render, two shards: the experiment of
2026-11-23 in models/NOTEBOOK.md, "Stage twelve, tried and not shipped"):

    python make_dataset.py --split crop3 --frames frame --count 36000 --seed-base 7300000 --out data

`--input N` stores a crop split's crops at N x N instead of preprocess.INPUT (a crop reader with a
larger input; the experiment of 2026-11-23, "The crop reader at 224 x 224", not shipped):

    python make_dataset.py --split cropL --input 224 --count 20000 --seed-base 7400000 --out data

`--photo-scale K` renders the heldout or cal photos K times larger than PHOTO_SIZES (large photos, as
a phone takes them; the experiment of 2026-11-23, sixteenth session, models/NOTEBOOK.md "Large
photos"; a cal split at another scale goes into its own --out folder):

    python make_dataset.py --split heldout --count 600 --seed-base 9100000 --photo-scale 5.6 --out data/heldoutHR

and a crop split's renders too (the same scenes at twice the size, stored at an input that keeps
their pixels; the experiment of 2026-11-25, models/NOTEBOOK.md "Does the crop reader read better from
finer renders?"):

    python make_dataset.py --split cropX --input 320 --photo-scale 2 --count 8000 --seed-base 7800000 --out data/x2

`--tone P` gives a share P of a crop split's renders a phone-like tone mapping (`tone_vary`; the
experiment of 2026-11-24, twentieth session, models/NOTEBOOK.md "Phone-like tone mapping for the crop
reader"; the renders themselves are those of --tone 0):

    python make_dataset.py --split cropH --tone 0.5 --count 10000 --seed-base 7600000 --out data

Held-out folders get a labels.csv of file, depthMm, wear and twiBars (the TWI bars visible in the
render, `bar_count`; empty for a photo without a tire), which `npm run eval` reads.

Shards (npz): x uint8 Nx160x160x3 (or NxNxNx3 with --input; preprocess.to_input_u8 of the rendered
JPEG), cls uint8 Nx80x80 (0 none, 1 tread, 2 main groove, 3 TWI), dmap f16
Nx80x80 (local main-groove depth, mm), and per-image labels. Image i of a
split uses seed seed_base + i, so any image can be re-rendered alone.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import sys
from multiprocessing import Pool

import cv2
import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(__file__))
import preprocess as pp  # noqa: E402
import tread_render as tr  # noqa: E402

BANDS = [("critical", 0.4, 1.6), ("worn", 1.6, 3.0), ("medium", 3.0, 5.0), ("good", 5.0, 7.0), ("new", 7.0, 10.5)]
WEAR_INDEX = {"new": 0, "good": 1, "medium": 2, "worn": 3, "critical": 4}
SIZES = [(320, 240), (240, 320), (288, 288), (320, 180), (180, 320)]
# Held-out photos (and the "cal" split that calibrates on the same path): larger frames,
# saved as JPEG q80 and decoded again, as a photo reaches the service.
PHOTO_SIZES = [(400, 300), (300, 400), (360, 360)]
PHOTO_QUALITY = 80
NEG_SHARE = 0.15
# crop / cropval (since 2026.11.9): photo-like renders cut to the tread, for training the regressor
# that reads the app's crop; crop2 (since 2026.11.11): more of them, for stage eleven (another name,
# so that its shards do not take the names of stage ten's); crop3: the stage-twelve experiment of
# 2026-11-23 (not shipped), written with --frames
# cropL / cropvalL: the crop reader at a larger input (--input 224), the experiment of 2026-11-23
# (fifteenth session, models/NOTEBOOK.md)
# cropH / cropvalH: crops with phone-like tone mapping (--tone), the experiment of 2026-11-24
# (twentieth session, models/NOTEBOOK.md)
# cropX / cropvalX: the same scenes at 1x and 2x (--photo-scale) with a crop reader input that keeps
# the 2x crop's pixels (--input 320), the experiment of 2026-11-25 (twenty-seventh session,
# models/NOTEBOOK.md "Does the crop reader read better from finer renders?")
CROP_SPLITS = ("crop", "crop2", "crop3", "cropval", "cropL", "cropvalL", "cropH", "cropvalH", "cropX", "cropvalX")
# --tone draws from its own stream of each image's seed, so the render itself is the one without it
TONE_STREAM = 0x70E

_photos: list[np.ndarray] | None = None


def photos() -> list[np.ndarray]:
    global _photos
    if _photos is None:
        import skimage.data as d
        names = ["astronaut", "brick", "camera", "chelsea", "clock", "coffee", "coins", "colorwheel", "grass", "gravel",
                 "horse", "moon", "page", "rocket", "text", "immunohistochemistry", "hubble_deep_field", "retina", "cell"]
        out = []
        for n in names:
            a = np.asarray(getattr(d, n)())
            if a.dtype != np.uint8:
                a = (a.astype(np.float32) / max(a.max(), 1) * 255).astype(np.uint8)
            if a.ndim == 2:
                a = np.stack([a] * 3, -1)
            out.append(np.ascontiguousarray(a[..., :3]))
        _photos = out
    return _photos


def wear_of(depth: float) -> str:
    if depth >= 7.0:
        return "new"
    if depth >= 5.0:
        return "good"
    if depth >= 3.0:
        return "medium"
    if depth >= 1.6:
        return "worn"
    return "critical"


def clutter(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
    """Non-tire scenes: photo crops, stripes and gratings, shapes, dark rubber-like textures."""
    kind = rng.choice(["photo", "stripes", "shapes", "dark", "scene"], p=[0.4, 0.2, 0.15, 0.15, 0.1])
    if kind == "scene":
        r = tr.render(rng, 5.0, (w, h), photos(), with_tire=False)
        return r["image"]
    if kind == "photo":
        p = photos()[int(rng.integers(0, len(photos())))]
        s = rng.uniform(0.3, 1.0)
        ch, cw = max(32, int(p.shape[0] * s)), max(32, int(p.shape[1] * s))
        y, x = int(rng.integers(0, p.shape[0] - ch + 1)), int(rng.integers(0, p.shape[1] - cw + 1))
        img = cv2.resize(p[y:y + ch, x:x + cw], (w, h), interpolation=cv2.INTER_AREA).astype(np.float32)
        if rng.random() < 0.5:
            img = img[:, ::-1]
        img = img * rng.uniform(0.5, 1.3, 3) + rng.uniform(-30, 30)
    elif kind == "stripes":
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        a = rng.uniform(0, np.pi)
        period = rng.uniform(6, 40)
        s = np.sin((xx * math.cos(a) + yy * math.sin(a)) * 2 * np.pi / period)
        base = rng.uniform(10, 120)
        img = (base + rng.uniform(10, 80) * (s > rng.uniform(-0.5, 0.5)))[..., None] * rng.uniform(0.6, 1.2, 3)
    elif kind == "shapes":
        img = np.full((h, w, 3), rng.uniform(0, 255, 3), np.float32)
        for _ in range(int(rng.integers(3, 15))):
            col = tuple(float(c) for c in rng.uniform(0, 255, 3))
            if rng.random() < 0.5:
                cv2.circle(img, (int(rng.integers(0, w)), int(rng.integers(0, h))), int(rng.integers(5, w // 2)), col, -1)
            else:
                p1 = (int(rng.integers(0, w)), int(rng.integers(0, h)))
                p2 = (int(rng.integers(0, w)), int(rng.integers(0, h)))
                cv2.rectangle(img, p1, p2, col, -1)
    else:
        n = tr._noise(rng, (h, w), [(2, 0.3), (8, 0.3), (30, 0.4)])
        img = (rng.uniform(10, 60) * np.exp(n))[..., None] * np.array([1, 1, rng.uniform(0.9, 1.1)])
    img = cv2.GaussianBlur(img.astype(np.float32), (0, 0), rng.uniform(0.3, 1.5))
    img = img + rng.normal(0, rng.uniform(1, 8), img.shape)
    img = np.clip(img, 0, 255).astype(np.uint8)
    ok, enc = cv2.imencode(".jpg", np.ascontiguousarray(img[..., ::-1]), [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(40, 95))])
    return cv2.imdecode(enc, cv2.IMREAD_COLOR)[..., ::-1].copy()


def sample(seed: int, sizes=SIZES):
    rng = np.random.default_rng(seed)
    w, h = sizes[int(rng.integers(0, len(sizes)))]
    if rng.random() < NEG_SHARE:
        img = clutter(rng, w, h)
        return img, np.zeros((h, w), np.uint8), np.zeros((h, w), np.float32), {
            "is_tire": False, "gate_w": 1.0, "min_depth": float("nan"), "tread_frac": 0.0, "mean_depth": float("nan")}
    band = BANDS[int(rng.integers(0, len(BANDS)))]
    depth = float(rng.uniform(band[1], band[2]))
    r = tr.render(rng, depth, (w, h), photos())
    lab = r["labels"]
    tf = lab["tread_frac"]
    lab["gate_w"] = 0.0 if 0.005 <= tf < 0.03 else 1.0
    return r["image"], r["cls"], r["depth"], lab


TWI_MIN_PX = 4  # a visible TWI bar: a connected region of at least this many pixels of the class map


def bar_count(twi_mask: np.ndarray) -> int:
    """The TWI bars visible in a render: connected regions (8-neighbour) of its TWI pixels."""
    _, _, stats, _ = cv2.connectedComponentsWithStats(twi_mask.astype(np.uint8), connectivity=8)
    return int((stats[1:, cv2.CC_STAT_AREA] >= TWI_MIN_PX).sum())


def cls_grid(cls):
    """The class map at the segmenter's OUT x OUT grid."""
    c = cv2.resize(cls, (pp.OUT, pp.OUT), interpolation=cv2.INTER_NEAREST)
    # keep thin TWI bars and grooves alive through the downscale
    for k in (tr.BG_GROOVE, tr.BG_TWI):
        m = cv2.resize((cls == k).astype(np.float32), (pp.OUT, pp.OUT), interpolation=cv2.INTER_AREA) > 0.3
        c[m] = k
    return c


def to_arrays(img, cls, dmap, size: int = pp.INPUT):
    x = pp.to_input_u8(Image.fromarray(img), size)
    d = cv2.resize(dmap, (pp.OUT, pp.OUT), interpolation=cv2.INTER_NEAREST)
    return x, cls_grid(cls), d.astype(np.float16)


def photo_jpeg(img: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="JPEG", quality=PHOTO_QUALITY)
    return buf.getvalue()


def decode(jpeg: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(jpeg)).convert("RGB"))


def as_photo(img: np.ndarray) -> np.ndarray:
    return decode(photo_jpeg(img))


def tone_vary(rng: np.random.Generator, img: np.ndarray) -> np.ndarray:
    """A phone's tone mapping, which the renderer's camera lacks (it has exposure, white balance and
    a gamma): often the local contrast compressed as HDR pipelines do (the blurred log-luminance
    pulled toward its bright end, the detail kept), then a global curve lifting the shadows."""
    x = img.astype(np.float32) / 255
    if rng.random() < 0.6:
        lum = x.mean(-1) + 1e-3
        log = np.log(lum)
        base = cv2.GaussianBlur(log, (0, 0), max(img.shape[:2]) * rng.uniform(0.03, 0.12))
        anchor = np.percentile(base, 90)
        squeezed = anchor + rng.uniform(0.35, 0.9) * (base - anchor) + (log - base)
        x = x * np.exp(squeezed - log)[..., None]
    x = np.clip(x, 0, 1) ** rng.uniform(0.45, 1.0)
    return (x * 255 + 0.5).astype(np.uint8)


def photo_path(out_dir: str, split: str, start: int) -> str:
    """The photos of a cal shard, as the JPEG bytes the service would receive (finalize.py crops the
    tread out of them at their own resolution). Not matched by the f"{split}_*.npz" shard glob."""
    return os.path.join(out_dir, f"{split}photo_{start:06d}.npz")


def load_photos(shard_path: str, take: int) -> list[bytes]:
    d, name = os.path.split(shard_path)
    split, start = name[:-4].rsplit("_", 1)
    with np.load(photo_path(d, split, int(start))) as z:
        data, off = z["jpeg"], z["offsets"]
    return [data[off[i]:off[i + 1]].tobytes() for i in range(min(take, len(off) - 1))]


def tread_crop(img, cls, dmap):
    """The crop the app reads for its second look, with the box from the rendered tread mask
    (at the segmenter's 80 x 80 grid, as the app sees it) instead of the segmenter's guess; the
    whole frame when there is too little tread for a box."""
    box = pp.tread_box(cls_grid(cls) > 0, img.shape[1], img.shape[0])
    if box is None:
        return img, cls, dmap
    x0, y0, x1, y1 = box
    return img[y0:y1, x0:x1], cls[y0:y1, x0:x1], dmap[y0:y1, x0:x1]


def save_shard(out_dir: str, name: str, xs, cs, ds, labs, scale: float = 1.0) -> str:
    path = os.path.join(out_dir, f"{name}.npz")
    # written whole, then renamed: a killed run never leaves a short shard, and a loader globbing
    # f"{split}_*.npz" while this renders never sees a half-written one
    tmp = os.path.join(out_dir, f".partial-{name}.npz")
    np.savez(tmp, x=np.stack(xs), cls=np.stack(cs), dmap=np.stack(ds),
             is_tire=np.array([l["is_tire"] for l in labs]), gate_w=np.array([l["gate_w"] for l in labs], np.float32),
             min_depth=np.array([l["min_depth"] for l in labs], np.float32),
             tread_frac=np.array([l["tread_frac"] for l in labs], np.float32),
             mode=np.array([str(l.get("mode", "none")) for l in labs]),
             # per image, like every other key (the loaders slice each key by image); complete()
             # reads it so that a shard rendered at another --photo-scale is never reused
             photo_scale=np.full(len(labs), scale, np.float32))
    os.replace(tmp, path)
    return path


def photo_sizes(scale: float) -> list[tuple[int, int]]:
    return [(round(w * scale), round(h * scale)) for w, h in PHOTO_SIZES]


def shard(args):
    split, start, n, seed_base, out_dir, frames, size, scale, tone = args
    photo = split == "cal"
    crop = split in CROP_SPLITS
    xs, cs, ds, labs, jpegs = [], [], [], [], []
    fx, fc, fd = [], [], []
    for i in range(start, start + n):
        img, cls, dmap, lab = sample(seed_base + i, photo_sizes(scale) if photo or crop else SIZES)
        if photo:
            jpegs.append(photo_jpeg(img))
            img = decode(jpegs[-1])
        if tone and np.random.default_rng([seed_base + i, TONE_STREAM]).random() < tone:
            img = tone_vary(np.random.default_rng([seed_base + i, TONE_STREAM, 1]), img)
        if crop:
            img = as_photo(img)
            if frames:
                x, c, d = to_arrays(img, cls, dmap)
                fx.append(x), fc.append(c), fd.append(d)
            img, cls, dmap = tread_crop(img, cls, dmap)
        x, c, d = to_arrays(img, cls, dmap, size if crop else pp.INPUT)
        xs.append(x), cs.append(c), ds.append(d), labs.append(lab)
    if photo:  # written before the shard, whose presence marks both complete
        tmp = os.path.join(out_dir, f".partial-{split}photo_{start:06d}.npz")
        np.savez(tmp, jpeg=np.frombuffer(b"".join(jpegs), np.uint8),
                 offsets=np.cumsum([0] + [len(j) for j in jpegs]).astype(np.int64))
        os.replace(tmp, photo_path(out_dir, split, start))
    if frames:  # likewise
        save_shard(out_dir, f"{frames}_{start:06d}", fx, fc, fd, labs, scale)
    return save_shard(out_dir, f"{split}_{start:06d}", xs, cs, ds, labs, scale)


def heldout_one(args):
    """One held-out photo: (file name, labels row or None when the render is dropped)."""
    i, seed_base, out_dir, sizes = args
    img, cls, dmap, lab = sample(seed_base + i, sizes)
    name = f"syn_{i:04d}.jpg"
    if lab["is_tire"] and math.isfinite(lab["min_depth"]):
        row = (name, f"{lab['min_depth']:.2f}", wear_of(lab["min_depth"]), str(bar_count(cls == tr.BG_TWI)))
    elif not lab["is_tire"] and lab["tread_frac"] < 0.005:
        row = (name, "", "notire", "")
    else:
        return None
    Image.fromarray(img).save(os.path.join(out_dir, name), quality=PHOTO_QUALITY)
    return row


def heldout(count: int, seed_base: int, out_dir: str, workers: int = 1, scale: float = 1.0):
    """Held-out photos rendered like those reaching the service, each image from its own seed, so
    the set is the same whatever the number of workers. `scale` multiplies PHOTO_SIZES (a larger
    photo of a scene drawn the same way; its random draws differ from the 1x render's)."""
    os.makedirs(out_dir, exist_ok=True)
    jobs = [(i, seed_base, out_dir, photo_sizes(scale)) for i in range(count)]
    if workers > 1:
        with Pool(workers) as pool:
            rows = pool.map(heldout_one, jobs, chunksize=8)
    else:
        rows = [heldout_one(j) for j in jobs]
    with open(os.path.join(out_dir, "labels.csv"), "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["file", "depthMm", "wear", "twiBars"])
        wr.writerows(r for r in rows if r is not None)


def input_side(z) -> int:
    """The side of a shard's images, read from the x array's header without loading it."""
    with z.zip.open("x.npy") as f:
        major, _ = np.lib.format.read_magic(f)
        read = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
        return read(f)[0][1]


def complete(path: str, n: int, photos: bool = False, size: int = pp.INPUT, scale: float = 1.0) -> bool:
    """An existing shard is reused only when it holds exactly the images asked for, at the input
    size asked for (a run with a different shard size, count or --input renders it again instead
    of training on a short shard or the wrong size), and for the cal split only with its photos
    (shards written before 2026.11.9 have none), and only at the --photo-scale asked for (the
    shards record it since 2026-11-25)."""
    if not os.path.exists(path):
        return False
    try:
        with np.load(path) as z:
            if len(z["min_depth"]) != n or input_side(z) != size:
                return False
            if "photo_scale" in z.files:
                if not np.allclose(z["photo_scale"], scale):
                    return False
            # written before shards recorded it: a cal shard's photos tell its scale (below); any
            # other split could only be rendered at 1 then (but the first cropX ones, re-rendered)
            elif not photos and scale != 1.0:
                return False
        if photos:
            jpegs = load_photos(path, n)
            return len(jpegs) == n and Image.open(io.BytesIO(jpegs[0])).size in photo_sizes(scale)
        return True
    except Exception:  # truncated or foreign file (BadZipFile, OSError, KeyError, ...)
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--seed-base", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--shard", type=int, default=500)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--frames", default="",
                    help="crop splits: also write each render's whole photo-like frame into shards of this name "
                         "(the same images, uncropped)")
    ap.add_argument("--input", type=int, default=pp.INPUT,
                    help="crop splits: the side of the stored crops (the crop reader's input; the whole frames, "
                         "like every other split, stay at preprocess.INPUT)")
    ap.add_argument("--photo-scale", type=float, default=1.0,
                    help="heldout, cal and crop splits: render the photos this many times larger than "
                         "PHOTO_SIZES (large photos, as a phone takes them)")
    ap.add_argument("--tone", type=float, default=0.0,
                    help="crop splits: the share of renders given a phone-like tone mapping (tone_vary), "
                         "each decided by its own seed")
    a = ap.parse_args()
    if a.tone and a.split not in CROP_SPLITS:
        ap.error("--tone is for crop splits")
    if not 0 <= a.tone <= 1:
        ap.error("--tone is a share from 0 to 1")
    if a.photo_scale != 1.0 and a.split not in ("heldout", "cal", *CROP_SPLITS):
        ap.error("--photo-scale is for the heldout, cal and crop splits")
    if not 0.5 <= a.photo_scale <= 12:
        ap.error("--photo-scale must be between 0.5 and 12")
    if a.input != pp.INPUT and a.split not in CROP_SPLITS:
        ap.error("--input is for crop splits; every other split is stored at preprocess.INPUT")
    if not 32 <= a.input <= 512:
        ap.error("--input must be between 32 and 512")
    # the frames' shards need a name of their own: any split's name (or the photos' calphoto) would
    # overwrite, or be read as, that split's shards
    if a.frames and (a.split not in CROP_SPLITS or a.frames in ("train", "val", "cal", "calphoto", "heldout", *CROP_SPLITS)):
        ap.error("--frames takes a new shard name and needs a crop split")
    cv2.setNumThreads(1)
    if a.split == "heldout":
        heldout(a.count, a.seed_base, a.out, a.workers, a.photo_scale)
        return
    os.makedirs(a.out, exist_ok=True)
    jobs = [(a.split, s, min(a.shard, a.count - s), a.seed_base, a.out, a.frames, a.input, a.photo_scale, a.tone)
            for s in range(0, a.count, a.shard)]
    jobs = [j for j in jobs if not complete(os.path.join(a.out, f"{j[0]}_{j[1]:06d}.npz"), j[2], a.split == "cal", a.input,
                                            a.photo_scale)
            or (a.frames and not complete(os.path.join(a.out, f"{a.frames}_{j[1]:06d}.npz"), j[2]))]
    with Pool(a.workers) as pool:
        for p in pool.imap_unordered(shard, jobs):
            print("wrote", p, flush=True)


if __name__ == "__main__":
    main()
