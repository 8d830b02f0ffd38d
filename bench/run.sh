#!/usr/bin/env bash
# Run every benchmark script in bench/ (each prints its peers and ratios).
# Usage: bench/run.sh BUILD_DIR [name...]
# A script with a "# needs: tfrec-image" (or tfrec-bigtable) line is left out
# when the build has not got that part (make WITH_IMAGE=0 / WITH_BIGTABLE=0).
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
    missing=
    for p in $(sed -n 's/^# needs: //p' "$s"); do
        grep -qw -- "$p" "$TFREC_BUILD/parts" || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        echo "==== bench: $name not run (needs$missing, not built)"
        continue
    fi
    echo "==== bench: $name  ($(date -u +%FT%TZ), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
    bash "$s" || { echo "bench $name failed"; status=1; }
done
exit $status
