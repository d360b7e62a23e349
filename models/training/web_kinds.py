"""What web-good-defective's defective photos show, and how the scene reader does on each kind
(models/NOTEBOOK.md, "What the defective web photos show"; labels/web_defective_by_eye.csv).

    python web_kinds.py sheets --out DIR [--realdata R]       # contact sheets to label by eye (30 a sheet)
    python web_kinds.py sheets --out DIR --sample 120 --seed 43  # a random sample, shuffled: a second look
    python web_kinds.py agree labels/web_defective_by_eye_second.csv  # the second look against the first
    python web_kinds.py graph runs/cv_mirror [--manifest ../manifest.json]
    python web_kinds.py heads runs/cv OTHER_RUN ...            # five fold heads each (foldK/pred.npz)

`graph`: each web photo read out of fold through the shipped graph (mirror_oof.py's readings, the
manifest's gate thresholds and Platt map): answered, read not usable, and the usable photos against
each kind of defective photo (AUC by the worn logit, balanced accuracy at the 3 mm line). `heads`:
the fold heads' own worn logits (head only): the usable photos against each kind (AUC), the balanced
accuracy of usable against worn at the line best for usable against all defective, and michelin-twi's
order (Spearman with twiRemainingPct, its ends' AUC; measured only, never trained on). `agree`: a
second labelling of a random sample (same file,byEye columns) against labels/web_defective_by_eye.csv:
the share labelled alike, Cohen's kappa, the table of the two, and how "worn" fares alone (the kind
the by-eye figures rest on). Nothing is written but the sheets.
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
from second_look import agreement, contact_sheets  # noqa: E402

KINDS = rd.WEB_KINDS


def usable_against(x: np.ndarray, usable: np.ndarray, other: np.ndarray) -> float:
    """AUC of x (the worn logit) telling the `other` photos from the usable ones."""
    return auc(np.r_[x[usable], x[other]], np.r_[np.zeros(usable.sum()), np.ones(other.sum())])


def cmd_sheets(a) -> None:
    files = sorted(glob.glob(os.path.join(a.realdata, "web-good-defective", "defective", "*")))
    if a.sample:  # a second look: a random sample in random order, numbered afresh
        files = [files[i] for i in np.random.default_rng(a.seed).permutation(len(files))[: a.sample]]
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "index.txt"), "w") as fh:
        for i, f in enumerate(files):
            fh.write(f"{i}\t{os.path.basename(f)}\n")
    contact_sheets(files, a.out, "d")
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


def cmd_agree(a) -> None:
    import csv

    with open(a.second) as fh:
        second = {row["file"]: row["byEye"] for row in csv.DictReader(fh)}
    table = agreement(rd.web_defective_by_eye(), second, KINDS)
    w = KINDS.index("worn")
    print(f"worn: {sum(table[w])} the first time, {sum(row[w] for row in table)} the second, {table[w][w]} both times")


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sheets")
    s.add_argument("--out", required=True)
    s.add_argument("--realdata", default=os.path.join(HERE, "../../../shared/realdata"))
    s.add_argument("--sample", type=int, default=0, help="a random sample of this many, shuffled (0: every photo, in order)")
    s.add_argument("--seed", type=int, default=43)
    ag = sub.add_parser("agree")
    ag.add_argument("second", help="a second labelling: file,byEye rows for some of the defective photos")
    g = sub.add_parser("graph")
    g.add_argument("cv", help="mirror_oof.py's output folder (runs/cv_mirror)")
    g.add_argument("--manifest", default=os.path.join(HERE, "..", "manifest.json"))
    h = sub.add_parser("heads")
    h.add_argument("runs", nargs="+")
    a = ap.parse_args()
    {"sheets": cmd_sheets, "graph": cmd_graph, "heads": cmd_heads, "agree": cmd_agree}[a.cmd](a)


if __name__ == "__main__":
    main()
