"""The scene reader's constants, from out-of-fold predictions, and the manifest that ships it.

    python finalize_real.py --cv runs/cv --scene ../scene.onnx --manifest ../manifest.json \
        --version tread-2026.11.28 [--loso-out runs/loso-models --loso runs/loso]

Out of fold: `--cv` holds five runs of train_real.py --fold K (since tread-2026.11.29, mirror_oof.py's
readings of the same folds: each photo and its mirror image through the fold's head and wear branch,
as the shipped graph reads them; with --mirror the models left out are exported so too); each photo's
reading is the one from the run that did not learn from its fold (same kinds of photo, other photos:
what the shipped model meets in a shop). From those:
- the worn probability's Platt map (wornPlatt), fitted on WEAR_SET's photos (the one set with worn and
  usable labels; since tread-2026.11.29.2 the flat spots of tyre-defect-ccby are worn-only examples);
- the gate's thresholds: the lowest no-tire threshold that refuses at most NO_TIRE_BUDGET of the
  tread photos as "no tire", then the lowest not-visible threshold that keeps all refusals of tread
  photos within REFUSAL_BUDGET and, since tread-2026.11.29, each tread set's within SET_BUDGET
  (issue 40: tires refused <= 5 % on every set; before, web-good-defective's 1 003 photos were
  refused at 7.7 % while tyre-defect-ccby's 1 635 kept the two sets together under 4 %).
The manifest keeps every field of the base (tread, seg, crop and their calibration) and adds
models.scene, calibration.scene and trainedOn. With --loso-out it also writes, for each run in
--loso (train_real.py --exclude SET), a models folder named after SET that `npm run eval -- --real
--loso` scores that set with (the base networks copied, that run's scene reader, the same constants).
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import real_data as rd  # noqa: E402

NO_TIRE_BUDGET = 0.015
REFUSAL_BUDGET = 0.04
SET_BUDGET = 0.05
WEAR_SET = "web-good-defective"  # what wear_branch.py trains on
TRAINED_ON = ["web-good-defective", "tyre-defect-ccby", "vehicles-wheels", "debian-photos", "renders"]


def out_of_fold(cv: str) -> dict:
    runs = sorted(glob.glob(os.path.join(cv, "fold*")))
    assert len(runs) == 5, f"expected five folds in {cv}, found {len(runs)}"
    merged = None
    for r in runs:
        k = json.load(open(os.path.join(r, "train.json")))["fold"]
        z = dict(np.load(os.path.join(r, "pred.npz")))
        mine = np.array([g.endswith(str(k)) for g in z["group"]])
        if merged is None:
            merged = {key: v.copy() for key, v in z.items()}
            merged["pred"][:] = np.nan
        merged["pred"][mine] = z["pred"][mine]
    return merged


def platt(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Logistic regression of y on x: the a, b that minimise the log loss of σ(a·x + b) (float64,
    L-BFGS; a plain Newton step overshoots on logits this far apart). The two classes weigh the
    same, so 0.5 means as likely worn as usable whatever the share of worn tires in the set the map
    was fitted on (65 % in web-good-defective; a shop's share is its own)."""
    from scipy.optimize import minimize

    x = np.asarray(x, np.float64)
    y = np.asarray(y, np.float64)
    wt = np.where(y > 0.5, 0.5 / max(y.mean(), 1e-9), 0.5 / max(1 - y.mean(), 1e-9))

    def loss(t):
        z = t[0] * x + t[1]
        # log(1 + e^z) - y·z, stably
        return float(np.mean(wt * (np.logaddexp(0, z) - y * z)))

    def grad(t):
        p = 1 / (1 + np.exp(-(t[0] * x + t[1])))
        return np.array([np.mean(wt * (p - y) * x), np.mean(wt * (p - y))])

    r = minimize(loss, np.array([1.0, 0.0]), jac=grad, method="L-BFGS-B")
    return float(r.x[0]), float(r.x[1])


