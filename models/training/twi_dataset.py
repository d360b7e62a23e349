"""Shards for the TWI detector experiment (train_twi.py; 2026-11-24, not shipped: models/NOTEBOOK.md,
"A TWI detector on the tread crop"): the tread crop at TWI_INPUT px and its TWI bars.

    python twi_dataset.py --count 16000 --seed-base 8000000 --out data/twi
    python twi_dataset.py --count 1000 --seed-base 8100000 --out data/twival

The segmenter reads the whole frame at 160 x 160, where a bar is a few pixels and its TWI class
never became a detector (models/NOTEBOOK.md, TWI). The detector reads the crop of the tread the app
already cuts for the crop reader (preprocess.tread_box on the 80 x 80 tread mask, here the
render's own), at TWI_INPUT x TWI_INPUT, close to the photo's own resolution, and marks the bars on
a TWI_INPUT / 4 grid. Renders are drawn like the calibration photos (make_dataset.sample at
PHOTO_SIZES, JPEG q80 round trip), non-tires included (the crop is then the whole frame).

Shards (npz): x uint8 N x TWI_INPUT x TWI_INPUT x 3; twi uint8 N x TWI_INPUT / 4 x TWI_INPUT / 4 (a cell is a
bar where bars cover at least TWI_COVER of it); groove uint8 (main groove or bar, the same rule);
bars int16 (the bars visible in the crop: make_dataset.bar_count); is_tire, min_depth. Image i
uses seed seed_base + i.
"""
from __future__ import annotations

import argparse
import os
import sys
from multiprocessing import Pool

import cv2
import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(__file__))
import make_dataset as md  # noqa: E402
import preprocess as pp  # noqa: E402
import tread_render as tr  # noqa: E402

TWI_INPUT = 256  # the crop's side; the maps are a quarter of it (TWI_INPUT // 4 = 64)
TWI_COVER = 0.2


def grid(mask: np.ndarray, side: int) -> np.ndarray:
    return (cv2.resize(mask.astype(np.float32), (side, side), interpolation=cv2.INTER_AREA) >= TWI_COVER).astype(np.uint8)


def one(seed: int, scale: float = 1.0, size: int = TWI_INPUT):
    """One render at `scale` times the calibration photo size, its crop at size x size, the maps at
    size / 4 (the network's stride)."""
    img, cls, dmap, lab = md.sample(seed, md.photo_sizes(scale))
    img = md.as_photo(img)
    img, cls, _ = md.tread_crop(img, cls, dmap)
    x = pp.to_input_u8(Image.fromarray(img), size)
    twi = cls == tr.BG_TWI
    groove = (cls == tr.BG_GROOVE) | twi
    return x, grid(twi, size // 4), grid(groove, size // 4), md.bar_count(twi), bool(lab["is_tire"]), float(lab["min_depth"])


def shard(args):
    start, n, seed_base, out, scale, size = args
    path = os.path.join(out, f"twi_{start:06d}.npz")
    if os.path.exists(path):
        return path
    rows = [one(seed_base + i, scale, size) for i in range(start, start + n)]
    tmp = os.path.join(out, f".partial-twi_{start:06d}.npz")
    np.savez(tmp, x=np.stack([r[0] for r in rows]), twi=np.stack([r[1] for r in rows]),
             groove=np.stack([r[2] for r in rows]), bars=np.array([r[3] for r in rows], np.int16),
             is_tire=np.array([r[4] for r in rows]), min_depth=np.array([r[5] for r in rows], np.float32))
    os.replace(tmp, path)
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--seed-base", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--shard", type=int, default=500)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--photo-scale", type=float, default=1.0,
                    help="render the photos this many times larger (bars with more pixels; with --input to keep them)")
    ap.add_argument("--input", type=int, default=TWI_INPUT, help="the crop's side (a multiple of 16; the maps are a quarter of it)")
    a = ap.parse_args()
    if a.input % 16:
        ap.error("--input must be a multiple of 16")
    os.makedirs(a.out, exist_ok=True)
    jobs = [(s, min(a.shard, a.count - s), a.seed_base, a.out, a.photo_scale, a.input) for s in range(0, a.count, a.shard)]
    with Pool(a.workers) as pool:
        for p in pool.imap_unordered(shard, jobs):
            print(p, flush=True)


if __name__ == "__main__":
    main()
