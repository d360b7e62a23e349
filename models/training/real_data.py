"""The real photos of ../shared/realdata (read in place, never copied into the repository) and the
extra negatives, as one list of samples with the labels the scene reader learns.

    python real_data.py REALDATA_DIR          # prints what each set contributes

Scene classes (the gate's three outcomes, src/core/analysis/combine.ts):
  0 TREAD      a tire whose tread can be read (a close-up, a tire on a rack, a catalogue shot)
  1 NOT_READ   a tire whose tread cannot be read: a whole vehicle, a wheel seen from the side on a
               car, a tread photo blurred or darkened past reading (made here from tread photos)
  2 NO_TIRE    no tire: car bodies, roads and garages cut from outside the wheel boxes of
               vehicles-wheels, photos that Debian packages ship, the renderer's negatives

`worn`: 1 not usable (web-good-defective/defective, a render under 3.0 mm), 0 usable, -1 unknown.
`depth`: mm for renders, nan for real photos. `group` keeps photos that belong together in one
fold (the source's split or capture day). michelin-twi is listed for measuring only (`trainable`
False): its licence allows no shipped weights trained on it (realdata/README.md).
"""
from __future__ import annotations

import csv
import glob
import hashlib
import math
import os
import random
import sys
from dataclasses import dataclass, field

import numpy as np

TREAD, NOT_READ, NO_TIRE = 0, 1, 2
SCENES = ("tread", "tread_not_visible", "no_tire")
IMAGE_EXT = (".jpg", ".jpeg", ".png", ".webp")


@dataclass
class Sample:
    path: str
    set: str
    scene: int
    worn: int = -1
    depth: float = math.nan
    pct: float = math.nan  # michelin-twi twiRemainingPct
    box: tuple[float, float, float, float] | None = None  # x1, y1, x2, y2 as fractions of the upright photo
    group: str = ""
    trainable: bool = True
    extra: dict = field(default_factory=dict)

    @property
    def key(self) -> str:
        b = "" if self.box is None else ",".join(f"{v:.4f}" for v in self.box)
        return f"{self.set}:{self.path}:{b}"


def split_key(key) -> tuple[str, str, tuple[float, float, float, float] | None, str]:
    """A Sample.key back into its set, path, box (None for the whole photo) and the box as written."""
    name, rest = str(key).split(":", 1)
    path, text = rest.rsplit(":", 1)
    box = tuple(float(v) for v in text.split(",")) if text else None
    return name, path, box, text


def _fold_of(text: str, k: int = 5) -> int:
    return int(hashlib.sha1(text.encode()).hexdigest(), 16) % k


WEB_KINDS = ("worn", "flat", "damaged", "looks_usable", "other")


def web_defective_by_eye() -> dict[str, str]:
    """labels/web_defective_by_eye.csv: what each web-good-defective/defective photo shows, judged by
    eye from a 200-px thumbnail (2026-11-29, one person, once; a random 120 looked at again in
    labels/web_defective_by_eye_second.csv, web_kinds.py agree): worn tread, a flat, damage, a tire
    that looks usable, other (piles, scenes, people). Keys as realdata/ spells them
    ("web-good-defective/defective/NAME")."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "labels", "web_defective_by_eye.csv")) as fh:
        return {row["file"]: row["byEye"] for row in csv.DictReader(fh)}


def web_kind(key, by_eye: dict[str, str]) -> str:
    """What a cached view's web-good-defective photo shows: "usable" for good/, its by-eye kind for
    defective/ ("other" if the file is not listed), "" for any other set's key."""
    name, path = str(key).split(":", 2)[:2]
    if name != "web-good-defective":
        return ""
    path = path.replace(os.sep, "/")
    if "/good/" in path:
        return "usable"
    return by_eye.get("web-good-defective/" + path.split("/web-good-defective/", 1)[-1], "other")


def web_worn_dropped(keys, worn, setnames, keep: str) -> np.ndarray:
    """The trainers' --web-wear-only KINDS (comma-separated by-eye kinds): for each view, True where it
    is a defective web photo (worn == 1) whose by-eye kind is not in KINDS, so that its worn label is
    dropped. Unknown kinds are refused."""
    kept = set(keep.split(","))
    unknown = kept - set(WEB_KINDS)
    if unknown:
        raise SystemExit(f"unknown web kinds {sorted(unknown)} (known: {', '.join(WEB_KINDS)})")
    kinds = web_defective_by_eye()
    return np.array([s == "web-good-defective" and int(w) == 1 and web_kind(key, kinds) not in kept
                     for key, w, s in zip(keys, worn, setnames)], dtype=bool)


