"""Labelling by eye a second time: contact sheets to label from, and how a second labelling agrees
with the first (web_kinds.py and refusal_sample.py; models/NOTEBOOK.md, "A second look")."""
from __future__ import annotations

import os


def contact_sheets(paths: list[str], out: str, prefix: str) -> None:
    """Sheets of 30 thumbnails (200 px, 6 x 5) of `paths` in the order given, each numbered from 0
    across the sheets: OUT/{prefix}000.png, {prefix}030.png, …"""
    from PIL import Image, ImageDraw

    os.makedirs(out, exist_ok=True)
    size, cols, rows = 200, 6, 5
    for start in range(0, len(paths), cols * rows):
        sheet = Image.new("RGB", (cols * size, rows * size), "white")
        draw = ImageDraw.Draw(sheet)
        for k, path in enumerate(paths[start : start + cols * rows]):
            im = Image.open(path).convert("RGB")
            im.thumbnail((size - 4, size - 4))
            x, y = (k % cols) * size, (k // cols) * size
            sheet.paste(im, (x + 2, y + 2))
            draw.rectangle([x, y, x + 40, y + 24], fill="yellow")
            draw.text((x + 2, y), str(start + k), fill="black")
        sheet.save(os.path.join(out, f"{prefix}{start:03d}.png"))


def agreement(first: dict, second: dict, kinds: tuple[str, ...]) -> list[list[int]]:
    """Prints how a second labelling (key → kind, for some of the keys of `first`) agrees with the
    first: the share labelled alike, Cohen's kappa and the table (rows the first look); returns the
    table. Exits on a key the first labelling lacks or a kind not in `kinds`."""
    bad = [k for k, v in second.items() if k not in first or v not in kinds]
    if bad:
        raise SystemExit(f"not in the first labelling or not one of {'/'.join(kinds)}: {sorted(map(str, bad))[:3]}")
    n = len(second)
    table = [[sum(1 for k, v in second.items() if first[k] == r and v == c) for c in kinds] for r in kinds]
    alike = sum(table[i][i] for i in range(len(kinds))) / n
    chance = sum(sum(table[i]) * sum(row[i] for row in table) for i in range(len(kinds))) / n**2
    print(f"{n} photos labelled twice: alike {alike:.3f}, Cohen's kappa {(alike - chance) / (1 - chance):.3f}")
    print("| first look \\ second look | " + " | ".join(kinds) + " |")
    print("|---|" + "---|" * len(kinds))
    for r, row in zip(kinds, table):
        print(f"| {r} | " + " | ".join(str(v) for v in row) + " |")
    return table
