#!/bin/sh
# The whole recipe, one command, fixed seeds (about an hour on 2 CPU cores):
#   sh models/training/train_all.sh
# Needs python3, node/npm (to unpack the pretrained weights) and the packages in
# requirements.txt. Writes data/ and runs/ (gitignored), then models/*.onnx,
# models/manifest.json and the held-out set in test/fixtures/tires/heldout.
set -eu
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
VERSION=${VERSION:-tread-2026.11.0}
TRAIN_COUNT=${TRAIN_COUNT:-6000}
MINUTES=${MINUTES:-58}
mkdir -p data runs

# 1. Pretrained MobileNetV2 (ImageNet-derived, MIT) from the nsfwjs npm package.
if [ ! -f runs/mbv2_nsfwjs.pt ]; then
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack nsfwjs@4.3.0 >/dev/null && tar xzf nsfwjs-4.3.0.tgz)
  $PY convert_nsfwjs.py "$tmp/package" runs/mbv2_nsfwjs.pt
  rm -rf "$tmp"
fi

# 2. Synthetic data: validation, training, held-out test (disjoint seed ranges).
$PY make_dataset.py --split val --count 2000 --seed-base 5000000 --out data
$PY make_dataset.py --split train --count "$TRAIN_COUNT" --seed-base 0 --out data
$PY make_dataset.py --split heldout --count 190 --seed-base 9000000 --out ../../test/fixtures/tires/heldout
$PY make_parity_fixtures.py ../../test/fixtures/tires/parity

# 3. Both networks side by side, one thread each, within the time budget.
$PY train.py --model tread --minutes "$MINUTES" --out runs/tread > runs/tread.log 2>&1 &
$PY train.py --model seg --minutes "$MINUTES" --out runs/seg > runs/seg.log 2>&1 &
wait

# 4. Calibration on validation, ONNX export (opset 17), manifest with sha256.
$PY finalize.py --tread runs/tread/best.pt --seg runs/seg/best.pt --version "$VERSION"
