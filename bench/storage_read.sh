#!/usr/bin/env bash
# gs:// reading against its peers on the storage test server, one run:
# `tfrec verify gs://`, tfrec.storage.read_bytes and a tfrec.Dataset epoch
# of a 64 MiB TFRecord object against the official Node.js client's
# download of it (tests/storage/node_peer.js, target >= 1.0x); and
# tfrec.Dataset epochs over 16 shards, in order and shuffled, against curl
# fetching the same objects (target >= 0.8x). See bench/storage_read_bench.py.
# BENCH_QUICK=1 (or --quick): 2 rounds instead of 5.
# needs: tfrec-storage
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
export TFREC_ROOT=$ROOT
export TFREC_BUILD=${TFREC_BUILD:-$ROOT/build}
[ "${1:-}" = --quick ] && export BENCH_QUICK=1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tfrec-gcs-read.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); server and clients share them"
tests/storage/with_emulator.sh /usr/bin/python3 bench/storage_read_bench.py "$WORK"
