#!/usr/bin/env bash
# `make demo` must keep working: run scripts/demo.sh against the build under
# test and check that every step reported success.
# needs: python-bindings (step 7 loads libtfrec.so into /usr/bin/python3)
# needs: tfrec-image tfrec-bigtable
set -u
ROOT=${TFREC_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${TFREC_BUILD:-$ROOT/build}
log=$(mktemp)
T=$(mktemp -d)
trap 'rm -f "$log"; rm -rf "$T"' EXIT

# DEMO_DIR never deletes what the demo did not make: a non-empty directory
# without the demo's marker is refused before anything runs, and left as is.
mkdir -p "$T/mine/sub" && echo keep >"$T/mine/notes.txt" && echo keep >"$T/mine/sub/x"
DEMO_DIR="$T/mine" "$ROOT/scripts/demo.sh" "$BUILD" >"$T/refused.log" 2>&1
st=$?
if [ "$st" -eq 2 ] && grep -q "refusing to delete them" "$T/refused.log"; then
    echo "PASS demo: DEMO_DIR holding other files is refused (exit 2)"
else
    echo "FAIL demo: DEMO_DIR holding other files: exit $st, $(head -c 300 "$T/refused.log")"
fi
if [ "$(cat "$T/mine/notes.txt" "$T/mine/sub/x" 2>/dev/null)" = "$(printf 'keep\nkeep')" ] &&
    [ "$(ls -A "$T/mine")" = "$(printf 'notes.txt\nsub')" ]; then
    echo "PASS demo: the refused DEMO_DIR is untouched"
else
    echo "FAIL demo: the refused DEMO_DIR was changed: $(ls -AR "$T/mine")"
fi
echo x >"$T/afile"
DEMO_DIR="$T/afile" "$ROOT/scripts/demo.sh" "$BUILD" >"$T/refused.log" 2>&1
st=$?
if [ "$st" -eq 2 ] && [ "$(cat "$T/afile")" = x ]; then
    echo "PASS demo: DEMO_DIR naming a file is refused and the file kept"
else
    echo "FAIL demo: DEMO_DIR naming a file: exit $st"
fi

# The full run, in a new DEMO_DIR: it is marked as the demo's and kept.
DEMO_DIR="$T/demo" "$ROOT/scripts/demo.sh" "$BUILD" >"$log" 2>&1
st=$?
check() { # name pattern
    if grep -q -- "$2" "$log"; then echo "PASS demo: $1"; else echo "FAIL demo: $1"; fi
}
if [ "$st" -eq 0 ]; then echo "PASS demo: exits 0"; else echo "FAIL demo: exit status $st"; tail -30 "$log"; fi
if [ -f "$T/demo/.tfrec-demo-dir" ] && [ -f "$T/demo/shards/train/train-00000-of-00004" ] &&
    [ -f "$T/demo/shards/manifest.json" ]; then
    echo "PASS demo: DEMO_DIR kept, marked, shards in the reference's layout"
else
    echo "FAIL demo: DEMO_DIR contents: $(ls -AR "$T/demo" | head -20)"
fi
# With node and the storage part the demo runs through a bucket on the
# storage emulator (scripts/demo.sh says which way it ran).
if grep -qw tfrec-storage "$BUILD/parts" && command -v node >/dev/null; then
    check "pipeline through gs:// on the storage emulator" "pipeline through gs:// on the Cloud Storage emulator"
    check "shards streamed into the bucket" "gs://tfrec-demo/imagenet/train/train-00003-of-00004"
    check "bt2tfrec wrote into the bucket" "train_\* -> gs://tfrec-demo/back/train.tfrecord"
else
    check "pipeline on local files, saying why" "demo: pipeline on local files ("
fi
check "converter fixed the PNG and the CMYK JPEG" "2 fixed"
check "every shard verifies" "6 files: 6 ok, 0 bad"
check "train rows read back byte-identical" "train_\*: identical to the train shards"
check "validation rows read back byte-identical" "validation_\*: identical to the validation shards"
check "cbt sees every train row once with the right cell" "checked 122 rows (122 expected), 0 problems"
check "cbt sees every validation row once with the right cell" "checked 40 rows (40 expected), 0 problems"
check "PIL decodes every example read back" "decoded 162 examples with PIL"
if grep -q "listening on 127.0.0.1:" "$log"; then echo "PASS demo: emulator on loopback"; else echo "FAIL demo: emulator not on loopback"; fi
