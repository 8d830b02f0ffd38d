#!/usr/bin/env bash
# Python bindings throughput against pure Python and C (see bench/python_bench.py).
# Usage: bench/python.sh [--quick] [--markdown]   (TFREC_BUILD selects the build, default build/)
set -eu
cd "$(dirname "$0")/.."
BUILD=${TFREC_BUILD:-build}
exec /usr/bin/python3 bench/python_bench.py --build "$BUILD" "$@"
