#!/usr/bin/env bash
# Bigtable read benchmark against the official emulator: bt2tfrec with N
# parallel scans and with one stream against Go's official client in one
# stream and in N goroutines over SampleRowKeys ranges (built offline from
# Debian's golang-google-cloud-dev, as bench/bigtable.sh). Rows/s, MB/s,
# client CPU per GB; RATIO lines (see bench/run.sh and
# bench/bigtable_read_bench.py). BENCH_QUICK=1: a quarter of the rows.
# needs: tfrec-bigtable
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
export TFREC_ROOT=$ROOT
export TFREC_BUILD=${TFREC_BUILD:-$ROOT/build}
WORK=$(mktemp -d /tmp/tfrec-bt-read-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

if command -v go >/dev/null && [ -d /usr/share/gocode/src/cloud.google.com/go/bigtable ]; then
    if (cd bench/go/btpeer && GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS= \
            GOCACHE="$WORK/gocache" go build -o "$WORK/btpeer" .) 2>"$WORK/go.log"; then
        export BTPEER=$WORK/btpeer
    else
        echo "Go peer did not build:"; cat "$WORK/go.log"
    fi
else
    echo "Go peer unavailable: install golang-go and golang-google-cloud-dev"
fi
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); emulator and client share them"
/usr/bin/python3 bench/bigtable_read_bench.py "$WORK"
