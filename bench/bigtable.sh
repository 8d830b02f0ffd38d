#!/usr/bin/env bash
# Bigtable loading benchmark against the official emulator: tfrec2bt with its
# defaults, tfrec2bt configured like the reference script, and Go's official
# client (built offline from Debian's golang-google-cloud-dev) at its best
# settings (swept here) and in the reference pattern. Interleaved rounds,
# median and range; client and emulator CPU; RATIO lines (see bench/run.sh).
# BENCH_QUICK=1: a quarter of the rows and a small sweep.
# needs: tfrec-bigtable
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
export TFREC_ROOT=$ROOT
export TFREC_BUILD=${TFREC_BUILD:-$ROOT/build}
WORK=$(mktemp -d /tmp/tfrec-bt-bench.XXXXXX)
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
/usr/bin/python3 bench/bigtable_bench.py "$WORK"
