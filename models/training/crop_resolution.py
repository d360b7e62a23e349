"""How a crop reader reads crops of the same scenes rendered at different sizes: the probe of
models/NOTEBOOK.md, Training, "Does the crop reader read better from finer renders?" (2026-11-25,
twenty-seventh session). The reader is a graph (the shipped crop.onnx, 160 x 160 input, both
members averaged) or one member's train.py checkpoint read at --side px:

    python crop_resolution.py --onnx ../crop.onnx --data data/x1 data/x2 --split cropvalX
    python crop_resolution.py --checkpoint runs/x2A/best.pt --side 320 --data data/x1 data/x2

Each folder holds a crop split stored at any input side (make_dataset.py --input, --photo-scale);
its crops are resized to the reader's input with preprocess.to_input_u8's filter (Pillow's
bilinear, as every shard is made), which for crops stored at another side is a second resize:
close to, not the bit of, resizing the render's own crop once. Prints, per folder, the depth MAE on
the tires with a depth (the set train.py validates on; no mirror averaging, as there) overall and by
true depth, and after a straight line (least squares) fitted to the folder's own readings, cross-fit
on two halves (each half read by the line fitted to the other): the calibration's share, which
takes out a bias that depends on the render size (the app's photo-size term does that for photos).
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import onnxruntime as ort
import torch
from PIL import Image

sys.path.insert(0, os.path.dirname(__file__))
import preprocess as pp  # noqa: E402
from depth_resolution import by_depth  # noqa: E402
from nets import TreadNet, load_checkpoint  # noqa: E402
from train import load  # noqa: E402

BINS = [(0.0, 1.6), (1.6, 3.0), (3.0, 5.0), (5.0, 7.0), (7.0, 12.0)]


def reader(a: argparse.Namespace):
    """(a function from normalised N x 3 x side x side to depths, side)."""
    if a.onnx:
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = a.threads
        sess = ort.InferenceSession(a.onnx, opts, providers=["CPUExecutionProvider"])
        names = [o.name for o in sess.get_outputs()]
        return (lambda x: dict(zip(names, sess.run(None, {"input": x})))["depth"].reshape(-1),
                sess.get_inputs()[0].shape[2])
    torch.set_num_threads(a.threads)
    net = load_checkpoint(TreadNet(), a.checkpoint).eval()  # the frozen trunk is in the checkpoint too

    def run(x):
        with torch.no_grad():
            return net(torch.from_numpy(x))[1].numpy().reshape(-1)
    return run, a.side


def read(run, x_u8: np.ndarray, side: int) -> np.ndarray:
    depth = []
    for i in range(0, len(x_u8), 64):
        part = x_u8[i:i + 64]
        if part.shape[1] != side:
            part = np.stack([pp.to_input_u8(Image.fromarray(im), side) for im in part])
        depth.append(run(pp.normalise(part)))
    return np.concatenate(depth)


def main():
    ap = argparse.ArgumentParser()
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--onnx", help="a crop reader graph (input named 'input', output 'depth')")
    src.add_argument("--checkpoint", help="a train.py tread checkpoint (one member)")
    ap.add_argument("--side", type=int, default=pp.INPUT, help="the checkpoint's input side")
    ap.add_argument("--data", required=True, nargs="+")
    ap.add_argument("--split", default="cropvalX")
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    run, side = reader(a)
    truth = None
    for folder in a.data:
        d = load(a.split, folder)
        m = d["has_depth"]
        t = d["min_depth"][m]
        if truth is not None and len(truth) == len(t):
            print(f"  (same labels as the first folder within {np.abs(truth - t).max():.3f} mm)")
        truth = t
        pred = read(run, d["x"][m], side)
        err = np.abs(pred - t)
        fitted = np.empty_like(pred)
        half = np.arange(len(t)) % 2 == 0
        for part in (half, ~half):
            slope, icpt = np.polyfit(pred[~part], t[~part], 1)
            fitted[part] = slope * pred[part] + icpt
        ferr = np.abs(fitted - t)
        print(f"{folder}: {m.sum()} tires, crops stored at {d['x'].shape[1]} px, read at {side}: "
              f"MAE {err.mean():.3f} mm, within 1 mm {np.mean(err <= 1) * 100:.1f} %; with a line fitted "
              f"(cross-fit) MAE {ferr.mean():.3f} mm, within 1 mm {np.mean(ferr <= 1) * 100:.1f} %", flush=True)
        by_depth(pred, t, BINS, "tire")


if __name__ == "__main__":
    main()
