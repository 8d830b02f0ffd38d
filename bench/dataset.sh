#!/usr/bin/env bash
# Indexed datasets: shuffled random access through the index against
# sequential reading (bench/dataset.c), and `tfrec index` against
# `tfrec verify` on the same file (both read every record and check its
# CRCs; index also writes FILE.idx). Usage: bench/dataset.sh [--quick] [MiB]
set -eu
cd "$(dirname "$0")/.."
BUILD=${TFREC_BUILD:-build}
mib=256
[ "${1:-}" = --quick ] && { mib=64; shift; }
mib=${1:-$mib}
dir=$(mktemp -d "${TMPDIR:-/tmp}/tfrec-bench-dataset.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$BUILD/bench/dataset" "$dir" "$mib"
# The same with pread() for random access (TFREC_MMAP=0; mapping is the default).
TFREC_MMAP=0 "$BUILD/bench/dataset" "$dir" "$mib"

# tfrec index vs tfrec verify: 1 KiB records, best of 3 each, interleaved.
f=$dir/v.tfrecord
/usr/bin/python3 - "$f" "$mib" <<'PY'
import os, struct, sys
sys.path.insert(0, os.path.join(os.environ.get("TFREC_ROOT", "."), "tests", "python"))
import tfrecord_ref as ref
n = int(sys.argv[2]) * 1024 * 1024 // 1040
rec = os.urandom(1024)
with open(sys.argv[1], "wb") as out:
    out.write(ref.frame(rec) * n)
PY
TFREC=$BUILD/bin/tfrec
"$TFREC" verify -q "$f" >/dev/null
best() { awk 'NR == 1 || $1 < m { m = $1 } END { print m }'; }
: >"$dir/ti"; : >"$dir/tv"
for _ in 1 2 3; do
    t0=$(date +%s.%N); "$TFREC" index "$f" >/dev/null; t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }' >>"$dir/ti"
    t0=$(date +%s.%N); "$TFREC" verify -q "$f" >/dev/null; t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }' >>"$dir/tv"
done
ti=$(best <"$dir/ti"); tv=$(best <"$dir/tv")
size=$(stat -c %s "$f")
awk -v ti="$ti" -v tv="$tv" -v s="$size" 'BEGIN {
    printf "  tfrec index  %8.3f s  %8.0f MB/s\n", ti, s / ti / 1e6
    printf "  tfrec verify %8.3f s  %8.0f MB/s\n", tv, s / tv / 1e6
    printf "    => index/verify speed %.2fx  (target >= 0.80x)\n", tv / ti
    printf "RATIO dataset_index_vs_verify %.2f 0.8\n", tv / ti
}'
