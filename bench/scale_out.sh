#!/usr/bin/env bash
# What splitting an imagenet2tfrec conversion into 64 and 256 tasks costs
# (start-up, input listing and planning per task, the manifest merge) next
# to one process converting everything, and a check that the union of the
# tasks' shards is the one-process output (see bench/scale_out_bench.py).
# needs: tfrec-image
# Usage: bench/scale_out.sh [--quick] [--images N] [--tasks 64,256] [--parallel P]
#        (TFREC_BUILD selects the build, default build/)
set -eu
cd "$(dirname "$0")/.."
BUILD=${TFREC_BUILD:-build}
exec /usr/bin/python3 bench/scale_out_bench.py --build "$BUILD" "$@"
