#!/bin/sh
# The whole recipe, one command, fixed seeds:
#   sh models/training/train_all.sh
# reproduces the shipped model (about 18 h on 2 CPU cores: eleven training stages of 28 minutes
# to two hours each, plus rendering; summed from the stages as they were run for tread-2026.11.0 to
# 2026.11.11, plus the 52 minutes of rendering the large calibration photos of 2026.11.12 took;
# the highest reading of used memory was 15 GB, in stage four as it was run).
#   SCALE=0.06 WORK=/tmp/tw sh models/training/train_all.sh
# runs the same stages with 6 % of the images and of every time budget (the held-out set stays
# 500 images): 57 min 26 s end to end on 2 cores with all eleven stages (2026-11-23;
# models/NOTEBOOK.md has the run's timeline and its less accurate model's figures; with the large
# calibration photos of 2026.11.12, 67 min 6 s on a slower machine, ≈ 4 minutes of them).
#
# Settings (environment): SCALE (default 1) multiplies every image count and every training
# budget; WORK (default: this folder) holds data/ and runs/; OUT (default: models/, or $WORK/models
# when WORK is set) receives tread.onnx, seg.onnx and manifest.json; FIXTURES (default:
# test/fixtures/tires, or $WORK/fixtures when WORK is set) receives the held-out set and the parity
# fixtures; PYTHON, VERSION, TREAD_MEMBERS. Needs python3, node/npm (to unpack the pretrained
# weights) and the packages in requirements.txt. Budgets are wall-clock, so the number of optimiser steps (and the last
# digits of the result) depends on the machine's speed; everything else is seeded.
set -eu
CALLER=$(pwd)
cd "$(dirname "$0")"
HERE=$(pwd)
# absolute path of a folder given relative to where the script was called from (created)
absdir() { (cd "$CALLER" && mkdir -p "$1" && cd "$1" && pwd); }
PY=${PYTHON:-python3}
# a PYTHON given as a path relative to where the script was called from (PYTHON=.venv/bin/python)
case $PY in /*) ;; */*) PY=$CALLER/$PY ;; esac
SCALE=${SCALE:-1}
# A scaled run's model is named after its scale, so it is never mistaken for the shipped one.
if [ "$SCALE" = 1 ]; then VERSION=${VERSION:-tread-2026.11.12}; else VERSION=${VERSION:-tread-2026.11.12-scale$SCALE}; fi
if [ -n "${WORK:-}" ]; then
  # a run elsewhere writes nothing into the repository unless OUT / FIXTURES say so
  WORK=$(absdir "$WORK"); OUT=${OUT:-$WORK/models}; FIXTURES=${FIXTURES:-$WORK/fixtures}
else
  WORK=$HERE
fi
OUT=$(absdir "${OUT:-$HERE/..}")
FIXTURES=$(absdir "${FIXTURES:-$HERE/../../test/fixtures/tires}")
cd "$WORK"
mkdir -p data runs
# Shards hold 500 images at full scale; scaled runs shrink the shard so every count stays a
# whole number of shards (counts are rounded to shards, at least one).
SHARD=$(awk -v s="$SCALE" 'BEGIN { v = int(500 * s + 0.5); print (v < 1 ? 1 : v) }')
n() { awk -v c="$1" -v s="$SCALE" -v sh="$SHARD" 'BEGIN { k = int(c * s / sh + 0.5); print (k < 1 ? 1 : k) * sh }'; }
m() { awk -v c="$1" -v s="$SCALE" 'BEGIN { printf "%.3f\n", c * s }'; }
# render SPLIT COUNT SEED_BASE [more make_dataset options]: COUNT is the full-scale count, into data/
render() { render_to data "$@"; }
# render_to FOLDER SPLIT COUNT SEED_BASE [options]: the same into another folder
render_to() {
  out=$1 split=$2 count=$(n "$3") base=$4
  shift 4
  $PY "$HERE/make_dataset.py" --split "$split" --count "$count" --seed-base "$base" --shard "$SHARD" --out "$out" "$@"
}
# every training run names the images it uses (--limit), so a rerun in a WORK that already holds
# later stages' shards trains each stage on the same images as a fresh run
train() { $PY "$HERE/train.py" --data data --pretrained runs/mbv2_nsfwjs.pt "$@"; }
echo "train_all: SCALE=$SCALE WORK=$WORK OUT=$OUT FIXTURES=$FIXTURES shard=$SHARD, started $(date -u +%FT%TZ)"