def worn_logit(p: np.ndarray) -> np.ndarray:
    """The head's own worn logit (pred.npz column 6, since 2026.11.28.2: what the app maps), or the
    logit of its probability for older runs (saturated: P = 1 exactly above a logit of ≈ 17)."""
    if p.shape[1] > 6:
        return p[:, 6].astype(np.float64)
    pw = np.clip(p[:, 3], 1e-6, 1 - 1e-6)
    return np.log(pw / (1 - pw))


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def constants(z: dict) -> tuple[dict, dict]:
    plain = (z["view"] == 0) & ~z["degraded"] & ~np.isnan(z["pred"][:, 0])
    real = plain & (z["setname"] != "renders") & (z["setname"] != "michelin-twi")
    p = z["pred"]
    # fitted on the set with both labels: a set with worn examples only (train_real.py --ccby-flat-worn)
    # would move the line without saying anything about usable tires
    worn = real & (z["worn"] >= 0) & (z["setname"] == WEAR_SET)
    a, b = platt(worn_logit(p)[worn], z["worn"][worn].astype(float))
    tread = real & (z["scene"] == 0)
    negatives = real & (z["scene"] == 2)
    unreadable = real & (z["scene"] == 1)
    grid = np.round(np.arange(0.30, 0.951, 0.01), 2)
    t_no = next((t for t in grid if (p[tread, 2] >= t).mean() <= NO_TIRE_BUDGET), 0.95)
    tread_sets = sorted(set(z["setname"][tread]))

    def refused(t: float, m: np.ndarray) -> float:
        return float(((p[m, 2] >= t_no) | (p[m, 1] >= t)).mean())

    ok_nv = [t for t in grid if refused(t, tread) <= REFUSAL_BUDGET and all(refused(t, tread & (z["setname"] == s)) <= SET_BUDGET for s in tread_sets)]
    t_nv = ok_nv[0] if ok_nv else 0.95
    said = np.where(p[:, 2] >= t_no, 2, np.where(p[:, 1] >= t_nv, 1, 0))
    figures = {
        "outOfFoldPhotos": int(real.sum()),
        "treadRefused": float((said[tread] != 0).mean()),
        "treadRefusedNoTire": float((said[tread] == 2).mean()),
        "treadRefusedBySet": {s: float((said[tread & (z["setname"] == s)] != 0).mean()) for s in tread_sets},
        "negativesRefused": float((said[negatives] != 0).mean()),
        "negativesNoTire": float((said[negatives] == 2).mean()),
        "unreadableRefused": float((said[unreadable] != 0).mean()),
        "unreadableNotVisible": float((said[unreadable] == 1).mean()),
    }
    cal = {
        "noTire": float(t_no),
        "notVisible": float(t_nv),
        "wornPlatt": {"a": round(a, 4), "b": round(b, 4)},
        # the millimetre scale of the worn probability (scene.ts sceneDepth): a convention, stated in the
        # model card; 8 mm is a new passenger tread, 3.0 mm the worn line, 0.8 mm well under the legal 1.6
        "depthScale": {"usableMm": 8.0, "evenMm": 3.0, "wornMm": 0.8},
        "syntheticWeight": 0.0,
        "realSigmaMm": 1.5,
        "twiMinTread": 0.9,
        "preliminaryBelow": 0.6,
        # support_head.py's probability that a photo is like those the worn probability learned from:
        # under an even chance the result is preliminary with the whole scale as its interval (scene.ts;
        # the midpoint of a classifier whose two classes weigh the same, not fitted)
        "supportBelow": 0.5,
    }
    return cal, figures


