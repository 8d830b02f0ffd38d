#!/usr/bin/env bash
# Run every benchmark script in bench/ (each prints its peers and ratios),
# then one table of every ratio against its target.
# Usage: bench/run.sh BUILD_DIR [name...]
# A script with a "# needs: tfrec-image" (or tfrec-bigtable) line is left out
# when the build has not got that part (make WITH_IMAGE=0 / WITH_BIGTABLE=0).
#
# The ratio convention: a benchmark prints, on its standard output, one line
#   RATIO <name> <value> <target> [note...]
# per target it measures, oriented so that it is met when value >= target
# (a "use at most half the CPU" target is printed as peer/ours >= 2). This
# script collects those lines from every benchmark's output and ends with the
# table; a benchmark that failed or printed no ratio is listed as such.
# BENCH_QUICK=1 asks each benchmark for its short form (exported as is).
set -u
BUILD=${1:-build}; shift || true
cd "$(dirname "$0")/.."
export TFREC_BUILD=$(cd "$BUILD" && pwd)
export TFREC_ROOT=$(pwd)
export BENCH_QUICK=${BENCH_QUICK:-0}
out=$(mktemp -d /tmp/tfrec-bench-run.XXXXXX)
trap 'rm -rf "$out"' EXIT
status=0
ran=()
t_start=$(date +%s)
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
        echo "$name not-run" >>"$out/status"
        continue
    fi
    echo "==== bench: $name  ($(date -u +%FT%TZ), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1 /proc/loadavg))"
    t0=$(date +%s)
    quick=
    [ "$BENCH_QUICK" != 0 ] && grep -q -- '--quick' "$s" && quick=--quick
    if bash "$s" $quick 2>&1 | tee "$out/$name.log"; [ "${PIPESTATUS[0]}" = 0 ]; then
        echo "$name ok $(($(date +%s) - t0))" >>"$out/status"
    else
        echo "bench $name failed"
        echo "$name failed $(($(date +%s) - t0))" >>"$out/status"
        status=1
    fi
    grep -h '^RATIO ' "$out/$name.log" | sed "s/^RATIO /$name /" >>"$out/ratios"
done

echo
echo "==== ratios against their targets ($(date -u +%FT%TZ), $(($(date +%s) - t_start)) s, load $(cut -d' ' -f1-3 /proc/loadavg)$([ "$BENCH_QUICK" != 0 ] && echo ', BENCH_QUICK'))"
echo
echo "| bench | ratio | value | target | verdict |"
echo "| --- | --- | ---: | ---: | --- |"
met=0 missed=0
if [ -s "$out/ratios" ]; then
    while read -r bench name value target note; do
        if awk -v v="$value" -v t="$target" 'BEGIN { exit !(v + 0 >= t + 0) }'; then
            verdict=met; met=$((met + 1))
        else
            verdict="**not met**"; missed=$((missed + 1))
        fi
        printf '| %s | %s%s | %s | >= %s | %s |\n' "$bench" "$name" "${note:+ ($note)}" "$value" "$target" "$verdict"
    done <"$out/ratios"
fi
if [ -s "$out/status" ]; then
    while read -r name st _; do
        if [ "$st" != ok ]; then
            printf '| %s | (%s) | | | **not measured** |\n' "$name" "$st"
        elif ! grep -q "^$name " "$out/ratios" 2>/dev/null; then
            printf '| %s | (prints no RATIO line) | | | |\n' "$name"
        fi
    done <"$out/status"
fi
echo
echo "$met met, $missed not met"
exit $status
