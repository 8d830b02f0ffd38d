#!/usr/bin/env bash
# imagenet2tfrec straight from ImageNet-shaped tarballs against `tar -xf`
# alone and against `tar -xf` followed by the tree conversion
# (see bench/imagenet_tar_bench.py).
# needs: tfrec-image
# Usage: bench/imagenet_tar.sh [--images N] [--rounds R] [--quick]   (TFREC_BUILD selects the build)
set -eu
cd "$(dirname "$0")/.."
BUILD=${TFREC_BUILD:-build}
exec /usr/bin/python3 bench/imagenet_tar_bench.py --build "$BUILD" "$@"
