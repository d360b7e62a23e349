#!/bin/sh
# The scene reader (models/README.md, "The scene reader"), one command, fixed seeds:
#   sh models/training/train_real.sh [REALDATA]
# REALDATA defaults to ../shared/realdata beside the repository. On 2 CPU cores: ≈ 4 min to render
# the 3 000 photo-like renders, ≈ 20 min to decode and run the frozen network over every view,
# ≈ 2–4 min per head (ten heads: five folds, four sets left out, the shipped one), ≈ 1.5 min per
# wear branch (six: five folds and the shipped one), seconds for each head's support (support_head.py:
# how much a photo looks like those the worn probability learned from), ≈ 14 min to read every photo,
# its mirror image, its zoomed-out copy and that copy's mirror through its fold's model (the constants' out-of-fold
# readings), then the real-photo table (≈ 5–15 min). It writes models/scene.onnx and a new manifest.json (the other three
# networks and their constants unchanged), runs/loso-models/SET/ (a model trained without SET, for
# `npm run eval -- --real --loso`), and runs/real_table.md.
#
# Needs python3 with requirements.txt, node/npm (the pretrained weights come from the nsfwjs npm
# package) and apt-get download (Debian's wallpapers are the photos without a tire; nothing is
# installed). Settings (environment): PYTHON, VERSION, WORK (default: this folder; data/ and runs/).
# michelin-twi is never trained on (its licence): it is measured only.
set -eu
CALLER=$(pwd)
cd "$(dirname "$0")"
HERE=$(pwd)
PY=${PYTHON:-python3}
case $PY in /*) ;; */*) PY=$CALLER/$PY ;; esac
REAL=${1:-$HERE/../../../shared/realdata}
case $REAL in /*) ;; *) REAL=$CALLER/$REAL ;; esac
VERSION=${VERSION:-tread-2026.11.29.6}
WORK=${WORK:-$HERE}
mkdir -p "$WORK/data" "$WORK/runs"
cd "$WORK"
MODELS=$(cd "$HERE/.." && pwd)
step() { echo "== $(date -u +%H:%M:%S) $*"; }

step "1. pretrained MobileNetV2 (ImageNet-derived, MIT) from the nsfwjs npm package"
if [ ! -f runs/mbv2_nsfwjs.pt ]; then
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent nsfwjs@4.3.0 >/dev/null && tar xzf nsfwjs-4.3.0.tgz)
  $PY "$HERE/convert_nsfwjs.py" "$tmp/package" runs/mbv2_nsfwjs.pt
  rm -rf "$tmp"
fi

step "2. photos without a tire: the wallpapers Debian packages ship (downloaded, unpacked here, not installed)"
for set in "deb1:gnome-backgrounds ukui-wallpapers mate-backgrounds lomiri-wallpapers" \
           "deb2:lomiri-wallpapers-16.04 lomiri-wallpapers-20.04 plasma-workspace-wallpapers sway-backgrounds"; do
  name=${set%%:*}
  if [ ! -d "data/$name/x" ]; then
    mkdir -p "data/$name"
    (cd "data/$name" && apt-get download ${set#*:} && for f in *.deb; do dpkg -x "$f" x; done)
  fi
done

step "3. 3 000 photo-like renders (seeds 8 000 000 on: no other split uses them)"
[ -f data/renders/labels.csv ] || $PY "$HERE/make_dataset.py" --split heldout --count 3000 --seed-base 8000000 --out data/renders --workers 2

step "4. the frozen network over every view (the app's framing + augmented copies)"
REALSETS=web-good-defective,tyre-defect-ccby,vehicles-wheels,debian-photos,michelin-twi
[ -f data/cache_real.npz ] || $PY "$HERE/real_cache.py" --realdata "$REAL" --debian data/deb1/x --pretrained runs/mbv2_nsfwjs.pt --out data/cache_real.npz --sets $REALSETS
[ -f data/cache_deb2.npz ] || $PY "$HERE/real_cache.py" --realdata "$REAL" --debian data/deb2/x --pretrained runs/mbv2_nsfwjs.pt --out data/cache_deb2.npz --sets debian-photos --seed 1
[ -f data/cache_renders.npz ] || $PY "$HERE/real_cache.py" --realdata "$REAL" --renders data/renders --pretrained runs/mbv2_nsfwjs.pt --out data/cache_renders.npz --sets renders
CACHES="data/cache_real.npz data/cache_deb2.npz data/cache_renders.npz"

# --clip 3: standardised features clamped to ±3 (since tread-2026.11.28.2: michelin-twi's order 0.41 → 0.46
# over the five fold heads, the web set unchanged; models/NOTEBOOK.md)
# --ccby-flat-worn: tyre-defect-ccby's flat-spot photos (bald tread) as worn (since tread-2026.11.29.2:
# michelin-twi's order over the five fold heads 0.440 → 0.503 and 0.432 → 0.473 with a second seed,
# the web set's AUC 0.893 → 0.897 and 0.898 → 0.895; models/NOTEBOOK.md)
# --web-wear-only (since tread-2026.11.29.5): the 152 defective web photos that look usable by eye
# (labels/web_defective_by_eye.csv) get no worn label: five fold heads, out of fold, web usable vs worn
# AUC 0.950 -> 0.959, usable vs all defective 0.897 -> 0.906, michelin-twi's order 0.497 -> 0.515
# (models/NOTEBOOK.md, "What the defective web photos show")
WEB="--web-wear-only worn,flat,damaged,other"
HEAD="--clip 3 --ccby-flat-worn $WEB"
step "5. heads: five folds (out-of-fold readings for the constants), one per set left out, the shipped one"
for k in 0 1 2 3 4; do
  [ -f "runs/cv/fold$k/pred.npz" ] || $PY "$HERE/train_real.py" --cache $CACHES $HEAD --fold $k --out "runs/cv/fold$k"
done
for s in web-good-defective tyre-defect-ccby vehicles-wheels debian-photos; do
  [ -f "runs/loso/$s/pred.npz" ] || $PY "$HERE/train_real.py" --cache $CACHES $HEAD --exclude $s --out "runs/loso/$s"
done
[ -f runs/real_all/pred.npz ] || $PY "$HERE/train_real.py" --cache $CACHES $HEAD --out runs/real_all

step "5b. the wear branch (blocks 15-16 and the head fine-tuned on web-good-defective; since tread-2026.11.28.3): five folds, the shipped one"
[ -f data/cache_wear.npz ] || $PY "$HERE/wear_branch.py" cache --realdata "$REAL" --pretrained runs/mbv2_nsfwjs.pt --out data/cache_wear.npz
for k in 0 1 2 3 4; do
  [ -f "runs/wear/fold$k/branch.pt" ] || $PY "$HERE/wear_branch.py" train --cache data/cache_wear.npz --pretrained runs/mbv2_nsfwjs.pt \
    --head-pred "runs/cv/fold$k/pred.npz" --fold $k --out "runs/wear/fold$k" $WEB
done
[ -f runs/wear/all/branch.pt ] || $PY "$HERE/wear_branch.py" train --cache data/cache_wear.npz --pretrained runs/mbv2_nsfwjs.pt \
  --head-pred runs/real_all/pred.npz --out runs/wear/all $WEB
$PY "$HERE/wear_branch.py" combine --cv runs/cv --wear runs/wear

# the support (since tread-2026.11.29.3): how much a photo looks like those the worn probability learned
# from, one logistic layer on each head's features (seconds a head; the folds' for the model card's
# out-of-fold figures, each left-out set's for its model, none without tyre-defect-ccby)
step "5c. the wear reader's support, for every head"
for h in runs/cv/fold0 runs/cv/fold1 runs/cv/fold2 runs/cv/fold3 runs/cv/fold4 runs/loso/* runs/real_all; do
  [ -f "$h/support.json" ] || $PY "$HERE/support_head.py" --cache data/cache_real.npz --head "$h"
done

# --mirror: each photo is read as it is and mirrored, the readings averaged (since tread-2026.11.29: hard
# negatives refused out of fold 88.5 -> 91.8 % at the same share of tread photos refused; models/NOTEBOOK.md)
# (always run, like the combine above: readings kept from heads or branches since retrained would fit stale constants)
# --zoom 3 (since tread-2026.11.29.6): the worn logit also reads the photo zoomed out three times (tiled with
# its mirror images, box-filtered back to 160 px, and that copy mirrored), weighed by what the support lacks: close-ups read at the web
# photos' scale (out of fold, the fold models: michelin-twi's order 0.444 -> 0.496, web usable vs worn by eye
# AUC 0.963 -> 0.960; models/NOTEBOOK.md, "Reading close-ups zoomed out"). Needs each fold's support (5c).
ZOOM="--zoom 3"
step "5d. out-of-fold readings as the shipped graph makes them (photo and mirror image, the zoomed-out copy and its mirror; fold heads and branches)"
$PY "$HERE/mirror_oof.py" --cv runs/cv --wear runs/wear $ZOOM --out runs/cv_mirror

# --features (since tread-2026.11.29.4): the pooled features as a last output, which a shop's own reader
# is fitted on (src/core/analysis/shop-reader.ts); the other outputs are unchanged to the bit
step "6. export, constants, manifest"
$PY "$HERE/export_real.py" --pretrained runs/mbv2_nsfwjs.pt --top runs/real_all/top.pt --wear runs/wear/all/branch.pt --mirror \
  --support runs/real_all/support.pt --features $ZOOM --out "$MODELS/scene.onnx"
$PY "$HERE/finalize_real.py" --cv runs/cv_mirror --scene "$MODELS/scene.onnx" --manifest "$MODELS/manifest.json" --version "$VERSION" \
  --loso runs/loso --loso-out runs/loso-models --pretrained runs/mbv2_nsfwjs.pt --wear runs/wear/all/branch.pt --mirror $ZOOM

step "7. the real-photo table, each set scored by a model that did not learn from it where there is one"
(cd "$MODELS/.." && npx tsx src/core/cli/eval.ts --real "$REAL" --models "$MODELS" --loso "$WORK/runs/loso-models" \
  --per-photo "$WORK/runs/real_photos.csv") | tee runs/real_table.md
step "done"
