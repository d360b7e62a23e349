"""Fixtures for test/analysis/preprocess.test.ts: a few images and the exact
uint8 model input the training pipeline (preprocess.py) makes of each.

    python make_parity_fixtures.py ../../test/fixtures/tires/parity
"""
from __future__ import annotations

import os
import sys

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(__file__))
import preprocess as pp  # noqa: E402
from make_dataset import sample  # noqa: E402


def main(out: str):
    os.makedirs(out, exist_ok=True)
    img, *_ = sample(9100001, [(400, 300)])
    a = Image.fromarray(img)
    a.save(os.path.join(out, "tread.jpg"), quality=90)
    img2, *_ = sample(9100002, [(300, 400)])
    Image.fromarray(img2).save(os.path.join(out, "tread.png"))
    # Same pixels stored sideways with EXIF orientation 6 (rotate 90 CW to view).
    exif = Image.Exif()
    exif[0x0112] = 6
    a.transpose(Image.Transpose.ROTATE_90).save(os.path.join(out, "tread-exif6.jpg"), quality=90, exif=exif)
    for name in ("tread.jpg", "tread.png", "tread-exif6.jpg"):
        u8 = pp.to_input_u8(pp.load_rgb(os.path.join(out, name)))
        u8.tofile(os.path.join(out, name + f".{pp.INPUT}x{pp.INPUT}.rgb"))
        print(name, u8.shape, u8.mean())


if __name__ == "__main__":
    main(sys.argv[1])