# 1. Pretrained MobileNetV2 (ImageNet-derived, MIT) from the nsfwjs npm package.
if [ ! -f runs/mbv2_nsfwjs.pt ]; then
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent nsfwjs@4.3.0 >/dev/null && tar xzf nsfwjs-4.3.0.tgz)
  $PY "$HERE/convert_nsfwjs.py" "$tmp/package" runs/mbv2_nsfwjs.pt
  rm -rf "$tmp"
fi

# 2. Synthetic data: validation, training, held-out test (disjoint seed ranges).
render val 2000 5000000
render train 6000 0
render cal 2000 6000000
$PY "$HERE/make_dataset.py" --split heldout --count 500 --seed-base 9000000 --out "$FIXTURES/heldout"
$PY "$HERE/make_parity_fixtures.py" "$FIXTURES/parity"

# 3. Both networks side by side, one thread each, within wall-clock budgets.
#    The tread head overfits 6 000 images after ~15 min, so it stops there while
#    6 000 more images are rendered, then resumes on all 12 000 (second cosine cycle).
train --limit "$(n 6000)" --model seg --minutes "$(m 58)" --out runs/seg > runs/seg.log 2>&1 &
SEG=$!
train --limit "$(n 6000)" --model tread --minutes "$(m 15)" --out runs/tread_p1 > runs/tread_p1.log 2>&1
render train 12000 0
train --limit "$(n 12000)" --model tread --resume runs/tread_p1/best.pt --lr 1e-3 --minutes "$(m 20)" --out runs/tread > runs/tread.log 2>&1
wait $SEG
# The segmenter then sees all 12 000 images once more with a much heavier TWI weight
# (at weight 8 its TWI class never fired on validation).
train --limit "$(n 12000)" --model seg --resume runs/seg/best.pt --lr 1e-3 --twi-weight 40 --threads 2 --minutes "$(m 6.5)" --out runs/seg_twi > runs/seg_twi.log 2>&1

# 4. Stage two: 24 000 more images (36 000 in all); both networks resume side by side for
#    62 minutes, the regressor with the auxiliary dense loss on its own 1/16 features.
render train 36000 0
train --limit "$(n 36000)" --model seg --resume runs/seg_twi/best.pt --lr 1e-3 --twi-weight 40 --minutes "$(m 62)" --out runs/seg3 > runs/seg3.log 2>&1 &
SEG=$!
train --limit "$(n 36000)" --model tread --resume runs/tread/best.pt --lr 1e-3 --aux-weight 0.5 --minutes "$(m 62)" --out runs/tread3 > runs/tread3.log 2>&1
wait $SEG

# 5. Stage three: 24 000 more images (60 000 in all). The segmenter continues on the first
#    36 000 (a new cosine cycle at LR 5e-4, 112 minutes; it starts while the new images render,
#    so --limit pins what it loads), the regressor on all 60 000 for 82 minutes.
train --model seg --resume runs/seg3/best.pt --lr 5e-4 --twi-weight 40 --limit "$(n 36000)" --minutes "$(m 112)" --out runs/seg5 > runs/seg5.log 2>&1 &
SEG=$!
render train 60000 0 --workers 1
train --limit "$(n 60000)" --model tread --resume runs/tread3/best.pt --lr 1e-3 --aux-weight 0.5 --minutes "$(m 82)" --out runs/tread5 > runs/tread5.log 2>&1
wait $SEG

# 6. Stage four: 48 000 more images (108 000 in all, both cores). Two regressors resume from
#    stage three on all of them for 75 minutes, one thread each, with different seeds and
#    learning rates; the second starts once the first has its features (as run, with the loader
#    of the time, each needed ≈ 13 GB while it loaded the images, ≈ 4 GB after; the loader now
#    computes the features shard by shard, see stage five).
render train 108000 0
train --limit "$(n 108000)" --model tread --resume runs/tread5/best.pt --lr 1e-3 --aux-weight 0.5 --seed 0 --minutes "$(m 75)" --out runs/tread6 > runs/tread6.log 2>&1 &
TREAD=$!
until grep -q "^features" runs/tread6.log 2>/dev/null; do kill -0 $TREAD; sleep 10; done
train --limit "$(n 108000)" --model tread --resume runs/tread5/best.pt --lr 2e-3 --aux-weight 0.5 --seed 1 --minutes "$(m 75)" --out runs/tread6b > runs/tread6b.log 2>&1
wait $TREAD