def web_good_defective(root: str) -> list[Sample]:
    base = os.path.join(root, "web-good-defective")
    out = []
    with open(os.path.join(base, "labels.csv"), newline="") as f:
        for row in csv.DictReader(f):
            worn = 1 if row["label"] == "defective" else 0
            out.append(Sample(os.path.join(base, row["file"]), "web-good-defective", TREAD, worn=worn,
                              group=f"web{_fold_of(row['file'])}", extra={"split": row["sourceSplit"]}))
    return out


def yolo_boxes(label_path: str) -> list[tuple[int, float, float, float, float]]:
    boxes = []
    if not os.path.exists(label_path):
        return boxes
    with open(label_path) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 5:
                c, x, y, w, h = int(parts[0]), *map(float, parts[1:5])
                boxes.append((c, x - w / 2, y - h / 2, x + w / 2, y + h / 2))
    return boxes


DEFECTS = {0, 1, 2}  # Bulge, Cracks, Flat spots (data.yaml); 3 is Non-defective


def ccby_worn(image_path: str) -> int:
    """tyre-defect-ccby's photo as worn/usable: 1 (not usable) with any damage box, 0 with only
    Non-defective boxes, -1 without boxes ("not usable" in web-good-defective's sense: damage and
    wear together). Tried and not shipped (train_real.py --ccby-wear): out of fold on fold 0 it
    read tyre-defect-ccby at 0.85 and web-good-defective at 0.786 (0.791 without), but michelin-twi's
    Spearman fell from 0.48 to 0.20 and its close-ups still read as worn (mean P(worn) 0.90)."""
    classes = ccby_classes(image_path)
    return 1 if classes & DEFECTS else 0 if classes else -1


def ccby_classes(image_path: str) -> set[int]:
    """The classes of a tyre-defect-ccby photo's boxes (its labels/ file beside images/)."""
    lab = os.path.join(os.path.dirname(os.path.dirname(image_path)), "labels", os.path.splitext(os.path.basename(image_path))[0] + ".txt")
    return {b[0] for b in yolo_boxes(lab)}


def tyre_defect(root: str) -> list[Sample]:
    """Real tread and sidewall close-ups: all TREAD for the gate. No worn label by default: its
    classes are damage, and as "not usable" they cost michelin-twi's order (ccby_worn)."""
    base = os.path.join(root, "tyre-defect-ccby")
    out = []
    for split in ("train", "valid", "test"):
        for p in sorted(glob.glob(os.path.join(base, split, "images", "*"))):
            if not p.lower().endswith(IMAGE_EXT):
                continue
            lab = os.path.join(base, split, "labels", os.path.splitext(os.path.basename(p))[0] + ".txt")
            classes = sorted({b[0] for b in yolo_boxes(lab)})
            # Roboflow augmentations of one photo share the name before ".rf.": one group
            stem = os.path.basename(p).split(".rf.")[0]
            out.append(Sample(p, "tyre-defect-ccby", TREAD, group=f"ccby{_fold_of(stem)}", extra={"classes": classes}))
    return out


def _overlap(a, b) -> float:
    x1, y1 = max(a[0], b[0]), max(a[1], b[1])
    x2, y2 = min(a[2], b[2]), min(a[3], b[3])
    return max(0.0, x2 - x1) * max(0.0, y2 - y1)


def vehicles_wheels(root: str, rng: random.Random) -> list[Sample]:
    """Whole vehicles and their wheels seen from the side (NOT_READ), and crops that hold no wheel:
    car bodies, roads, yards (NO_TIRE hard negatives)."""
    base = os.path.join(root, "vehicles-wheels")
    out = []
    for p in sorted(glob.glob(os.path.join(base, "images", "*", "*"))):
        if not p.lower().endswith(IMAGE_EXT):
            continue
        split = os.path.basename(os.path.dirname(p))
        lab = os.path.join(base, "labels", split, os.path.splitext(os.path.basename(p))[0] + ".txt")
        boxes = [b[1:] for b in yolo_boxes(lab)]
        g = f"veh{_fold_of(p)}"
        out.append(Sample(p, "vehicles-wheels", NOT_READ, group=g, extra={"kind": "vehicle"}))
        for b in boxes:
            w, h = b[2] - b[0], b[3] - b[1]
            if w < 0.06 or h < 0.06:
                continue  # a wheel a few pixels wide says nothing
            m = 0.25  # some of the car around the wheel, as a side view shows it
            box = (max(0, b[0] - m * w), max(0, b[1] - m * h), min(1, b[2] + m * w), min(1, b[3] + m * h))
            out.append(Sample(p, "vehicles-wheels", NOT_READ, box=box, group=g, extra={"kind": "wheel"}))
        # up to four crops that touch no wheel box (wheels widened by 10 %)
        grown = [(b[0] - 0.1 * (b[2] - b[0]), b[1] - 0.1 * (b[3] - b[1]), b[2] + 0.1 * (b[2] - b[0]), b[3] + 0.1 * (b[3] - b[1])) for b in boxes]
        found = 0
        for _ in range(60):
            if found >= 4:
                break
            w, h = rng.uniform(0.25, 0.6), rng.uniform(0.25, 0.6)
            x, y = rng.uniform(0, 1 - w), rng.uniform(0, 1 - h)
            box = (x, y, x + w, y + h)
            if any(_overlap(box, gb) > 0 for gb in grown):
                continue
            found += 1
            out.append(Sample(p, "vehicles-wheels", NO_TIRE, box=box, group=g, extra={"kind": "outside"}))
    return out


