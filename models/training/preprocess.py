"""Model input preprocessing, mirrored by src/core/analysis/preprocess.ts.

The whole frame (EXIF-rotated) is stretched to INPUT x INPUT with a linear
(triangle) filter, RGB, scaled to 0..1, then normalised per channel.
test/analysis/preprocess.test.ts checks that Node produces the same tensor.
"""
from __future__ import annotations

import io
import math

import numpy as np
from PIL import Image, ImageOps

INPUT = 160
OUT = 80  # segmentation / dense-depth output grid
MEAN = np.array([0.5, 0.5, 0.5], np.float32)
STD = np.array([0.5, 0.5, 0.5], np.float32)  # MobileNetV2 (Keras) expects -1..1


def rgb(img: Image.Image) -> Image.Image:
    """RGB, with any transparency laid over black, as the app's decode does (sharp's flatten in
    src/core/images/inspect.ts). Renders and photos have no alpha; this keeps cut-outs consistent."""
    if img.mode in ("RGBA", "LA", "PA") or (img.mode == "P" and "transparency" in img.info):
        img = Image.alpha_composite(Image.new("RGBA", img.size, (0, 0, 0, 255)), img.convert("RGBA"))
    return img.convert("RGB")


def load_rgb(path: str) -> Image.Image:
    img = Image.open(path)
    img = ImageOps.exif_transpose(img)
    return rgb(img)


def to_input_u8(img: Image.Image, size: int = INPUT) -> np.ndarray:
    """uint8 HxWx3 at size x size (INPUT unless a crop reader takes another size)."""
    return np.asarray(img.resize((size, size), Image.BILINEAR), dtype=np.uint8)


def normalise(u8: np.ndarray) -> np.ndarray:
    """uint8 NxHxWx3 -> float32 Nx3xHxW."""
    x = u8.astype(np.float32) / 255.0
    x = (x - MEAN) / STD
    return np.ascontiguousarray(np.moveaxis(x, -1, -3))


# The tread crop (since 2026.11.9): the regressor reads the photo a second time, cropped to the
# box around the tread the segmenter found on the whole frame, at the photo's own resolution.
# Mirrored by treadBox() in src/core/analysis/mask.ts; the parameters live in the manifest.
CROP = {"margin": 0.08, "maxAspect": 16 / 9, "lowPercentile": 1.0, "highPercentile": 99.0, "minCells": 20, "minSide": 16}


def tread_box(tread: np.ndarray, w: int, h: int, crop: dict = CROP):
    """Pixel box (x0, y0, x1, y1) of a w x h image around the cells of a side x side tread mask,
    or None when too little tread was found. Percentiles of the cell coordinates (numpy's linear
    rule) drop stray cells; a margin on each side; the shorter side is widened so the crop is never
    more elongated than maxAspect (it is stretched to a square like the whole frame)."""
    ys, xs = np.nonzero(tread)
    if len(xs) < crop["minCells"]:
        return None
    side = tread.shape[0]
    lo, hi = crop["lowPercentile"], crop["highPercentile"]
    x0, x1 = np.percentile(xs, lo) / side * w, (np.percentile(xs, hi) + 1) / side * w
    y0, y1 = np.percentile(ys, lo) / side * h, (np.percentile(ys, hi) + 1) / side * h
    mw, mh = (x1 - x0) * crop["margin"], (y1 - y0) * crop["margin"]
    x0, x1, y0, y1 = x0 - mw, x1 + mw, y0 - mh, y1 + mh
    bw, bh, a = x1 - x0, y1 - y0, crop["maxAspect"]
    if bw > a * bh:
        e = bw / a - bh
        y0, y1 = y0 - e / 2, y1 + e / 2
    elif bh > a * bw:
        e = bh / a - bw
        x0, x1 = x0 - e / 2, x1 + e / 2
    x0, y0 = max(0, math.floor(x0)), max(0, math.floor(y0))
    x1, y1 = min(w, math.ceil(x1)), min(h, math.ceil(y1))
    if x1 - x0 < crop["minSide"] or y1 - y0 < crop["minSide"]:
        return None
    return int(x0), int(y0), int(x1), int(y1)


def crop_input_u8(img: Image.Image, box, size: int = INPUT) -> np.ndarray:
    """uint8 size x size x 3 of the box (the whole frame when box is None)."""
    return to_input_u8(img if box is None else img.crop(box), size)


# The frame the app analyses (frameLongSide / decodeFrame in src/core/images/inspect.ts): an upload
# scaled to fit FRAME_MAX px, a JPEG decoded at libjpeg's coarsest scale (1/8, 1/4, 1/2) that still
# leaves FRAME_MIN px on the long side (sharp takes the 1/s decode for a shrink of at least s + 1).
FRAME_MIN, FRAME_MAX, JPEG_SCALES = 400, 640, (8, 4, 2)


def jpeg_scale(w: int, h: int) -> int:
    """The 1/s scale libjpeg decodes a JPEG at for the app's frame (1 when none applies)."""
    for s in JPEG_SCALES:
        if max(w, h) // (s + 1) >= FRAME_MIN:
            return s
    return 1


def frame_long_side(is_jpeg: bool, w: int, h: int) -> int:
    long = max(w, h)
    s = jpeg_scale(w, h) if is_jpeg else 1
    return min(FRAME_MAX, long // (s + 1) if s > 1 else long)


def app_frame(data: bytes) -> Image.Image:
    """The app's frame of an upload, as near as Pillow comes: the same size, reached the same way.
    A JPEG the app decodes at libjpeg's 1/s scale is decoded at that scale here too (Pillow's
    draft(), asked before exif_transpose, which decodes the file), then reduced with the triangle
    filter like sharp's linear kernel. Close to sharp, not bit-identical:
    test/analysis/preprocess.test.ts bounds the difference. A photo that needs no scaling, like the
    300-400 px calibration photos, is returned as decoded, which is bit-identical. (The shipped
    2026.11.12 was calibrated from Pillow's full decode; with this one its constants move by at
    most 0.006 and held-out figures by 0.01 mm at most: models/NOTEBOOK.md.)"""
    img = Image.open(io.BytesIO(data))
    is_jpeg = img.format == "JPEG"
    w, h = img.size  # as stored; a quarter turn swaps them, the long side and the scale stay
    side = frame_long_side(is_jpeg, w, h)
    if side >= max(w, h):
        return rgb(ImageOps.exif_transpose(img))
    s = jpeg_scale(w, h) if is_jpeg else 1
    if img.getexif().get(0x0112, 1) in (5, 6, 7, 8):  # a quarter turn: upright is h x w
        w, h = h, w
    if s > 1:
        img.draft("RGB", (img.width // s, img.height // s))
    img = ImageOps.exif_transpose(img)
    scale = side / max(w, h)
    return rgb(img).resize((max(1, round(w * scale)), max(1, round(h * scale))), Image.BILINEAR)


# The photo-size term of the stack (since 2026.11.12): log2 of the upload's long side over the
# size the networks were trained and first calibrated on, 0 below it and capped at the largest
# size the calibration split held (the manifest's calibration.photoSize), so it never extrapolates.
SIZE_REFERENCE = 400


def size_feature(long_side, cap: float) -> np.ndarray:
    return np.clip(np.log2(np.maximum(np.asarray(long_side, np.float64), 1) / SIZE_REFERENCE), 0, cap)
