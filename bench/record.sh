#!/usr/bin/env bash
# TFRecord write/read throughput against cat, zlib and the pure-Python
# reference (see bench/record.c). Usage: bench/record.sh [MiB] [slow-peer MiB]
set -eu
cd "$(dirname "$0")/.."
BUILD=${TFREC_BUILD:-build}
export TFREC_ROOT=${TFREC_ROOT:-$(pwd)}
dir=$(mktemp -d "${TMPDIR:-/tmp}/tfrec-bench-record.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$BUILD/bench/record" "$dir" "${1:-256}" "${2:-32}"
