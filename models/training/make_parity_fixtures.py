"""Fixtures for test/analysis/preprocess.test.ts: a few images and the exact
uint8 model input the training pipeline (preprocess.py) makes of each.

    python make_parity_fixtures.py ../../test/fixtures/tires/parity
"""
from __future__ import annotations

import json
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
    # The tread crop (since 2026.11.9): the box rule on a few masks and image sizes, and the crop's
    # pixels, against src/core/analysis/mask.ts treadBox and preprocess.ts cropPixels.
    rng = np.random.default_rng(9100003)
    side = pp.OUT
    yy, xx = np.mgrid[0:side, 0:side]
    masks = {
        "ellipse": ((xx - 30) / 22.0) ** 2 + ((yy - 44) / 13.0) ** 2 <= 1,
        "band": (xx >= 5) & (xx < 75) & (yy >= 60) & (yy < 68),
        "tall": (xx >= 38) & (xx < 44) & (yy >= 3),
        "few": np.zeros((side, side), bool),
        "small": (xx >= 20) & (xx < 30) & (yy >= 20) & (yy < 35),
    }
    masks["ellipse"] |= rng.random((side, side)) < 0.004  # stray cells the percentiles drop
    masks["few"][10, 10:25] = True
    cases = []
    for name, mask in masks.items():
        for w, h in ((400, 300), (300, 400), (640, 480), (90, 60)):
            for crop in (pp.CROP, {**pp.CROP, "maxAspect": 1.0, "margin": 0.2}):
                cases.append({"mask": name, "width": w, "height": h, "crop": crop,
                              "box": pp.tread_box(mask, w, h, crop)})
    img = pp.load_rgb(os.path.join(out, "tread.jpg"))
    box = pp.tread_box(masks["ellipse"], img.width, img.height)
    pp.crop_input_u8(img, box).tofile(os.path.join(out, f"tread.jpg.crop.{pp.INPUT}x{pp.INPUT}.rgb"))
    png = pp.load_rgb(os.path.join(out, "tread.png"))  # PNG: both sides decode the same pixels
    png_box = pp.tread_box(masks["small"], png.width, png.height, {**pp.CROP, "maxAspect": 1.0, "margin": 0.2})
    pp.crop_input_u8(png, png_box).tofile(os.path.join(out, f"tread.png.crop.{pp.INPUT}x{pp.INPUT}.rgb"))
    # A crop reader may take a larger side than INPUT (models.crop.size, finalize.py --crop-input)
    pp.crop_input_u8(png, png_box, 224).tofile(os.path.join(out, "tread.png.crop.224x224.rgb"))
    with open(os.path.join(out, "crop.json"), "w") as f:
        json.dump({"masks": {k: np.flatnonzero(v).tolist() for k, v in masks.items()}, "side": side,
                   "cases": cases, "cropOfTreadJpg": box, "cropOfTreadPng": png_box}, f)
        f.write("\n")
    print("crop cases", len(cases), "tread.jpg box", box)
    # A large photo (since 2026.11.12, whose calibration holds photos up to 5.6 times the training
    # size): the app decodes it at libjpeg's 1/2 scale and scales it to a 533 x 400 frame;
    # preprocess.app_frame does the same with Pillow (libjpeg's 1/2 decode since 2026-11-24, then the
    # triangle filter), close to it but not to the bit. The test bounds the difference of the
    # network inputs.
    big, *_ = sample(9100004, [(1600, 1200)])
    Image.fromarray(big).save(os.path.join(out, "tread-large.jpg"), quality=85)
    with open(os.path.join(out, "tread-large.jpg"), "rb") as f:
        frame = pp.app_frame(f.read())
    pp.to_input_u8(frame).tofile(os.path.join(out, f"tread-large.jpg.{pp.INPUT}x{pp.INPUT}.rgb"))
    print("tread-large.jpg frame", frame.size)


if __name__ == "__main__":
    main(sys.argv[1])
