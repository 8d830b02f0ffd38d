#!/usr/bin/env bash
# Decoded image batches into a torch DataLoader loop: tfrec.ImagePipeline
# (JPEG decode on the dataset's C threads) against torchvision's ImageFolder
# + PIL transforms and against tfrec.Dataset bytes + PIL decode in Python
# (see bench/image_pipeline_bench.py).
# needs: tfrec-image
# Usage: bench/image_pipeline.sh [--quick] [--images N] [--rounds R]   (TFREC_BUILD selects the build)
set -eu
cd "$(dirname "$0")/.."
BUILD=${TFREC_BUILD:-build}
exec /usr/bin/python3 bench/image_pipeline_bench.py --build "$BUILD" "$@"
