"""Decode the nsfwjs MobileNetV2 TFJS weights (uint8-quantised, base64 JS) into a
PyTorch state dict for nets.MobileNetV2.

    python convert_nsfwjs.py PACKAGE_DIR out.pt

PACKAGE_DIR is an unpacked `npm pack nsfwjs@4.3.0` (see train_all.sh). The
classification layers (dense_*) are dropped; the backbone is ImageNet-
derived (fine-tuned by nsfwjs), MIT licensed.
"""
from __future__ import annotations

import base64
import json
import re
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, __import__("os").path.dirname(__file__))
from nets import MobileNetV2  # noqa: E402

DUMP_JS = """
const { createRequire } = require('node:module');
const r = createRequire(process.argv[1] + '/');
const m = r('./dist/models/mobilenet_v2/model.min.js');
const w = r('./dist/models/mobilenet_v2/group1-shard1of1.min.js');
process.stdout.write(JSON.stringify({ manifest: m.weightsManifest, weights: typeof w === 'string' ? w : w.default }));
"""


def load_tfjs(pkg: str) -> dict[str, np.ndarray]:
    out = subprocess.run(["node", "-e", DUMP_JS, pkg], check=True, capture_output=True, text=True).stdout
    data = json.loads(out)
    buf = base64.b64decode(data["weights"])
    tensors, off = {}, 0
    for spec in data["manifest"][0]["weights"]:
        n = int(np.prod(spec["shape"]))
        q = spec.get("quantization")
        if q:
            raw = np.frombuffer(buf, np.uint8, n, off).astype(np.float32)
            off += n
            arr = raw * q["scale"] + q["min"]
        else:
            arr = np.frombuffer(buf, np.float32, n, off).copy()
            off += 4 * n
        tensors[spec["name"]] = arr.reshape(spec["shape"])
    return tensors


def convert(t: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
    net = MobileNetV2()
    sd = {}

    def conv(prefix, key, depthwise=False):
        k = t[key]
        k = k.transpose(2, 3, 0, 1) if depthwise else k.transpose(3, 2, 0, 1)
        sd[prefix + ".0.weight"] = torch.from_numpy(np.ascontiguousarray(k))

    def bn(prefix, name):
        sd[prefix + ".1.weight"] = torch.from_numpy(t[name + "/gamma"])
        sd[prefix + ".1.bias"] = torch.from_numpy(t[name + "/beta"])
        sd[prefix + ".1.running_mean"] = torch.from_numpy(t[name + "/moving_mean"])
        sd[prefix + ".1.running_var"] = torch.from_numpy(t[name + "/moving_variance"])

    conv("stem", "Conv1/kernel"), bn("stem", "bn_Conv1")
    for i, b in enumerate(net.blocks):
        p = f"blocks.{i}"
        if b.expand is not None:
            conv(p + ".expand", f"{b.name}_expand/kernel"), bn(p + ".expand", f"{b.name}_expand_BN")
        conv(p + ".dw", f"{b.name}_depthwise/depthwise_kernel", depthwise=True), bn(p + ".dw", f"{b.name}_depthwise_BN")
        conv(p + ".project", f"{b.name}_project/kernel"), bn(p + ".project", f"{b.name}_project_BN")
    conv("head", "Conv_1/kernel"), bn("head", "Conv_1_bn")
    missing, unexpected = net.load_state_dict(sd, strict=False)
    missing = [m for m in missing if not m.endswith("num_batches_tracked")]
    assert not missing and not unexpected, (missing, unexpected)
    return net.state_dict()


if __name__ == "__main__":
    torch.save(convert(load_tfjs(sys.argv[1])), sys.argv[2])
    print("wrote", sys.argv[2])
