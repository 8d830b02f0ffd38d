#!/usr/bin/env bash
# `make demo`: the whole pipeline on generated data, through a Cloud Storage
# bucket on the local storage emulator when it can run (node, and the
# storage part built), else on local files; the first line says which.
#
#   1. generate an ImageNet-style tree of JPEGs (plus a PNG and a CMYK JPEG
#      that the converter must fix)
#   2. imagenet2tfrec: convert it to sharded tf.Example TFRecords, streamed
#      into gs://tfrec-demo/imagenet/ (or written to a local directory)
#   3. tfrec: verify every CRC and show what a record holds
#   4. start the Bigtable emulator on a free loopback port
#   5. tfrec2bt: stream train_ and validation_ rows into it
#      (--source_glob=gs://tfrec-demo/imagenet/train/train-*)
#   6. read the rows back twice: with bt2tfrec (into the bucket, then
#      byte-compared to the shards) and with the independent `cbt` CLI
#      (keys, family, qualifier, SHA-256)
#   7. decode every read-back example with PIL through the Python bindings
#   8. stop the emulators
#
#   scripts/demo.sh [BUILD_DIR]      (DEMO_DIR=... keeps the files there;
#                                     DEMO_STORAGE=local skips the bucket)
set -euo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=$(cd "$BUILD" && pwd) || { echo "demo.sh: no build directory ${1:-build}" >&2; exit 1; }

# Through gs:// when the storage emulator can run: this script again, under
# tests/storage/with_emulator.sh (which sets STORAGE_EMULATOR_HOST).
if [ "${DEMO_STORAGE:-}" != local ] && [ -z "${STORAGE_EMULATOR_HOST:-}" ]; then
    why=
    if ! grep -qw tfrec-storage "$BUILD/parts" 2>/dev/null; then
        why="the storage part is not built (WITH_STORAGE=0)"
    elif ! command -v node >/dev/null 2>&1; then
        why="node is not installed"
    elif ! scripts/install-npm-deps.sh >/dev/null 2>&1; then
        why="the npm packages of the storage emulator could not be installed"
    fi
    if [ -z "$why" ]; then
        exec tests/storage/with_emulator.sh env DEMO_STORAGE=gcs "$ROOT/scripts/demo.sh" "$BUILD"
    fi
    echo "demo: pipeline on local files ($why)"
elif [ -n "${STORAGE_EMULATOR_HOST:-}" ] && [ "${DEMO_STORAGE:-}" = gcs ]; then
    echo "demo: pipeline through gs:// on the Cloud Storage emulator at $STORAGE_EMULATOR_HOST"
else
    DEMO_STORAGE=local
    echo "demo: pipeline on local files (DEMO_STORAGE=local)"
fi
GCS=0
[ "${DEMO_STORAGE:-}" = gcs ] && GCS=1
BIN=$BUILD/bin
PY=/usr/bin/python3
TRAIN=${DEMO_TRAIN:-120}
VALIDATION=${DEMO_VALIDATION:-40}

# DEMO_DIR: never delete what the demo did not make. A directory is used if
# it is new, empty, or marked by an earlier demo run (MARK); anything else is
# refused, and only a marked directory's contents are cleared.
MARK=.tfrec-demo-dir
if [ -n "${DEMO_DIR:-}" ]; then
    WORK=$DEMO_DIR
    if [ -e "$WORK" ] && [ ! -d "$WORK" ]; then
        echo "demo.sh: DEMO_DIR=$WORK is not a directory; refusing to touch it" >&2
        exit 2
    elif [ -d "$WORK" ] && [ -n "$(ls -A "$WORK")" ] && [ ! -f "$WORK/$MARK" ]; then
        echo "demo.sh: DEMO_DIR=$WORK holds files the demo did not make (no $MARK);" \
            "refusing to delete them: choose a new or empty directory" >&2
        exit 2
    fi
    mkdir -p "$WORK"
    if [ -f "$WORK/$MARK" ]; then
        # an earlier demo's files only: the marker says the demo made them
        find "$WORK" -mindepth 1 -maxdepth 1 ! -name "$MARK" -exec rm -rf {} +
    fi
    echo "made by scripts/demo.sh (make demo); the next demo run clears this directory" >"$WORK/$MARK"
else
    WORK=$(mktemp -d /tmp/tfrec-demo.XXXXXX)
