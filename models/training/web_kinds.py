"""What web-good-defective's defective photos show, and how the scene reader does on each kind
(models/NOTEBOOK.md, "What the defective web photos show"; labels/web_defective_by_eye.csv).

    python web_kinds.py sheets --out DIR [--realdata R]       # contact sheets to label by eye (30 a sheet)
    python web_kinds.py graph runs/cv_mirror [--manifest ../manifest.json]
    python web_kinds.py heads runs/cv OTHER_RUN ...            # five fold heads each (foldK/pred.npz)

`graph`: each web photo read out of fold through the shipped graph (mirror_oof.py's readings, the
manifest's gate thresholds and Platt map): answered, read not usable, and the usable photos against
each kind of defective photo (AUC by the worn logit, balanced accuracy at the 3 mm line). `heads`:
the fold heads' own worn logits (head only): the usable photos against each kind (AUC), the balanced
accuracy of usable against worn at the line best for usable against all defective, and michelin-twi's
order (Spearman with twiRemainingPct, its ends' AUC; measured only, never trained on). Nothing is
written but the sheets.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import real_data as rd  # noqa: E402
from real_report import auc, spearman  # noqa: E402

KINDS = rd.WEB_KINDS


def usable_against(x: np.ndarray, usable: np.ndarray, other: np.ndarray) -> float:
    """AUC of x (the worn logit) telling the `other` photos from the usable ones."""
    return auc(np.r_[x[usable], x[other]], np.r_[np.zeros(usable.sum()), np.ones(other.sum())])


def cmd_sheets(a) -> None:
    from PIL import Image, ImageDraw

    files = sorted(glob.glob(os.path.join(a.realdata, "web-good-defective", "defective", "*")))
    os.makedirs(a.out, exist_ok=True)
    size, cols, rows = 200, 6, 5
    with open(os.path.join(a.out, "index.txt"), "w") as fh:
        for i, f in enumerate(files):
            fh.write(f"{i}\t{os.path.basename(f)}\n")
    for start in range(0, len(files), cols * rows):
        sheet = Image.new("RGB", (cols * size, rows * size), "white")
        draw = ImageDraw.Draw(sheet)
        for k, f in enumerate(files[start : start + cols * rows]):
            im = Image.open(f).convert("RGB")
            im.thumbnail((size - 4, size - 4))
            x, y = (k % cols) * size, (k // cols) * size
            sheet.paste(im, (x + 2, y + 2))
            draw.rectangle([x, y, x + 40, y + 24], fill="yellow")
            draw.text((x + 2, y), str(start + k), fill="black")
        sheet.save(os.path.join(a.out, f"d{start:03d}.png"))
    print(f"{len(files)} photos, {os.path.join(a.out, 'index.txt')} maps the numbers to files")


def cmd_graph(a) -> None:
    cal = json.load(open(a.manifest))["calibration"]["scene"]
    p = np.load(os.path.join(a.cv, "oof", "pred.npz"), allow_pickle=True)
    m = (p["setname"] == "web-good-defective") & (p["view"] == 0) & ~p["degraded"]
    pred = p["pred"][m]
    by_eye = rd.web_defective_by_eye()
    kind = np.array([rd.web_kind(k, by_eye) for k in p["sample"][m]])
    logit = pred[:, 6]
    worn = cal["wornPlatt"]["a"] * logit + cal["wornPlatt"]["b"] > 0
    answered = ~((pred[:, 2] >= cal["noTire"]) | (pred[:, 1] >= cal["notVisible"]))
    u = kind == "usable"
    print(f"{a.cv} with {a.manifest}: usable {int(u.sum())}, answered {answered[u].mean():.1%}, read usable {(~worn[u & answered]).mean():.1%}")
    print("| defective photos by eye | photos | answered | read not usable | usable against them: AUC | balanced accuracy at the line |")
    print("|---|---|---|---|---|---|")
    for k in KINDS + ("all",):
        sel = ~u if k == "all" else kind == k
        ba = 0.5 * ((~worn[u & answered]).mean() + worn[sel & answered].mean())
        area = usable_against(logit, u, sel)
        print(f"| {k} | {int(sel.sum())} | {answered[sel].mean():.1%} | {worn[sel & answered].mean():.1%} | {area:.3f} | {ba:.3f} |")


def cmd_heads(a) -> None:
    by_eye = rd.web_defective_by_eye()
    print("| run | " + " | ".join(f"usable vs {k}" for k in KINDS) + " | vs all defective | balanced accuracy usable vs worn | michelin-twi Spearman | its ends AUC |")
    print("|---|" + "---|" * (len(KINDS) + 5))
    for run in a.runs:
        logits, rho, ends_auc = {}, [], []
        for k in range(5):
            p = np.load(os.path.join(run, f"fold{k}", "pred.npz"), allow_pickle=True)
            plain = (p["view"] == 0) & ~p["degraded"]
            web = plain & (p["setname"] == "web-good-defective") & np.array([g.endswith(str(k)) for g in p["group"]])
            logits.update(zip(p["sample"][web], p["pred"][web, 6]))
            mich = plain & (p["setname"] == "michelin-twi")
            pct, x = p["pct"][mich], -p["pred"][mich, 6]
            ends = (pct <= 25) | (pct >= 75)
            rho.append(spearman(x, pct))
            ends_auc.append(auc(x[ends], pct[ends] >= 75))
        keys = list(logits)
        x = np.array([logits[k] for k in keys])
        kind = np.array([rd.web_kind(k, by_eye) for k in keys])
        u = kind == "usable"
        cells = [usable_against(x, u, kind == k) for k in KINDS]
        cells.append(usable_against(x, u, ~u))
        lines = np.quantile(x, np.linspace(0.02, 0.98, 97))
        best = max(lines, key=lambda t: 0.5 * ((x[u] <= t).mean() + (x[~u] > t).mean()))
        ba = 0.5 * ((x[u] <= best).mean() + (x[kind == "worn"] > best).mean())
        print(f"| {run} | " + " | ".join(f"{c:.3f}" for c in cells) + f" | {ba:.3f} | {np.mean(rho):.3f} | {np.mean(ends_auc):.3f} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sheets")
    s.add_argument("--out", required=True)
    s.add_argument("--realdata", default=os.path.join(HERE, "../../../shared/realdata"))
    g = sub.add_parser("graph")
    g.add_argument("cv", help="mirror_oof.py's output folder (runs/cv_mirror)")
    g.add_argument("--manifest", default=os.path.join(HERE, "..", "manifest.json"))
    h = sub.add_parser("heads")
    h.add_argument("runs", nargs="+")
    a = ap.parse_args()
    {"sheets": cmd_sheets, "graph": cmd_graph, "heads": cmd_heads}[a.cmd](a)


if __name__ == "__main__":
    main()