def debian_photos(folder: str, rng: random.Random) -> list[Sample]:
    """Wallpapers and backgrounds that Debian packages ship (landscapes, buildings, textures):
    each whole and in three crops. See train_real.sh for the packages."""
    out = []
    seen = set()
    for p in sorted(glob.glob(os.path.join(folder, "**", "*"), recursive=True), key=lambda q: -os.path.getsize(q)):
        if not p.lower().endswith(IMAGE_EXT) or os.path.getsize(p) < 20_000:
            continue
        # Plasma ships each wallpaper at several sizes (wallpapers/NAME/contents/images/WxH.png): the largest only
        key = p.split("/wallpapers/")[1].split("/")[0] if "/wallpapers/" in p else p
        if key in seen:
            continue
        seen.add(key)
        g = f"deb{_fold_of(p)}"
        out.append(Sample(p, "debian-photos", NO_TIRE, group=g))
        for _ in range(3):
            s = rng.uniform(0.3, 0.7)
            x, y = rng.uniform(0, 1 - s), rng.uniform(0, 1 - s)
            out.append(Sample(p, "debian-photos", NO_TIRE, box=(x, y, x + s, y + s), group=g))
    return out


def renders(folder: str) -> list[Sample]:
    """Photo-like renders (make_dataset.py --split heldout): depth labels, the renderer's negatives."""
    out = []
    with open(os.path.join(folder, "labels.csv"), newline="") as f:
        for row in csv.DictReader(f):
            p = os.path.join(folder, row["file"])
            if row.get("wear") == "notire" or row.get("depthMm", "") == "":
                out.append(Sample(p, "renders", NO_TIRE, group=f"ren{_fold_of(p)}"))
            else:
                d = float(row["depthMm"])
                out.append(Sample(p, "renders", TREAD, worn=int(d < 3.0), depth=d, group=f"ren{_fold_of(p)}"))
    return out


def michelin_twi(root: str) -> list[Sample]:
    """Measured only. Ends as classes: 0-25 worn, 75-100 usable, 50 between (worn -1)."""
    base = os.path.join(root, "michelin-twi")
    out = []
    with open(os.path.join(base, "labels.csv"), newline="") as f:
        for row in csv.DictReader(f):
            pct = float(row["twiRemainingPct"])
            worn = 1 if pct <= 25 else 0 if pct >= 75 else -1
            out.append(Sample(os.path.join(base, row["file"]), "michelin-twi", TREAD, worn=worn, pct=pct,
                              group=f"mich{row['fold']}", trainable=False,
                              extra={"wearMadeBy": row["wearMadeBy"], "light": row["light"], "pose": row["pose"]}))
    return out


def all_samples(realdata: str, debian: str | None, render_dir: str | None, seed: int = 0) -> list[Sample]:
    rng = random.Random(seed)
    out = web_good_defective(realdata) + tyre_defect(realdata) + vehicles_wheels(realdata, rng) + michelin_twi(realdata)
    if debian and os.path.isdir(debian):
        out += debian_photos(debian, rng)
    if render_dir and os.path.isdir(render_dir):
        out += renders(render_dir)
    return out


if __name__ == "__main__":
    from collections import Counter

    s = all_samples(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None, sys.argv[3] if len(sys.argv) > 3 else None)
    c = Counter((x.set, SCENES[x.scene], x.worn) for x in s)
    for k, v in sorted(c.items()):
        print(k, v)
