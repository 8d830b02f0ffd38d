#!/usr/bin/env bash
# `make demo` must keep working: run scripts/demo.sh against the build under
# test and check that every step reported success.
# needs: python-bindings (step 7 loads libtfrec.so into /usr/bin/python3)
# needs: tfrec-image tfrec-bigtable
set -u
ROOT=${TFREC_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${TFREC_BUILD:-$ROOT/build}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$ROOT/scripts/demo.sh" "$BUILD" >"$log" 2>&1
st=$?
check() { # name pattern
    if grep -q -- "$2" "$log"; then echo "PASS demo: $1"; else echo "FAIL demo: $1"; fi
}
if [ "$st" -eq 0 ]; then echo "PASS demo: exits 0"; else echo "FAIL demo: exit status $st"; tail -30 "$log"; fi
check "converter fixed the PNG and the CMYK JPEG" "2 fixed"
check "every shard verifies" "6 files: 6 ok, 0 bad"
check "train rows read back byte-identical" "train_\*: identical to the train shards"
check "validation rows read back byte-identical" "validation_\*: identical to the validation shards"
check "cbt sees every train row once with the right cell" "checked 122 rows (122 expected), 0 problems"
check "cbt sees every validation row once with the right cell" "checked 40 rows (40 expected), 0 problems"
check "PIL decodes every example read back" "decoded 162 examples with PIL"
if grep -q "listening on 127.0.0.1:" "$log"; then echo "PASS demo: emulator on loopback"; else echo "FAIL demo: emulator not on loopback"; fi