def oof_table(z: dict, cal: dict) -> str:
    """The out-of-fold figures with the shipped constants, set by set (Markdown): each photo read by
    the fold model that did not learn from it (same kinds of photo, other photos)."""
    plain = (z["view"] == 0) & ~z["degraded"] & ~np.isnan(z["pred"][:, 0])
    p = z["pred"]
    said = np.where(p[:, 2] >= cal["noTire"], 2, np.where(p[:, 1] >= cal["notVisible"], 1, 0))
    a, b = cal["wornPlatt"]["a"], cal["wornPlatt"]["b"]
    worn_said = 1 / (1 + np.exp(-(a * worn_logit(p) + b))) > 0.5
    rng = np.random.default_rng(1)
    # each set's own label (train_real.py --web-wear-only leaves some defective web photos without one in
    # pred.npz; the table reads the folder's): defective = worn, good = usable
    by_eye = rd.web_defective_by_eye()
    kind_of = np.array([rd.web_kind(k, by_eye) for k in z["sample"]])
    own = np.where(kind_of == "", z["worn"], (kind_of != "usable").astype(np.int8))
    rows = ["| set (out of fold) | photos | answered | refused: no tire | refused: tread not visible | worn vs usable (95 % CI) |",
            "| --- | --- | --- | --- | --- | --- |"]
    def of(s: str, kind: str | None = None) -> np.ndarray:
        m = plain & (z["setname"] == s)
        return m & (z["kind"] == kind) if kind else m

    web = of("web-good-defective")
    groups = [("web-good-defective", web),
              # the usable photos against the defective ones that show worn tread (labels/web_defective_by_eye.csv)
              ("web-good-defective: usable against the defective photos that show worn tread by eye", web & ((own == 0) | (kind_of == "worn"))),
              ("tyre-defect-ccby", of("tyre-defect-ccby"))]
    groups += [(f"vehicles-wheels ({k}s)", of("vehicles-wheels", k)) for k in ("vehicle", "wheel", "outside")]
    groups += [("debian-photos", of("debian-photos")), ("renders", of("renders"))]
    for name, m in groups:
        if not m.any():
            continue
        n = int(m.sum())
        ans = m & (said == 0)
        ba = ""
        y = own[ans]
        if (y == 1).any() and (y == 0).any():
            w = worn_said[ans]
            f = lambda i: 0.5 * (w[i][y[i] == 1].mean() + (~w[i][y[i] == 0]).mean())
            draws = [f(rng.integers(0, len(y), len(y))) for _ in range(1000)]
            ba = f"{f(np.arange(len(y))):.3f} ({np.percentile(draws, 2.5):.3f}–{np.percentile(draws, 97.5):.3f}), n {len(y)}"
        rows.append(f"| {name} | {n} | {100 * (said[m] == 0).mean():.1f} % | {100 * (said[m] == 2).mean():.1f} % | "
                    f"{100 * (said[m] == 1).mean():.1f} % | {ba} |")
    return "\n".join(rows) + "\n"


def graph_outputs(onnx_path: str) -> dict:
    """The scene graph's outputs as the manifest lists them: scene N x 3, features N x 3 296, the
    others N (support and features only where the graph has them, since tread-2026.11.29.3 and .4)."""
    import onnx

    outputs = onnx.load(onnx_path, load_external_data=False).graph.output
    dims = {o.name: [None] + [d.dim_value or None for d in o.type.tensor_type.shape.dim[1:]] for o in outputs}
    return {n: [None, 3] if n == "scene" else dims[n] if n == "features" else [None] for n in dims}


