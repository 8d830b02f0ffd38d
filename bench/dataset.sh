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

# Python: a shuffled tfrec.Dataset epoch (defaults) against an in-order
# one over the same file (FILE.idx written above), best of 3 interleaved.
TFREC_LIBRARY=${TFREC_LIBRARY:-$BUILD/libtfrec.so} PYTHONPATH=python${PYTHONPATH:+:$PYTHONPATH} \
    /usr/bin/python3 - "$f" <<'PY'
import sys, time
import tfrec
path = sys.argv[1]
def epoch(shuffle):
    ds = tfrec.Dataset([path], shuffle=shuffle, seed=1)
    t0 = time.perf_counter()
    n = sum(1 for _ in ds)
    t = time.perf_counter() - t0
    ds.close()
    return n, t
best = {False: 1e30, True: 1e30}
for _ in range(3):
    for s in (False, True):
        n, t = epoch(s)
        best[s] = min(best[s], t)
seq, shuf = n / best[False], n / best[True]
print(f"  Python tfrec.Dataset, 1 KiB: in order {seq:10.0f} records/s, shuffled {shuf:10.0f} records/s")
print(f"    => shuffled/in order {shuf / seq:.2f}x  (target >= 0.50x)")
print(f"RATIO dataset_shuffled_1k_vs_sequential_python {shuf / seq:.2f} 0.5")
PY
