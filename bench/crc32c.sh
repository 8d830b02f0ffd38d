#!/usr/bin/env bash
# CRC32C throughput: libtfrec's paths and AUTO vs ISA-L crc32_iscsi, memcpy
# and Python's crc32c module (Debian python3-crc32c), all in this run:
# cache-resident buffers of 8 B .. 1 MiB, and 8 MiB buffers streamed from a
# region four times the last-level cache (at least 256 MiB, at most 1 GiB;
# TFREC_CRC_REGION_MIB overrides). Median and range over 7 interleaved
# rounds (3 with --quick), a ratio to ISA-L per case, met / not met.
# Prints a Markdown report; BENCH_SAVE=1 also writes bench/results/crc32c.md.
# Usage: bench/crc32c.sh [--quick]    (TFREC_BUILD = build dir, default build)
set -eu
cd "$(dirname "$0")/.."
BUILD=${TFREC_BUILD:-build}
bin="$BUILD/bench/crc32c"
[ -x "$bin" ] || { echo "$bin not built (make benches)" >&2; exit 1; }
quick=${1:-}

# The region for the streamed case. getconf reports what the CPU's cache
# descriptor says, which on AMD EPYC is the whole socket's L3 (all CCDs)
# while a core fills only its own CCD's share: 4x that is ample.
l3=$(getconf LEVEL3_CACHE_SIZE 2>/dev/null || echo 0)
case "$l3" in '' | *[!0-9]*) l3=0 ;; esac
region=$((4 * l3 / 1048576))
[ "$region" -lt 256 ] && region=256
[ "$region" -gt 1024 ] && region=1024
region=${TFREC_CRC_REGION_MIB:-$region}

py=$(mktemp)
trap 'rm -f "$py"' EXIT
# Python's figure per size: best of 15 timings of ~0.03 s each.
/usr/bin/python3 - "$py" <<'PYEOF'
import sys, time, crc32c
out = open(sys.argv[1], "w")
for size in (8, 64, 1024, 64 * 1024, 1024 * 1024):
    data = bytes((i * 131 + 7) & 0xff for i in range(size))
    f = crc32c.crc32c
    n = 1
    while True:
        t = time.perf_counter()
        for _ in range(n):
            f(data)
        t = time.perf_counter() - t
        if t > 0.005:
            break
        n *= 4
    n = max(1, int(n * 0.03 / t))
    best = 0.0
    for _ in range(15):
        t = time.perf_counter()
        for _ in range(n):
            f(data)
        t = time.perf_counter() - t
        best = max(best, size * n / t / 1e9)
    out.write("%d %.4f\n" % (size, best))
PYEOF

report=$(
    echo "# CRC32C throughput"
    echo
    echo "- command: \`TFREC_BUILD=$BUILD bench/crc32c.sh${quick:+ $quick}\` (also run by \`make bench\`), which runs \`$bin${quick:+ $quick} --region $region --python <Python figures>\`"
    echo "- date: $(date -u +%FT%TZ)"
    echo "- machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, single thread; L3 as reported by getconf: $((l3 / 1048576)) MiB; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- peers: ISA-L $(dpkg-query -W -f='${Version}' libisal2 2>/dev/null || echo '?') \`crc32_iscsi\`; Python \`crc32c\` $(dpkg-query -W -f='${Version}' python3-crc32c 2>/dev/null || echo '?') (software; per-call overhead dominates small sizes); \`memcpy\` of the same length (glibc)"
    "$bin" $quick --region "$region" --python "$py"
    echo
    echo "Python's figures come from a separate loop in the same run (\`crc32c.crc32c(data)\` timed with perf_counter), so they include the interpreter's per-call cost."
)
echo "$report"
# Recorded results are kept on purpose; overwrite them only when asked.
if [ "${BENCH_SAVE:-0}" = 1 ]; then
    mkdir -p bench/results
    echo "$report" > bench/results/crc32c.md
fi
