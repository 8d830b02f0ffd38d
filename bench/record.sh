#!/usr/bin/env bash
# TFRecord write/read throughput against cat, zlib and the pure-Python
# reference (see bench/record.c). Usage: bench/record.sh [MiB] [slow-peer MiB]
set -eu
cd "$(dirname "$0")/.."
BUILD=${TFREC_BUILD:-build}
export TFREC_ROOT=${TFREC_ROOT:-$(pwd)}
dir=$(mktemp -d "${TMPDIR:-/tmp}/tfrec-bench-record.XXXXXX")
trap 'rm -rf "$dir"' EXIT
# Each "=> WHAT X.XXx (target >= T.Tx: ...)" line with a real target also
# becomes a RATIO line for bench/run.sh's table.
"$BUILD/bench/record" "$dir" "${1:-256}" "${2:-32}" | awk '
    { print }
    /^  [0-9]+KiB / { size = $1 }
    /^ *=> / && match($0, /target >= [0-9.]+x/) {
        t = substr($0, RSTART + 10, RLENGTH - 11)
        if (t + 0 > 0) {
            what = $0; sub(/^ *=> /, "", what); sub(/ +[0-9.]+x .*/, "", what)
            match($0, /[0-9.]+x  \(target/); v = substr($0, RSTART, RLENGTH - 10)
            gsub(/[^A-Za-z0-9]+/, "_", what)
            printf "RATIO record_%s_%s %s %s\n", size, what, v, t
        }
    }'
exit "${PIPESTATUS[0]}"
