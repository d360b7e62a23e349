#!/bin/sh
# The whole recipe, one command, fixed seeds (about 8 h 30 min on 2 CPU cores: five
# training stages of one to two hours each, plus rendering; summed from the stages as they
# were run for tread-2026.11.0 to 2026.11.4, not timed as one run of this script; the highest
# reading of used memory was 15 GB, in stage four as it was run):
#   sh models/training/train_all.sh
# Needs python3, node/npm (to unpack the pretrained weights) and the packages in
# requirements.txt. Writes data/ and runs/ (gitignored), then models/*.onnx,
# models/manifest.json and the held-out set in test/fixtures/tires/heldout.
set -eu
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
VERSION=${VERSION:-tread-2026.11.4}
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
$PY make_dataset.py --split train --count 6000 --seed-base 0 --out data
$PY make_dataset.py --split cal --count 2000 --seed-base 6000000 --out data
$PY make_dataset.py --split heldout --count 500 --seed-base 9000000 --out ../../test/fixtures/tires/heldout
$PY make_parity_fixtures.py ../../test/fixtures/tires/parity

# 3. Both networks side by side, one thread each, within wall-clock budgets.
#    The tread head overfits 6 000 images after ~15 min, so it stops there while
#    6 000 more images are rendered, then resumes on all 12 000 (second cosine cycle).
$PY train.py --model seg --minutes 58 --out runs/seg > runs/seg.log 2>&1 &
SEG=$!
$PY train.py --model tread --minutes 15 --out runs/tread_p1 > runs/tread_p1.log 2>&1
$PY make_dataset.py --split train --count 12000 --seed-base 0 --out data
$PY train.py --model tread --resume runs/tread_p1/best.pt --lr 1e-3 --minutes 20 --out runs/tread > runs/tread.log 2>&1
wait $SEG
# The segmenter then sees all 12 000 images once more with a much heavier TWI weight
# (at weight 8 its TWI class never fired on validation).
$PY train.py --model seg --resume runs/seg/best.pt --lr 1e-3 --twi-weight 40 --threads 2 --minutes 6.5 --out runs/seg_twi > runs/seg_twi.log 2>&1

# 4. Stage two: 24 000 more images (36 000 in all); both networks resume side by side for
#    62 minutes, the regressor with the auxiliary dense loss on its own 1/16 features.
$PY make_dataset.py --split train --count 36000 --seed-base 0 --out data
$PY train.py --model seg --resume runs/seg_twi/best.pt --lr 1e-3 --twi-weight 40 --minutes 62 --out runs/seg3 > runs/seg3.log 2>&1 &
SEG=$!
$PY train.py --model tread --resume runs/tread/best.pt --lr 1e-3 --aux-weight 0.5 --minutes 62 --out runs/tread3 > runs/tread3.log 2>&1
wait $SEG

# 5. Stage three: 24 000 more images (60 000 in all). The segmenter continues on the first
#    36 000 (a new cosine cycle at LR 5e-4, 112 minutes; it starts while the new images render,
#    so --limit pins what it loads), the regressor on all 60 000 for 82 minutes.
$PY train.py --model seg --resume runs/seg3/best.pt --lr 5e-4 --twi-weight 40 --limit 36000 --minutes 112 --out runs/seg5 > runs/seg5.log 2>&1 &
SEG=$!
$PY make_dataset.py --split train --count 60000 --seed-base 0 --workers 1 --out data
$PY train.py --model tread --resume runs/tread3/best.pt --lr 1e-3 --aux-weight 0.5 --minutes 82 --out runs/tread5 > runs/tread5.log 2>&1
wait $SEG

# 6. Stage four: 48 000 more images (108 000 in all, both cores). Two regressors resume from
#    stage three on all of them for 75 minutes, one thread each, with different seeds and
#    learning rates; the second starts once the first has its features (as run, with the loader
#    of the time, each needed ≈ 13 GB while it loaded the images, ≈ 4 GB after; the loader now
#    computes the features shard by shard, see stage five).
$PY make_dataset.py --split train --count 108000 --seed-base 0 --out data
$PY train.py --model tread --resume runs/tread5/best.pt --lr 1e-3 --aux-weight 0.5 --seed 0 --minutes 75 --out runs/tread6 > runs/tread6.log 2>&1 &
TREAD=$!
until grep -q "^features" runs/tread6.log 2>/dev/null; do kill -0 $TREAD; sleep 10; done
$PY train.py --model tread --resume runs/tread5/best.pt --lr 2e-3 --aux-weight 0.5 --seed 1 --minutes 75 --out runs/tread6b > runs/tread6b.log 2>&1
wait $TREAD

# 7. Stage five: 48 000 more images (156 000 in all) and 6 000 more calibration images (8 000 in
#    all, a steadier confidence map). Stage four's two members resume on all of them for 78 and
#    72 minutes, one thread each; the features are computed shard by shard (≈ 4 GB for 156 000,
#    the images are never all in memory) and cached, so the second reads them back in seconds.
$PY make_dataset.py --split cal --count 8000 --seed-base 6000000 --out data
$PY make_dataset.py --split train --count 156000 --seed-base 0 --out data
$PY train.py --model tread --resume runs/tread6/best.pt --lr 1e-3 --aux-weight 0.5 --seed 2 --minutes 78 --feature-cache runs/features --out runs/tread7 > runs/tread7.log 2>&1 &
TREAD=$!
until grep -q "^features" runs/tread7.log 2>/dev/null; do kill -0 $TREAD; sleep 10; done
$PY train.py --model tread --resume runs/tread6b/best.pt --lr 2e-3 --aux-weight 0.5 --seed 3 --minutes 72 --feature-cache runs/features --out runs/tread7b > runs/tread7b.log 2>&1
wait $TREAD

# 8. Calibration on the cal split (rendered like the photos the service sees), ONNX export
#    (opset 17), manifest with sha256. TREAD_MEMBERS: the regressor checkpoints exported as one
#    averaging graph (they share the frozen trunk, which runs once).
TREAD_MEMBERS=${TREAD_MEMBERS:-"runs/tread7/best.pt runs/tread7b/best.pt"}
$PY finalize.py --tread $TREAD_MEMBERS --seg runs/seg5/best.pt --split cal --version "$VERSION"