# 7. Stage five: 48 000 more images (156 000 in all) and 6 000 more calibration images (8 000 in
#    all, a steadier confidence map). Stage four's two members resume on all of them for 78 and
#    72 minutes, one thread each; the features are computed shard by shard (≈ 4 GB for 156 000,
#    the images are never all in memory) and cached, so the second reads them back in seconds.
render cal 8000 6000000
render train 156000 0
train --limit "$(n 156000)" --model tread --resume runs/tread6/best.pt --lr 1e-3 --aux-weight 0.5 --seed 2 --minutes "$(m 78)" --feature-cache runs/features --out runs/tread7 > runs/tread7.log 2>&1 &
TREAD=$!
until grep -q "^features" runs/tread7.log 2>/dev/null; do kill -0 $TREAD; sleep 10; done
train --limit "$(n 156000)" --model tread --resume runs/tread6b/best.pt --lr 2e-3 --aux-weight 0.5 --seed 3 --minutes "$(m 72)" --feature-cache runs/features --out runs/tread7b > runs/tread7b.log 2>&1
wait $TREAD

# 8. Stage six: B' was still improving when its schedule ended, so it resumes on the same 156 000
#    for a new 45-minute cycle at a lower peak (B''); beside it the segmenter (trained on 36 000)
#    resumes on the first 60 000 (LR 5e-4, 45 minutes).
train --limit "$(n 60000)" --model seg --resume runs/seg5/best.pt --lr 5e-4 --twi-weight 40 --seed 6 --minutes "$(m 45)" --out runs/seg6 > runs/seg6.log 2>&1 &
SEG=$!
train --limit "$(n 156000)" --model tread --resume runs/tread7b/best.pt --lr 1e-3 --aux-weight 0.5 --seed 5 --minutes "$(m 45)" --feature-cache runs/features --out runs/tread8b > runs/tread8b.log 2>&1
wait $SEG

# 9. Stage seven: 48 000 more images (204 000 in all, both cores); A' and B'' resume on all of
#    them side by side for 65 minutes, one thread each (A'' seed 6, B''' seed 7, LR 1e-3); the
#    first computes and caches the features, the second reads them back.
render train 204000 0
train --limit "$(n 204000)" --model tread --resume runs/tread7/best.pt --lr 1e-3 --aux-weight 0.5 --seed 6 --minutes "$(m 65)" --feature-cache runs/features --out runs/tread10a > runs/tread10a.log 2>&1 &
TREAD=$!
until grep -q "^features" runs/tread10a.log 2>/dev/null; do kill -0 $TREAD; sleep 10; done
train --limit "$(n 204000)" --model tread --resume runs/tread8b/best.pt --lr 1e-3 --aux-weight 0.5 --seed 7 --minutes "$(m 65)" --feature-cache runs/features --out runs/tread10b > runs/tread10b.log 2>&1
wait $TREAD

# 10. Stage eight: no new images. A'' and B''' continue on the same 204 000 side by side for 105
#    minutes at a third of stage seven's learning rate (3e-4: a new cycle's peak at 1e-3 cost
#    stage seven its first epoch), one thread each (A''' seed 8, B'''' seed 9). Both read the
#    features stage seven cached. Their validation loss stops improving after 2 and 3 epochs.
train --limit "$(n 204000)" --model tread --resume runs/tread10a/best.pt --lr 3e-4 --aux-weight 0.5 --seed 8 --minutes "$(m 105)" --feature-cache runs/features --out runs/tread12a > runs/tread12a.log 2>&1 &
TREAD=$!
train --limit "$(n 204000)" --model tread --resume runs/tread10b/best.pt --lr 3e-4 --aux-weight 0.5 --seed 9 --minutes "$(m 105)" --feature-cache runs/features --out runs/tread12b > runs/tread12b.log 2>&1
wait $TREAD

# 11. Stage nine: the segmenter (stage six's, trained on the first 60 000) resumes on the first
#    120 000 with both threads for 55 minutes (LR 5e-4, seed 10); its images and maps take
#    ≈ 11.5 GB, which is why it stops at 120 000.
train --limit "$(n 120000)" --model seg --resume runs/seg6/best.pt --lr 5e-4 --twi-weight 40 --seed 10 --threads 2 --minutes "$(m 55)" --out runs/seg9 > runs/seg9.log 2>&1