fi
EMU_PID=
cleanup() {
    [ -z "$EMU_PID" ] || scripts/emulator.sh stop "$EMU_PID"
    [ -n "${DEMO_DIR:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT
step() { printf '\n== %s\n' "$*"; }

step "1. sample images: $TRAIN train + $VALIDATION validation JPEGs in $WORK/raw"
$PY tests/fixtures/make_images.py samples "$WORK/raw" --train "$TRAIN" \
    --validation "$VALIDATION" --classes 10 --seed 1
# Inputs the reference script only handles by a hard-coded file list.
first_class=$(ls "$WORK/raw/train" | head -1)
$PY - "$WORK/raw/train/$first_class" <<'EOF'
import sys
from PIL import Image
d = sys.argv[1]
Image.new("RGB", (320, 240), (200, 40, 90)).save(d + "/disguised_png.JPEG", "PNG")
Image.new("CMYK", (300, 200), (10, 200, 30, 5)).save(d + "/cmyk.JPEG", "JPEG", quality=90)
EOF
du -sh "$WORK/raw" | awk '{print "   " $1 " of images"}'

# Where the shards are: the bucket, or the local output directory. The
# checks that need local files (cmp, cbt's manifest) use copies in
# $WORK/shards either way.
if [ "$GCS" = 1 ]; then
    SHARDS=gs://tfrec-demo/imagenet
    step "2. imagenet2tfrec: convert to 4 train + 2 validation shards streamed into $SHARDS"
    "$BIN/imagenet2tfrec" --raw_data_dir="$WORK/raw" --gcs_output_path="$SHARDS" \
        --train_shards=4 --validation_shards=2 --seed=42
    "$BIN/tfrec" count "$SHARDS/*/*-of-*" | sed 's/^/   /'
    echo "   copies for the byte comparisons below, in $WORK/shards:"
    for f in $("$BIN/tfrec" count "$SHARDS/*/*-of-*" | awk '$2 ~ /^gs:/ {print $2}'); do
        rel=${f#"$SHARDS"/}
        mkdir -p "$WORK/shards/$(dirname "$rel")"
        "$BIN/tfrec" convert -q "$f" "$WORK/shards/$rel"
    done
    PYTHONPATH=$ROOT/python TFREC_LIBRARY=$BUILD/libtfrec.so $PY -c '
import sys, tfrec
open(sys.argv[2], "wb").write(tfrec.storage.read_bytes(sys.argv[1]))' \
        "$SHARDS/manifest.json" "$WORK/shards/manifest.json"
else
    SHARDS=$WORK/shards
    step "2. imagenet2tfrec: convert to 4 train + 2 validation shards"
    "$BIN/imagenet2tfrec" --raw_data_dir="$WORK/raw" --local_scratch_dir="$SHARDS" \
        --train_shards=4 --validation_shards=2 --seed=42
fi
ls -lR "$WORK/shards" | sed 's/^/   /'

step "3. tfrec: verify every record, count, and look at one example"
"$BIN/tfrec" verify "$SHARDS/*/*-of-*"
"$BIN/tfrec" count "$SHARDS/*/*-of-*"
"$BIN/tfrec" head -n 1 "$SHARDS/train/train-00000-of-00004" | cut -c1-400
echo
"$BIN/tfrec" stats "$SHARDS/train/train-*" | head -20

step "4. Bigtable emulator on loopback"
read -r ADDR EMU_PID < <(scripts/emulator.sh start "$WORK/emulator.log")
export BIGTABLE_EMULATOR_HOST=$ADDR
echo "   listening on $ADDR (pid $EMU_PID)"

load() { # prefix glob
    "$BIN/tfrec2bt" --project=demo --bigtable_instance=demo --bigtable_table=imagenet \
        --source_glob="$2" --row_prefix="$1" --create_table \
        --progress_file="$WORK/$1.progress"
}
step "5. tfrec2bt: stream the shards into table 'imagenet'"
load train_ "$SHARDS/train/train-*"
load validation_ "$SHARDS/validation/validation-*"

step "6a. bt2tfrec: read the rows back and compare with the shards byte for byte"
for prefix in train validation; do
    if [ "$GCS" = 1 ]; then # into the bucket, then a local copy to compare
        "$BIN/bt2tfrec" --project=demo --bigtable_instance=demo --bigtable_table=imagenet \
            --row_prefix="${prefix}_" --output="gs://tfrec-demo/back/$prefix.tfrecord" --quiet
        echo "   ${prefix}_* -> gs://tfrec-demo/back/$prefix.tfrecord"
        "$BIN/tfrec" convert -q "gs://tfrec-demo/back/$prefix.tfrecord" "$WORK/back-$prefix.tfrecord"
    else
        "$BIN/bt2tfrec" --project=demo --bigtable_instance=demo --bigtable_table=imagenet \
            --row_prefix="${prefix}_" --output="$WORK/back-$prefix.tfrecord" --quiet
    fi
    if cat "$WORK/shards/$prefix/$prefix"-* | cmp -s - "$WORK/back-$prefix.tfrecord"; then
        echo "   ${prefix}_*: identical to the $prefix shards, in order"
    else
        echo "   ${prefix}_*: DIFFERENT from the $prefix shards" >&2
        exit 1
    fi
done

step "6b. cbt (independent client): keys, column, values"
for prefix in train validation; do
    # shellcheck disable=SC2086
    $PY tests/integration/bigtable_check.py manifest "$WORK/$prefix.manifest" \
        $(ls "$WORK/shards/$prefix/$prefix"-* | LC_ALL=C sort) >/dev/null
    n=$(wc -l <"$WORK/$prefix.manifest")
    cbt -project demo -instance demo read imagenet prefix="${prefix}_" >"$WORK/cbt-$prefix.txt" 2>"$WORK/cbt.err" \
        || { cat "$WORK/cbt.err" >&2; exit 1; }
    echo -n "   ${prefix}_*: "
    $PY tests/integration/bigtable_check.py verify "$WORK/cbt-$prefix.txt" \
        "$WORK/$prefix.manifest" "${prefix}_" 0 0 "$n"
done

step "7. Python bindings: parse and decode what came back from Bigtable"
PYTHONPATH=$ROOT/python TFREC_LIBRARY=$BUILD/libtfrec.so \
    $PY scripts/demo_read.py "$WORK/back-train.tfrecord" "$WORK/back-validation.tfrecord"

if [ "$GCS" = 1 ]; then
    step "8. done: images -> TFRecord shards in gs://tfrec-demo -> Bigtable -> gs:// -> verified end to end"
else
    step "8. done: images -> TFRecord -> Bigtable -> TFRecord verified end to end"
fi
