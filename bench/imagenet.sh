#!/usr/bin/env bash
# imagenet2tfrec against a Python re-implementation of imagenet_to_gcs.py's
# per-image work and against `cat` of the same files (see bench/imagenet_bench.py).
# needs: tfrec-image
# Usage: bench/imagenet.sh [--images N] [--markdown]   (TFREC_BUILD selects the build, default build/)
set -eu
cd "$(dirname "$0")/.."
BUILD=${TFREC_BUILD:-build}
exec /usr/bin/python3 bench/imagenet_bench.py --build "$BUILD" "$@"
