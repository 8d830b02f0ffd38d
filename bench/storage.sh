#!/usr/bin/env bash
# Cloud Storage benchmark: libtfrec-storage (build/bench/storage) against
# the official Node.js client @google-cloud/storage at its best settings,
# both on the same storage test server (tests/storage/gcs_emulator.js) in
# one run: a 1 GiB object and 256 shards of 4 MiB, written and read, plus
# TFRecord reading from gs:// against the same files read locally.
# See bench/storage_bench.py. BENCH_QUICK=1 (or --quick): 256 MiB, 64 shards.
# needs: tfrec-storage
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
export TFREC_ROOT=$ROOT
export TFREC_BUILD=${TFREC_BUILD:-$ROOT/build}
[ "${1:-}" = --quick ] && export BENCH_QUICK=1
if [ ! -x "$TFREC_BUILD/bench/storage" ]; then
    echo "bench/storage: $TFREC_BUILD/bench/storage is not built (make benches)"
    exit 1
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tfrec-gcs-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); server and clients share them"
echo "node $(node --version), @google-cloud/storage $(sed -n 's/.*"version": "\(.*\)".*/\1/p' \
    "$("$ROOT/scripts/install-npm-deps.sh")/node_modules/@google-cloud/storage/package.json" | head -1)"
tests/storage/with_emulator.sh /usr/bin/python3 bench/storage_bench.py "$WORK/run"
