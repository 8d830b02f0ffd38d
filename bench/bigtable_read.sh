#!/usr/bin/env bash
# Bigtable read benchmark against the official emulator: bt2tfrec with N
# parallel scans and with one stream against Go's official client in one
# stream and in N goroutines over SampleRowKeys ranges (built offline from
# Debian's golang-google-cloud-dev, as bench/bigtable.sh). Rows/s, MB/s,
# client CPU per GB; RATIO lines (see bench/run.sh and
# bench/bigtable_read_bench.py). BENCH_QUICK=1: a quarter of the rows.
# needs: tfrec-bigtable
set -u
. "$(dirname "$0")/lib/bigtable.sh" tfrec-bt-read-bench
/usr/bin/python3 bench/bigtable_read_bench.py "$WORK"
