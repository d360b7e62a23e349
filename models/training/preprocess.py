"""Model input preprocessing, mirrored by src/core/analysis/preprocess.ts.

The whole frame (EXIF-rotated) is stretched to INPUT x INPUT with a linear
(triangle) filter, RGB, scaled to 0..1, then normalised per channel.
test/analysis/preprocess.test.ts checks that Node produces the same tensor.
"""
from __future__ import annotations

import numpy as np
from PIL import Image, ImageOps

INPUT = 160
OUT = 80  # segmentation / dense-depth output grid
MEAN = np.array([0.5, 0.5, 0.5], np.float32)
STD = np.array([0.5, 0.5, 0.5], np.float32)  # MobileNetV2 (Keras) expects -1..1


def load_rgb(path: str) -> Image.Image:
    img = Image.open(path)
    img = ImageOps.exif_transpose(img)
    return img.convert("RGB")


def to_input_u8(img: Image.Image) -> np.ndarray:
    """uint8 HxWx3 at INPUT x INPUT."""
    return np.asarray(img.resize((INPUT, INPUT), Image.BILINEAR), dtype=np.uint8)


def normalise(u8: np.ndarray) -> np.ndarray:
    """uint8 NxHxWx3 -> float32 Nx3xHxW."""
    x = u8.astype(np.float32) / 255.0
    x = (x - MEAN) / STD
    return np.ascontiguousarray(np.moveaxis(x, -1, -3))