def write_models(folder: str, base_dir: str, base: dict, scene_onnx: str, cal: dict, version: str, trained_on: list[str]) -> None:
    os.makedirs(folder, exist_ok=True)
    for key in ("tread", "seg", "crop"):
        if key in base["models"]:
            src = os.path.join(base_dir, base["models"][key]["file"])
            dst = os.path.join(folder, base["models"][key]["file"])
            if os.path.abspath(src) != os.path.abspath(dst):
                shutil.copyfile(src, dst)
    if os.path.abspath(scene_onnx) != os.path.abspath(os.path.join(folder, "scene.onnx")):
        shutil.copyfile(scene_onnx, os.path.join(folder, "scene.onnx"))
    m = json.loads(json.dumps(base))
    m["version"] = version
    m["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    m["models"]["scene"] = {
        "file": "scene.onnx",
        "sha256": sha256(os.path.join(folder, "scene.onnx")),
        "bytes": os.path.getsize(os.path.join(folder, "scene.onnx")),
        "inputs": {"input": [None, 3, 160, 160]},
        "outputs": graph_outputs(os.path.join(folder, "scene.onnx")),
    }
    m["calibration"]["scene"] = cal
    m["trainedOn"] = trained_on
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump(m, f, indent=2)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cv", required=True)
    ap.add_argument("--scene", required=True, help="the exported scene reader (already in the models folder)")
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--loso", default="", help="folder of train_real.py --exclude runs, one per set")
    ap.add_argument("--loso-out", default="")
    ap.add_argument("--pretrained", default="runs/mbv2_nsfwjs.pt")
    ap.add_argument("--wear", default="", help="the shipped wear branch (wear_branch.py): the sets it never saw keep it")
    ap.add_argument("--gate-loso", default="", help="gate_branch.py --exclude runs, one folder per set left out")
    ap.add_argument("--mirror", action="store_true", help="the models left out read each photo and its mirror image (export_real.py --mirror), "
                    "as the shipped one does since tread-2026.11.29; --cv then holds mirror_oof.py's readings")
    ap.add_argument("--zoom", type=int, default=0, help="the models left out also read the photo zoomed out for wear (export_real.py --zoom), "
                    "as the shipped one does since tread-2026.11.29.6; --cv then holds mirror_oof.py --zoom's readings")
    a = ap.parse_args()
    z = out_of_fold(a.cv)
    os.makedirs(os.path.join(a.cv, "oof"), exist_ok=True)
    np.savez(os.path.join(a.cv, "oof", "pred.npz"), **z)  # real_report.py runs/cv/oof: the out-of-fold figures
    cal, figures = constants(z)
    print(json.dumps({"calibration.scene": cal, "outOfFold": figures}, indent=1))
    base_dir = os.path.dirname(os.path.abspath(a.manifest))
    base = json.load(open(a.manifest))
    for k in ("scene",):
        base["models"].pop(k, None)
        base["calibration"].pop(k, None)
    write_models(base_dir, base_dir, base, a.scene, cal, a.version, TRAINED_ON)
    table = oof_table(z, cal)
    print(table)
    with open(os.path.join(os.path.dirname(os.path.abspath(a.cv)), "oof_table.md"), "w") as f:
        f.write(table)
    with open(os.path.join(os.path.dirname(os.path.abspath(a.cv)), "finalize_real.json"), "w") as f:
        json.dump({"calibration.scene": cal, "outOfFold": figures}, f, indent=1)
    if a.loso and a.loso_out:
        for run in sorted(glob.glob(os.path.join(a.loso, "*"))):
            t = json.load(open(os.path.join(run, "train.json")))
            left_out = t["exclude"]
            name = left_out[0]
            onnx = os.path.join(run, "scene.onnx")
            # the wear branch learned from web-good-defective only: a model without that set has none
            wear = ["--wear", a.wear] if a.wear and WEAR_SET not in left_out else []
            # the gate branch learned from every set: each model left out has its own, trained without that set
            gate = ["--gate", os.path.join(a.gate_loso, name, "branch.pt")] if a.gate_loso else []
            # each model left out has its own support (support_head.py), trained without that set; none without tyre-defect-ccby
            sup = os.path.join(run, "support.pt")
            support = ["--support", sup] if os.path.exists(sup) else []
            subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "export_real.py"), "--pretrained", a.pretrained,
                            "--top", os.path.join(run, "top.pt"), "--out", onnx, *wear, *gate, *support,
                            *(["--mirror"] if a.mirror else []),
                            # the zoomed-out reading is weighed by the support: a model without one reads none
                            *(["--zoom", str(a.zoom)] if a.zoom and support else [])], check=True)
            write_models(os.path.join(a.loso_out, name), base_dir, base, onnx, cal, f"{a.version}-without-{name}",
                         [s for s in TRAINED_ON if s not in left_out])
            print(f"wrote {os.path.join(a.loso_out, name)}")


if __name__ == "__main__":
    main()
