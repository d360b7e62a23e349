"""Calibrate on the validation split, export ONNX (opset 17) and write the manifest.

    python finalize.py --tread runs/tread3/best.pt --seg runs/seg3/best.pt --split cal --version tread-2026.11.1

Everything the app needs besides the two networks (how to turn their outputs
into a depth, an interval, a confidence and a tire/no-tire decision) is fitted
here on validation images that neither network trained on, and written to
models/manifest.json. src/core/analysis/combine.ts applies the same formulas.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import math
import os
import shutil
import sys
from datetime import datetime, timezone

import numpy as np
import onnxruntime as ort
import torch
from PIL import Image

sys.path.insert(0, os.path.dirname(__file__))
import nets  # noqa: E402
import preprocess as pp  # noqa: E402
from nets import SegNet, SegNetExport, TreadEnsemble, TreadNetExport, TreadNet, load_checkpoint  # noqa: E402
from make_dataset import load_photos  # noqa: E402
from train import load, shards, wear_index  # noqa: E402

MODELS = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BAND_LO = np.array([7.0, 5.0, 3.0, 1.6, 0.0])
BAND_HI = np.array([99.0, 7.0, 5.0, 3.0, 1.6])
BAND_CENTRE = np.array([8.5, 6.0, 4.0, 2.3, 1.0])  # a typical depth per wear class, mm
Z80 = 1.2815516


def export(module, path, outputs, size=pp.INPUT):
    torch.onnx.export(module.eval(), torch.zeros(1, 3, size, size), path, opset_version=17,
                      input_names=["input"], output_names=outputs,
                      dynamic_axes={"input": {0: "n"}, **{o: {0: "n"} for o in outputs}}, dynamo=False)


def run(path, x_u8):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    s = ort.InferenceSession(path, so)
    outs = None
    for i in range(0, len(x_u8), 64):
        r = s.run(None, {"input": pp.normalise(x_u8[i:i + 64])})
        outs = [list() for _ in r] if outs is None else outs
        for o, v in zip(outs, r):
            o.append(v)
    return [np.concatenate(o) for o in outs]


def split_photos(split, data_dirs):
    """The JPEG bytes of a photo split's images (the cal shards' photos), in load order."""
    out = []
    for d in data_dirs:
        files, sizes, n = shards(split, d, None)
        out += [j for f, size in zip(files, sizes) for j in load_photos(f, size)][:n]
    return out


def load_calibration(split, data_dirs):
    """The calibration split from one folder or several (--extra-cal: photos at other sizes), and
    the photos' JPEG bytes (None for a split without photos). A photo the app would scale before
    analysing it (larger than its frame, preprocess.app_frame) gets its network input again from
    that frame, as the app sees it; the 300-400 px photos keep the input stored with the shard
    (decoded the same way, so the same)."""
    parts = [load(split, d) for d in data_dirs]
    keys = sorted(set.intersection(*(set(p) for p in parts)))
    va = {k: np.concatenate([p[k] for p in parts]) for k in keys} if len(parts) > 1 else parts[0]
    if split != "cal":
        return va, None
    jpegs = split_photos(split, data_dirs)
    assert len(jpegs) == len(va["min_depth"]), (len(jpegs), len(va["min_depth"]))
    for i, j in enumerate(jpegs):
        img = Image.open(io.BytesIO(j))
        w, h = img.size
        if pp.frame_long_side(img.format == "JPEG", w, h) < max(w, h):
            va["x"][i] = pp.to_input_u8(pp.app_frame(j))
    return va, jpegs


def photo_long_sides(jpegs):
    return np.array([max(Image.open(io.BytesIO(j)).size) for j in jpegs], np.float64)


def crop_inputs(jpegs, probs, crop, size=pp.INPUT):
    """The regressor's second look (since 2026.11.9): each calibration photo, decoded from the JPEG
    bytes the service would have received to the app's frame, cropped to the box around the tread
    that the exported segmenter found on the whole frame (preprocess.tread_box, as the app does),
    stretched to the crop reader's input size. Returns the crops and which images had a box (the
    others keep the whole-frame reading, as in the app)."""
    assert len(jpegs) == len(probs), (len(jpegs), len(probs))
    x = np.zeros((len(probs), size, size, 3), np.uint8)
    boxed = np.zeros(len(probs), bool)
    for i, j in enumerate(jpegs):
        img = pp.app_frame(j)
        box = pp.tread_box(probs[i, 1:].sum(0) > 0.5, img.width, img.height, crop)
        if box is not None:
            x[i], boxed[i] = pp.crop_input_u8(img, box, size), True
    return x, boxed


def mirror_average(photo, mirror):
    """gate, depth, sigma, logits of the photo and of its mirror image → one reading: means, and
    the sigma of the mixture's variance (TreadNetExport "photo", the app's mirror averaging)."""
    (g1, d1, s1, l1), (g2, d2, s2, l2) = photo, mirror
    return (g1 + g2) / 2, (d1 + d2) / 2, np.sqrt((s1 ** 2 + s2 ** 2) / 2), (l1 + l2) / 2


def seg_stats(probs, depth, pct):
    """Second depth estimate: a low percentile of the dense depth over tread pixels."""
    tread = probs[:, 1:].sum(1) > 0.5
    out = np.full(len(probs), np.nan, np.float32)
    frac = tread.reshape(len(probs), -1).mean(1)
    for i in range(len(probs)):
        v = depth[i][tread[i]]
        if v.size >= 20:
            out[i] = np.percentile(v, pct)
    return out, frac


def phi(x):
    return 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def band_of(d):
    return wear_index(np.round(d, 1))


def softmax(z):
    z = z - z.max(1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(1, keepdims=True)


def fit_temperature(logits, y):
    best = (1e9, 1.0)
    for t in np.arange(0.5, 5.01, 0.05):
        p = softmax(logits / t)
        nll = -np.log(p[np.arange(len(y)), y] + 1e-9).mean()
        best = min(best, (nll, float(t)))
    return best[1]


def fit_platt(raw, correct):
    z = np.log(np.clip(raw, 1e-4, 1 - 1e-4) / (1 - np.clip(raw, 1e-4, 1 - 1e-4)))
    a, b = 1.0, 0.0
    for _ in range(3000):
        p = 1 / (1 + np.exp(-(a * z + b)))
        ga, gb = ((p - correct) * z).mean(), (p - correct).mean()
        a, b = a - 0.5 * ga, b - 0.5 * gb
    return float(a), float(b)


def ece(conf, correct, bins=10):
    e = 0.0
    for lo in np.linspace(0, 1, bins, endpoint=False):
        m = (conf >= lo) & (conf < lo + 1 / bins)
        if m.any():
            e += m.mean() * abs(conf[m].mean() - correct[m].mean())
    return float(e)


def fit_lad(A, b, iterations=60):
    """Least absolute deviations (the line whose mean absolute error is smallest, which is the
    figure the estimate is judged by), by iteratively reweighted least squares from the
    least-squares line; residuals are floored at 0.05 mm so no weight blows up."""
    c = np.linalg.lstsq(A, b, rcond=None)[0]
    for _ in range(iterations):
        w = np.sqrt(1 / np.maximum(np.abs(A @ c - b), 0.05))
        c = np.linalg.lstsq(A * w[:, None], b * w, rcond=None)[0]
    return c


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tread", nargs="+",
                    help="one checkpoint, or several that share the frozen trunk (exported as one averaging graph)")
    ap.add_argument("--tread-onnx", help="instead of --tread: a tread graph already exported (e.g. the shipped tread.onnx, "
                                         "to calibrate the shipped networks again), copied as it is; --tta must say how "
                                         "it was exported")
    ap.add_argument("--seg", help="the segmenter's checkpoint (exported here)")
    ap.add_argument("--seg-onnx", help="instead of --seg: a segmenter graph already exported (e.g. the shipped seg.onnx, "
                                       "whose checkpoint is gone), copied as it is; --seg-tta must say how it was exported")
    ap.add_argument("--version", required=True)
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "data"))
    ap.add_argument("--notes", default="")
    ap.add_argument("--out-dir", default=MODELS)
    ap.add_argument("--split", default="val",
                    help="calibration split: val (like training) or cal (rendered like the held-out photos)")
    ap.add_argument("--tta", choices=["none", "photo", "features", "app"], default="none",
                    help="tread network: average over the photo and its mirror image inside the graph (photo), or "
                         "over the frozen trunk's features and their mirror image (features: the trunk runs once), "
                         "or a plain graph and the app averages the photo and its mirror (app, since 2026.11.9: "
                         "the app sends the photo, its mirror and the tread crop as one batch, the crop unmirrored)")
    ap.add_argument("--seg-tta", action="store_true", help="segmenter: average over the photo and its mirror image")
    ap.add_argument("--crop", action="store_true",
                    help="stack a second regressor reading of the tread crop (needs a split with photos: cal)")
    ap.add_argument("--crop-tread", nargs="+", default=None,
                    help="with --crop: checkpoints of a regressor trained on tread crops that reads the crop "
                         "(exported as crop.onnx, a plain graph); without it the tread network reads the crop")
    ap.add_argument("--crop-onnx", help="with --crop, instead of --crop-tread: a crop reader already exported (the shipped "
                                        "crop.onnx), copied as it is; --crop-input must give its side")
    ap.add_argument("--crop-input", type=int, default=pp.INPUT,
                    help="with --crop-tread: the side of the crop reader's input (its crops were stored at this size, "
                         "make_dataset.py --input); the manifest gives it to the app as models.crop.size")
    ap.add_argument("--crop-frozen", type=int, default=nets.FROZEN_BLOCKS,
                    help="with --crop-tread: the MobileNetV2 blocks its members kept frozen (train.py --frozen); "
                         "below the default the members differ from that block on and the graph runs each one's own")
    ap.add_argument("--extra-cal", nargs="+", default=[],
                    help="more calibration folders (make_dataset.py --split cal --photo-scale K --out DIR: photos "
                         "at other sizes) calibrated on together with --data")
    ap.add_argument("--size-term", action="store_true",
                    help="a photo-size term in the stack (log2 of the photo's long side over 400 px, capped at the "
                         "largest calibration photo): needs --extra-cal with larger photos")
    ap.add_argument("--dump-features", help="also save the stack's inputs (features, truths, wear logits, sigma) to this "
                                            ".npz, for experiments with the stack")
    a = ap.parse_args()
    if (a.extra_cal or a.size_term) and a.split != "cal":
        ap.error("--extra-cal and --size-term need --split cal (photos)")
    if a.size_term and not a.extra_cal:
        ap.error("--size-term needs --extra-cal: a size term fitted on one photo size is not identified")
    if (a.tread is None) == (a.tread_onnx is None):
        ap.error("give one of --tread and --tread-onnx")
    if a.crop_onnx and (a.crop_tread or not a.crop):
        ap.error("--crop-onnx goes with --crop and instead of --crop-tread")
    if a.crop_frozen != nets.FROZEN_BLOCKS and not a.crop_tread:
        ap.error("--crop-frozen needs --crop-tread")
    if a.crop_input != pp.INPUT and not (a.crop_tread or a.crop_onnx):
        ap.error("--crop-input needs --crop-tread (the tread network itself reads INPUT)")
    torch.set_num_threads(1)

    def regressor(ckpts):
        """One checkpoint, or several sharing the frozen trunk as one averaging graph."""
        members = [load_checkpoint(TreadNet(), ckpt) for ckpt in ckpts]
        return members[0] if len(members) == 1 else TreadEnsemble(members)

    if (a.seg is None) == (a.seg_onnx is None):
        ap.error("give one of --seg and --seg-onnx")
    os.makedirs(a.out_dir, exist_ok=True)
    tpath, spath = os.path.join(a.out_dir, "tread.onnx"), os.path.join(a.out_dir, "seg.onnx")
    if a.tread:
        export(TreadNetExport(regressor(a.tread), "none" if a.tta == "app" else a.tta), tpath, ["gate", "depth", "sigma", "wear_logits"])
    elif os.path.abspath(a.tread_onnx) != os.path.abspath(tpath):
        shutil.copyfile(a.tread_onnx, tpath)
    if a.seg:
        sn = SegNet()
        sn.load_state_dict(torch.load(a.seg))
        export(SegNetExport(sn, a.seg_tta), spath, ["probs", "depth_map"])
    elif os.path.abspath(a.seg_onnx) != os.path.abspath(spath):
        shutil.copyfile(a.seg_onnx, spath)
    cpath = os.path.join(a.out_dir, "crop.onnx")
    if a.crop_tread:
        assert a.crop, "--crop-tread needs --crop"
        frozen, nets.FROZEN_BLOCKS = nets.FROZEN_BLOCKS, a.crop_frozen  # read when the graph is built and traced
        try:
            export(TreadNetExport(regressor(a.crop_tread), "none"), cpath, ["gate", "depth", "sigma", "wear_logits"], a.crop_input)
        finally:
            nets.FROZEN_BLOCKS = frozen
    elif a.crop_onnx:
        if os.path.abspath(a.crop_onnx) != os.path.abspath(cpath):
            shutil.copyfile(a.crop_onnx, cpath)
    elif os.path.exists(cpath):
        os.remove(cpath)  # a crop reader left from an earlier run would not match this manifest

    va, jpegs = load_calibration(a.split, [a.data] + a.extra_cal)
    gate, d_a, sig, logits = run(tpath, va["x"])
    if a.tta == "app":  # the app's averaging (src/core/analysis/onnx-analyzer.ts), as TreadNetExport "photo" does it
        gate, d_a, sig, logits = mirror_average((gate, d_a, sig, logits), run(tpath, va["x"][:, :, ::-1]))
    probs, dmap = run(spath, va["x"])
    tire, has = va["is_tire"], va["has_depth"]
    y = va["min_depth"]

    # Second estimate: percentile and linear map fitted on validation.
    best = None
    for pct in (5, 10, 20, 30, 50):
        q, frac = seg_stats(probs, dmap, pct)
        m = has & np.isfinite(q)
        A = np.stack([np.ones(m.sum()), q[m]], 1)
        coef = np.linalg.lstsq(A, y[m], rcond=None)[0]
        mae = np.abs(A @ coef - y[m]).mean()
        if best is None or mae < best[0]:
            best = (mae, pct, coef)
    _, pct, coef = best
    q, frac = seg_stats(probs, dmap, pct)
    d_b = np.where(np.isfinite(q), coef[0] + coef[1] * np.nan_to_num(q), d_a)

    # The regressor's reading of the tread crop; the whole-frame reading where there is no box.
    d_c = d_a
    if a.crop:
        xc, boxed = crop_inputs(jpegs, probs, pp.CROP, a.crop_input)
        d_c = d_a.copy()
        d_c[boxed] = run(cpath if a.crop_tread or a.crop_onnx else tpath, xc[boxed])[1]

    m = has
    # Stack the three depth readings (regressor, dense, classifier's expected depth) with a
    # line fitted on the calibration split for the smallest mean absolute error (least squares
    # until 2026.11.4: it fits the mean, pulls the ends of the scale toward the middle more, and
    # gave 1.074 mm cross-fit against 1.061 for the same outputs); 2-fold cross-fit MAE is
    # reported honestly.
    T0 = fit_temperature(logits[m], va["wear"][m])
    e_cls = softmax(logits / T0) @ BAND_CENTRE
    cols = [np.ones(len(y)), d_a, d_b, e_cls] + ([d_c] if a.crop else [])
    long_side = photo_long_sides(jpegs) if jpegs is not None else None
    size_cap = None
    if a.size_term:
        # the photo-size term (since 2026.11.12): larger photos read shallower (models/README.md)
        size_cap = float(np.log2(long_side.max() / pp.SIZE_REFERENCE))
        cols.append(pp.size_feature(long_side, size_cap))
    feats = np.stack(cols, 1)
    if a.dump_features:
        np.savez(a.dump_features, feats=feats, y=y, has=m, dense_ok=np.isfinite(q), logits=logits, T0=T0, sigma=sig,
                 wear=va["wear"])
    half = np.arange(len(y)) % 2 == 0
    cross = []
    for fit_on in (half, ~half):
        c = fit_lad(feats[m & fit_on], y[m & fit_on])
        cross.append(np.abs(feats[m & ~fit_on] @ c - y[m & ~fit_on]))
    cross_mae = float(np.concatenate(cross).mean())
    stack = fit_lad(feats[m], y[m])
    feats_nd = feats[:, [j for j in range(feats.shape[1]) if j != 2]]  # all but the dense estimate
    stack_nd = fit_lad(feats_nd[m], y[m])
    est = np.clip(np.where(np.isfinite(q), feats @ stack, feats_nd @ stack_nd), 0, None)
    est_r = np.round(est, 1)

    # Interval: est +- k * sigma_A, k so that 80 % of validation truths fall inside.
    k = float(np.quantile(np.abs(y[m] - est[m]) / sig[m], 0.8))
    lo, hi = np.maximum(est - k * sig, 0), est + k * sig
    cover = float(((y[m] >= lo[m]) & (y[m] <= hi[m])).mean())

    T = fit_temperature(logits[m], va["wear"][m])
    p_cls = softmax(logits / T)
    band = band_of(est)
    true_band = va["wear"]
    sd = k * sig / Z80
    p_g = phi((BAND_HI[band] - est) / sd) - phi((BAND_LO[band] - est) / sd)
    raw = 0.5 * (p_cls[np.arange(len(band)), band] + p_g)
    correct = (band == true_band).astype(np.float32)
    pa, pb = fit_platt(raw[m], correct[m])
    zz = np.log(np.clip(raw, 1e-4, 1 - 1e-4) / (1 - np.clip(raw, 1e-4, 1 - 1e-4)))
    conf = 1 / (1 + np.exp(-(pa * zz + pb)))

    # Tire / no-tire: the gate probability and the share of the frame the segmenter sees as
    # tread must both pass; thresholds keep at most 1.5 % of validation tires refused.
    gw = va["gate_w"] > 0
    best_gate = None
    for share in (0.0, 0.005, 0.01, 0.02, 0.03, 0.05):
        for q in (0.0, 0.0025, 0.005, 0.01, 0.015):
            t = float(min(0.5, np.quantile(gate[gw & tire], q)))
            accept = (gate >= t) & (frac >= share)
            rt = float((~accept[gw & tire]).mean())
            rn = float((~accept[gw & ~tire]).mean())
            if rt <= 0.015 and (best_gate is None or rn > best_gate[0] or (rn == best_gate[0] and rt < best_gate[1])):
                best_gate = (rn, rt, t, share)
    refused_neg, refused_tires, thr, min_share = best_gate

    metrics = {
        "val_images": int(len(y)), "val_depth_images": int(m.sum()),
        "mae_regressor": float(np.abs(d_a[m] - y[m]).mean()), "mae_dense": float(np.abs(d_b[m] - y[m]).mean()),
        "mae_crop_regressor": float(np.abs(d_c[m] - y[m]).mean()),
        "mae_stack": float(np.abs(est_r[m] - y[m]).mean()), "mae_stack_crossfit": cross_mae, "within_1mm": float((np.abs(est_r[m] - y[m]) <= 1).mean()),
        "class_accuracy": float(correct[m].mean()), "classifier_accuracy": float((logits[m].argmax(1) == true_band[m]).mean()),
        "interval_coverage": cover, "ece": ece(conf[m], correct[m]),
        "tires_refused": refused_tires, "nontires_refused": refused_neg,
    }
    if long_side is not None and (long_side > 640).any():
        # calibration photos of several sizes (--extra-cal): the figures per photo size
        metrics["by_photo_size"] = {}
        for L in np.unique(long_side):
            g = m & (long_side == L)
            if g.sum():
                metrics["by_photo_size"][str(int(L))] = {
                    "images": int(g.sum()), "mae": float(np.abs(est_r - y)[g].mean()),
                    "bias": float((est_r - y)[g].mean()),
                    "interval_coverage": float(((y[g] >= lo[g]) & (y[g] <= hi[g])).mean()),
                    "ece": ece(conf[g], correct[g]), "class_accuracy": float(correct[g].mean())}
    if "mode" in va:
        # How the camera was held decides what is visible: the model card reports it per view.
        metrics["by_view"] = {
            str(v): {"images": int((m & (va["mode"] == v)).sum()),
                     "mae": float(np.abs(est_r - y)[m & (va["mode"] == v)].mean()),
                     "class_accuracy": float(correct[m & (va["mode"] == v)].mean())}
            for v in np.unique(va["mode"][m])}
    print(json.dumps(metrics, indent=1))

    manifest = {
        "version": a.version,
        "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "input": {"size": pp.INPUT, "layout": "NCHW", "channels": "RGB", "resize": "fill, linear (triangle) filter",
                  "mean": pp.MEAN.tolist(), "std": pp.STD.tolist()},
        "models": {
            "tread": {"file": "tread.onnx", "sha256": sha256(tpath), "bytes": os.path.getsize(tpath),
                      "inputs": {"input": [None, 3, pp.INPUT, pp.INPUT]},
                      "outputs": {"gate": [None], "depth": [None], "sigma": [None], "wear_logits": [None, 5]}},
            "seg": {"file": "seg.onnx", "sha256": sha256(spath), "bytes": os.path.getsize(spath),
                    "inputs": {"input": [None, 3, pp.INPUT, pp.INPUT]},
                    "outputs": {"probs": [None, 4, pp.OUT, pp.OUT], "depth_map": [None, pp.OUT, pp.OUT]}},
            **({"crop": {"file": "crop.onnx", "sha256": sha256(cpath), "bytes": os.path.getsize(cpath),
                         "size": a.crop_input, "inputs": {"input": [None, 3, a.crop_input, a.crop_input]},
                         "outputs": {"gate": [None], "depth": [None], "sigma": [None], "wear_logits": [None, 5]}}}
               if a.crop_tread or a.crop_onnx else {}),
        },
        "calibration": {
            "gateThreshold": thr,
            "minTreadShare": min_share,
            "dense": {"percentile": pct, "intercept": float(coef[0]), "slope": float(coef[1]), "minPixels": 20},
            "stack": {"intercept": float(stack[0]), "regressor": float(stack[1]), "dense": float(stack[2]),
                      "classifier": float(stack[3]), "crop": float(stack[4]) if a.crop else 0.0,
                      **({"size": float(stack[-1])} if a.size_term else {})},
            "stackWithoutDense": {"intercept": float(stack_nd[0]), "regressor": float(stack_nd[1]), "dense": 0.0,
                                  "classifier": float(stack_nd[2]), "crop": float(stack_nd[3]) if a.crop else 0.0,
                                  **({"size": float(stack_nd[-1])} if a.size_term else {})},
            # the size term's feature: min(cap, max(0, log2(long side of the upright upload / reference)))
            **({"photoSize": {"reference": pp.SIZE_REFERENCE, "cap": size_cap}} if a.size_term else {}),
            **({"crop": pp.CROP} if a.crop else {}),
            # the app averages the regressor over the photo and its mirror (the graph does not)
            **({"treadMirror": True} if a.tta == "app" else {}),
            "bandCentres": BAND_CENTRE.tolist(),
            "intervalK": k,
            "wearTemperature": T,
            "confidencePlatt": {"a": pa, "b": pb},
            "wearClasses": ["new", "good", "medium", "worn", "critical"],
            "maskClasses": ["none", "tread", "groove", "twi"],
        },
        "testTimeAugmentation": {"tread": a.tta, "seg": "photo" if a.seg_tta else "none"},
        "validation": metrics,
        "notes": a.notes,
    }
    with open(os.path.join(a.out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    print("wrote manifest", a.version)


if __name__ == "__main__":
    main()
