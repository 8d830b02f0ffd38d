#!/usr/bin/env bash
# Bigtable loading benchmark against the official emulator: tfrec2bt with its
# defaults, tfrec2bt configured like the reference script, and Go's official
# client (built offline from Debian's golang-google-cloud-dev) at its best
# settings (swept here) and in the reference pattern. Interleaved rounds,
# median and range; client and emulator CPU; RATIO lines (see bench/run.sh).
# BENCH_QUICK=1: a quarter of the rows and a small sweep.
# needs: tfrec-bigtable
set -u
. "$(dirname "$0")/lib/bigtable.sh" tfrec-bt-bench
/usr/bin/python3 bench/bigtable_bench.py "$WORK"
