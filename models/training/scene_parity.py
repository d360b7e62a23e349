"""The scene reader's parity fixture: what it answers, in Python, on the input the training made
from each fixture photo (real_cache.py's view 0: app_frame, mirror-extended to 4:3, stretched to
160 x 160). test/analysis/scene-fixtures.test.ts checks that the app's own preprocessing (sharp)
gives the same answers within a stated tolerance.

    python scene_parity.py --model ../scene.onnx --out ../../test/fixtures/scene/parity.json FILE...
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(__file__))
import preprocess as pp  # noqa: E402
from real_cache import app_view, load  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    sess = ort.InferenceSession(a.model, providers=["CPUExecutionProvider"])
    rows = []
    root = os.path.dirname(os.path.abspath(a.out))
    for f in a.files:
        u8 = app_view(load(f, None))
        out = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, {"input": pp.normalise(u8[None])})))
        row = {"file": os.path.relpath(os.path.abspath(f), root), "scene": [round(float(v), 4) for v in out["scene"][0]],
               "worn": round(float(out["worn"][0]), 4), "depthMm": round(float(out["depth"][0]), 3), "sigmaMm": round(float(out["sigma"][0]), 3)}
        if "worn_logit" in out:  # scene models since tread-2026.11.28.2
            row["wornLogit"] = round(float(out["worn_logit"][0]), 3)
        if "support" in out:  # since tread-2026.11.29.3
            row["support"] = round(float(out["support"][0]), 4)
        rows.append(row)
    with open(a.out, "w") as fh:
        json.dump(rows, fh, indent=1)
        fh.write("\n")
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