# 12. Stage ten (2026.11.10): the crop reader. 30 000 photo-like renders cut to the box around
#    their tread (and 2 000 for choosing the checkpoint), and both members resume on them side by
#    side, one thread each, 28 minutes (LR 5e-4, seeds 11 and 12); the second reads the first's
#    cached features. They read the app's crop of the tread (crop.onnx); tread.onnx is unchanged.
render cropval 2000 7100000
render crop 30000 7000000
train --limit "$(n 30000)" --model tread --train-split crop --val-split cropval --resume runs/tread12a/best.pt --lr 5e-4 --aux-weight 0.5 --seed 11 --minutes "$(m 28)" --feature-cache runs/features --out runs/cropA > runs/cropA.log 2>&1 &
CROP=$!
until grep -q "^features" runs/cropA.log 2>/dev/null; do kill -0 $CROP; sleep 10; done
train --limit "$(n 30000)" --model tread --train-split crop --val-split cropval --resume runs/tread12b/best.pt --lr 5e-4 --aux-weight 0.5 --seed 12 --minutes "$(m 26.5)" --feature-cache runs/features --out runs/cropB > runs/cropB.log 2>&1
wait $CROP

# 13. Stage eleven (2026.11.11): the crop reader again, on 48 000 new crops (seeds 7 200 000 on),
#    with every BatchNorm kept in eval mode (--freeze-bn: in train mode the running statistics
#    drift toward those of dropout-perturbed batches: resumed from crop.onnx unfolded, the crop
#    reader lost 0.04 mm of validation MAE that way in 25 seconds at a learning rate of 1e-9) and the learning rate rising over the first tenth (--warmup).
#    Side by side, one thread each: A from stage ten's A (LR 1e-4, seed 31, 38 minutes), B from
#    stage ten's B (LR 2e-4, seed 32, 34 minutes, reading A's cached features). No auxiliary loss.
render crop2 48000 7200000
train --limit "$(n 48000)" --model tread --train-split crop2 --val-split cropval --resume runs/cropA/best.pt --freeze-bn --warmup 0.1 --lr 1e-4 --aux-weight 0 --seed 31 --minutes "$(m 38)" --feature-cache runs/features --out runs/crop2A > runs/crop2A.log 2>&1 &
CROP=$!
until grep -q "^features" runs/crop2A.log 2>/dev/null; do kill -0 $CROP; sleep 10; done
train --limit "$(n 48000)" --model tread --train-split crop2 --val-split cropval --resume runs/cropB/best.pt --freeze-bn --warmup 0.1 --lr 2e-4 --aux-weight 0 --seed 32 --minutes "$(m 34)" --feature-cache runs/features --out runs/crop2B > runs/crop2B.log 2>&1
wait $CROP

# 14. Calibration on the cal split (rendered like the photos the service sees), ONNX export
#    (opset 17), manifest with sha256. TREAD_MEMBERS: the regressor checkpoints exported as one
#    averaging graph (they share the frozen trunk, which runs once). Both networks read the photo
#    and its mirror image and average the readings (since 2026.11.7; the segmenter inside its graph,
#    the regressor since 2026.11.9 in the app: --tta app exports a plain graph and calibrates on
#    the app's average). --crop (since 2026.11.9): the regressor reads each calibration photo a
#    second time, cropped to the box around the tread the segmenter found (unmirrored, in the same
#    batch in the app), and that reading joins the stack (the cal shards keep the photos' JPEG
#    bytes for it).
#    Since 2026.11.12 the calibration split also holds photos as large as the service receives
#    (1 000 each at 2, 3 and 5.6 times the size, each size in its own folder: data/cal2x,
#    data/cal3x, data/calL), and the stack has a photo-size term (--size-term): larger photos read
#    shallower (models/README.md, Large photos).
render_to data/cal2x cal 1000 6200000 --photo-scale 2
render_to data/cal3x cal 1000 6300000 --photo-scale 3
render_to data/calL cal 1000 6100000 --photo-scale 5.6
TREAD_MEMBERS=${TREAD_MEMBERS:-"runs/tread12a/best.pt runs/tread12b/best.pt"}
$PY "$HERE/finalize.py" --data data --extra-cal data/cal2x data/cal3x data/calL --size-term --out-dir "$OUT" --tread $TREAD_MEMBERS --seg runs/seg9/best.pt --split cal --tta app --seg-tta --crop --crop-tread runs/crop2A/best.pt runs/crop2B/best.pt --version "$VERSION"
