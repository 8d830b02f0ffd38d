#!/usr/bin/env bash
# Run every benchmark script in bench/ (each prints its peers and ratios).
# Usage: bench/run.sh BUILD_DIR [name...]
set -u
BUILD=${1:-build}; shift || true
cd "$(dirname "$0")/.."
export TFREC_BUILD=$(cd "$BUILD" && pwd)
export TFREC_ROOT=$(pwd)
status=0
for s in bench/*.sh; do
    name=$(basename "$s" .sh)
    [ "$name" = run ] && continue
    if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then continue; fi
    echo "==== bench: $name  ($(date -u +%FT%TZ), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
    bash "$s" || { echo "bench $name failed"; status=1; }
done
exit $status
