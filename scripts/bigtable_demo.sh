#!/usr/bin/env bash
# The Bigtable leg of the demo: start the emulator, load TFRecord shards with
# tfrec2bt, read them back with bt2tfrec and check the result is the same
# records in the same order, then stop the emulator.
#   scripts/bigtable_demo.sh BUILD_DIR 'SHARD_GLOB' [ROW_PREFIX]
# Shards must be uncompressed for the byte comparison (bt2tfrec writes
# uncompressed TFRecords).
set -eu
BUILD=${1:?usage: bigtable_demo.sh BUILD_DIR SHARD_GLOB [ROW_PREFIX]}
GLOB=${2:?usage: bigtable_demo.sh BUILD_DIR SHARD_GLOB [ROW_PREFIX]}
PREFIX=${3:-train_}
cd "$(dirname "$0")/.."
TMP=$(mktemp -d /tmp/tfrec-bt-demo.XXXXXX)
read -r ADDR PID < <(scripts/emulator.sh start "$TMP/emulator.log")
trap 'scripts/emulator.sh stop "$PID"; rm -rf "$TMP"' EXIT
export BIGTABLE_EMULATOR_HOST=$ADDR
echo "== Bigtable emulator at $ADDR (pid $PID)"

echo "== tfrec2bt: load $GLOB"
"$BUILD/bin/tfrec2bt" --project=demo --bigtable_instance=demo --bigtable_table=imagenet \
    --source_glob="$GLOB" --row_prefix="$PREFIX" --create_table \
    --progress_file="$TMP/load.progress"

echo "== cbt count (independent client)"
cbt -project demo -instance demo count imagenet 2>/dev/null || echo "(cbt not installed)"

echo "== bt2tfrec: read rows $PREFIX* back"
"$BUILD/bin/bt2tfrec" --project=demo --bigtable_instance=demo --bigtable_table=imagenet \
    --row_prefix="$PREFIX" --output="$TMP/back.tfrecord"

# shellcheck disable=SC2086
files=$(printf '%s\n' $GLOB | LC_ALL=C sort)
# shellcheck disable=SC2086
if cat $files | cmp -s - "$TMP/back.tfrecord"; then
    echo "== verified: the rows read back are the source records, byte for byte, in order"
else
    echo "== MISMATCH between the source shards and the rows read back" >&2
    exit 1
fi
