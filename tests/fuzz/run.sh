#!/usr/bin/env bash
# Run every libFuzzer target built in BUILD/fuzz/ for FUZZ_SECONDS each,
# from the seeds tests/fuzz/make_seeds.py generates (BUILD/fuzz-seeds/) and
# the target's growing corpus (BUILD/fuzz-corpus/, kept between runs).
# Resource bombs are findings too: an input running longer than
# FUZZ_TIMEOUT seconds or a process above FUZZ_RSS_MB (a single allocation
# above it included). Any finding fails the run; the reproducer is named.
# FUZZ_JOBS targets run at a time (default 1); each is one process on one
# core, so on an otherwise idle machine FUZZ_JOBS=$(nproc) gives every
# target the same executions in a fraction of the wall time.
# Usage: tests/fuzz/run.sh BUILD [TARGET...]
set -u
BUILD=${1:?usage: tests/fuzz/run.sh BUILD [TARGET...]}
shift
cd "$(dirname "$0")/../.."
SECONDS_EACH=${FUZZ_SECONDS:-30}
RSS_MB=${FUZZ_RSS_MB:-2048}
TIMEOUT=${FUZZ_TIMEOUT:-10}
JOBS=${FUZZ_JOBS:-1}
seeds="$BUILD/fuzz-seeds"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    for t in "$BUILD"/fuzz/fuzz_*; do [ -x "$t" ] && targets+=("$(basename "$t")"); done
fi
# The image seeds need PIL; make_seeds.py fails without it unless no image
# target is to run.
seed_opts=()
case " ${targets[*]} " in *" fuzz_image "*) ;; *) seed_opts+=(--no-image-seeds) ;; esac
/usr/bin/python3 tests/fuzz/make_seeds.py "$seeds" "${seed_opts[@]}" || exit 2
if [ ${#targets[@]} -eq 0 ]; then
    echo "no fuzz targets in $BUILD/fuzz (make fuzz builds them)" >&2
    exit 2
fi
# One target: its result lines into $BUILD/fuzz-logs/$t.result; exit 1 on a
# finding.
run_target() { # target
    local t=$1 corpus findings log seed_dir st runs repro what
    corpus="$BUILD/fuzz-corpus/$t"
    findings="$BUILD/fuzz-findings/$t"
    log="$BUILD/fuzz-logs/$t.log"
    mkdir -p "$corpus" "$findings" "$(dirname "$log")"
    # Seeds of a target: seeds/<target minus "fuzz_">, where present.
    seed_dir="$seeds/${t#fuzz_}"
    [ -d "$seed_dir" ] || seed_dir=
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
        "$BUILD/fuzz/$t" -max_total_time="$SECONDS_EACH" -rss_limit_mb="$RSS_MB" \
        -timeout="$TIMEOUT" -artifact_prefix="$findings/" -print_final_stats=1 \
        "$corpus" $seed_dir >"$log" 2>&1
    st=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    if [ "$st" -eq 0 ]; then
        printf '%-28s clean: %s executions in %ss\n' "$t" "${runs:-?}" "$SECONDS_EACH"
        return 0
    else
        repro=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
        what=$(grep -m1 -E 'ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|runtime error|invariant broken' "$log")
        printf '%-28s FINDING (exit %d): %s\n' "$t" "$st" "${what:-see $log}"
        printf '%-28s reproducer: %s  (re-run: %s %s; log: %s)\n' "" "${repro:-none written}" \
            "$BUILD/fuzz/$t" "${repro:-<input>}" "$log"
        return 1
    fi
}

# Up to JOBS targets at a time; results printed in target order.
failed=()
declare -A pid_of=()
for t in "${targets[@]}"; do
    mkdir -p "$BUILD/fuzz-logs"
    run_target "$t" >"$BUILD/fuzz-logs/$t.result" 2>&1 &
    pid_of[$t]=$!
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
done
for t in "${targets[@]}"; do
    wait "${pid_of[$t]}" 2>/dev/null
    cat "$BUILD/fuzz-logs/$t.result"
    # The result says how it went (a job reaped by wait -n above may have
    # no status left to wait for).
    grep -q ' clean: ' "$BUILD/fuzz-logs/$t.result" || failed+=("$t")
done
if [ ${#failed[@]} -ne 0 ]; then
    echo "fuzz: findings in ${failed[*]}"
    exit 1
fi
echo "fuzz: ${#targets[@]} targets clean"
