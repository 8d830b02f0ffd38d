#!/usr/bin/env bash
# Shuffle quality of Bigtable training reads against the official
# emulator: tfrec.bigtable.Dataset with shuffle_ranges + a shuffle buffer
# against the same buffer over a sequential scan (correlation between key
# and output position, share of the first 1% of outputs from the first 10%
# of keys, rows/s); RATIO lines (see bench/run.sh and
# bench/bigtable_shuffle_bench.py). BENCH_QUICK=1: a quarter of the rows.
# needs: tfrec-bigtable
set -u
cd "$(dirname "$0")/.."
export TFREC_ROOT=$(pwd)
export TFREC_BUILD=${TFREC_BUILD:-$TFREC_ROOT/build}
WORK=$(mktemp -d /tmp/tfrec-bt-shuffle-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); emulator and client share them"
/usr/bin/python3 bench/bigtable_shuffle_bench.py "$WORK"
