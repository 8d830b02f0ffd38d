#!/usr/bin/env bash
# Run every test: unit binaries, integration scripts, then the Python suite.
# Usage: tests/run.sh [--unit-only | --no-python | --python-side |
#                     --integration-only | --fast]
#                     [--jobs=N] BUILD_DIR
#   --no-python  unit and integration tests only (sanitizer builds: the
#                Python suite would load an instrumented libtfrec.so)
#   --python-side  what --no-python leaves out: the integration scripts
#                that load libtfrec through Python, then the Python suite
#                (CI runs the rest under the sanitizers); with --with-unit
#                the unit test programs too, in the same pool as the scripts
#   --fast       unit tests, then only the integration scripts and Python
#                test files listed in tests/fast.list (`make check`)
#   --only "test_a test_b"  with --unit-only: just these unit test programs
#                (`make tsan-test`)
#   --integration-only  the integration scripts only
#   --jobs=N     up to N unit test programs and integration scripts at a
#                time, from one pool (default 1), then N pytest workers
#                (python3-pytest-xdist) over whole files. Each
#                works in its own temporary directory (those that rely on
#                tfrec2bt's default progress file in the working directory
#                cd there) on free loopback ports; scripts that run
#                `make -C` (an install from the shared build) still run one
#                at a time.
# Scripts and Python test files that use an optional part of the library
# say so with a "# needs: tfrec-image tfrec-bigtable" line; they are left
# out (and listed) when the build has not got that part ($BUILD/parts,
# written by make: `make WITH_IMAGE=0 WITH_BIGTABLE=0` builds the core only).
# Ends with one summary line: "TOTAL: N passed, N failed".
set -u
unit_only=0
no_python=0
python_side=0
integration_only=0
fast=0
with_unit=0
only=
jobs=1
while :; do
    case "${1:-}" in
    --unit-only) unit_only=1; shift ;;
    --no-python) no_python=1; shift ;;
    --python-side) python_side=1; shift ;;
    --with-unit) with_unit=1; shift ;;
    --integration-only) integration_only=1; no_python=1; shift ;;
    --fast) fast=1; shift ;;
    --only) only=" $2 "; shift 2 ;;
    --jobs=*) jobs=${1#--jobs=}; shift ;;
    *) break ;;
    esac
done
case "$jobs" in ''|*[!0-9]*|0) echo "--jobs takes a positive count, not '$jobs'" >&2; exit 2 ;; esac
BUILD=${1:-build}
cd "$(dirname "$0")/.."
export TFREC_BUILD=$(cd "$BUILD" && pwd)
export TFREC_ROOT=$(pwd)
passed=0
failed=0
failures=()
if [ -f "$BUILD/parts" ]; then
    parts=$(cat "$BUILD/parts")
else
    echo "$BUILD/parts missing: build with make first" >&2
    exit 2
fi

# The optional parts a test file needs that this build has not got.
missing_parts() { # file
    local p
    for p in $(sed -n 's/^# needs: //p' "$1" | tr ' ' '\n' | grep '^tfrec-'); do
        case " $parts " in *" $p "*) ;; *) printf '%s ' "$p" ;; esac
    done
}

# The fast selection (tests/fast.list): integration scripts and Python
# test files by path below tests/, one a line, '#' starts a comment.
fast_list=
if [ "$fast" -eq 1 ]; then
    fast_list=$(sed 's/#.*//' tests/fast.list | tr -s ' \t' '\n' | grep . | sort -u)
fi
in_fast_list() { printf '%s\n' "$fast_list" | grep -qxF "$1"; }
not_fast=0

# Count "PASS name" / "FAIL name" lines of a suite's output; a suite that
# exits non-zero without reporting a failure counts as one failure itself.
# Each line ends with the suite's wall time ($SECONDS at its start in $t0).
tally() { # name status logfile
    local p f
    p=$(grep -c '^PASS ' "$3")
    f=$(grep -c '^FAIL ' "$3")
    if [ "$2" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$f" -ne 0 ]; then failures+=("$1"); fi
    printf '%-40s %4d passed, %d failed  %4d s\n' "$1" "$p" "$f" "$((SECONDS - t0))"
}

log=$(mktemp)
logs=$(mktemp -d)
trap 'rm -f "$log"; rm -rf "$logs"' EXIT

# The kinds of a script that must not run alongside another of the same
# kind: `make -C` (an install from the shared build).
exclusive_kinds() { # script
    grep -q 'make -C' "$1" && printf 'make '
    return 0
}

# Run the integration scripts (*.sh) or unit test programs, up to $jobs at
# a time; tally each as it ends.
run_scripts() { # script-or-program...
    local pending=("$@") held=" " s k i free pid st
    declare -A pid_of=() start_of=() kinds_of=() script_of=()
    while [ ${#pending[@]} -gt 0 ] || [ ${#pid_of[@]} -gt 0 ]; do
        # Start what may start: a free slot, none of its kinds held.
        for i in "${!pending[@]}"; do
            [ ${#pid_of[@]} -lt "$jobs" ] || break
            s=${pending[$i]}
            case "$s" in *.sh) kinds_of[$s]=$(exclusive_kinds "$s") ;; *) kinds_of[$s]= ;; esac
            free=1
            for k in ${kinds_of[$s]}; do case "$held" in *" $k "*) free=0 ;; esac; done
            [ "$free" -eq 1 ] || continue
            for k in ${kinds_of[$s]}; do held="$held$k "; done
            start_of[$s]=$SECONDS
            case "$s" in
            *.sh) timeout 1200 bash "$s" >"$logs/$(basename "$s").log" 2>&1 & ;;
            *) timeout 1200 "$s" >"$logs/$(basename "$s").log" 2>&1 & ;;
            esac
            pid_of[$s]=$!
            script_of[$!]=$s
            unset "pending[$i]"
        done
        pending=("${pending[@]}")
        st=0
        wait -n -p pid "${pid_of[@]}" || st=$?
        s=${script_of[$pid]}
        unset "pid_of[$s]"
        for k in ${kinds_of[$s]}; do held=${held/ $k / }; done
        t0=${start_of[$s]}
        tally "$(basename "$s")" "$st" "$logs/$(basename "$s").log"
        [ "$st" -eq 0 ] || case "$s" in
        *.sh) tail -40 "$logs/$(basename "$s").log" ;;
        *) sed -n '/^FAIL\|^    /p' "$logs/$(basename "$s").log" | head -40 ;;
        esac
    done
}

# The scripts and unit test programs named in tests/long.list first, in
# its order (the longest first, so that --jobs lanes end together), then
# the rest as given. A program BUILD/tests/test_x is unit/test_x there.
long_name() { case "$1" in *.sh) echo "${1#tests/}" ;; *) echo "unit/$(basename "$1")" ;; esac; }
longest_first() { # script-or-program...
    local s l long
    long=$(sed 's/#.*//' tests/long.list | tr -s ' \t' '\n' | grep .)
    for l in $long; do
        for s in "$@"; do [ "$(long_name "$s")" != "$l" ] || echo "$s"; done
    done
    for s in "$@"; do
        printf '%s\n' "$long" | grep -qxF "$(long_name "$s")" || echo "$s"
    done
}

# The unit test programs (each works in its own mkdtemp directory, its
# servers on free loopback ports); they share one pool with the
# integration scripts, so that no lane waits for the other kind to end.
units=()
if [ "$integration_only" -eq 0 ] && { [ "$python_side" -eq 0 ] || [ "$with_unit" -eq 1 ]; }; then
    for t in "$BUILD"/tests/test_*; do
        [ -x "$t" ] || continue
        if [ -n "$only" ]; then case "$only" in *" $(basename "$t") "*) ;; *) continue ;; esac; fi
        units+=("$t")
    done
fi
[ "$python_side" -eq 0 ] && [ "$integration_only" -eq 0 ] || unit_only=0

scripts=()
if [ "$unit_only" -eq 0 ]; then
    for s in tests/integration/*.sh; do
        [ -f "$s" ] || continue
        if [ "$fast" -eq 1 ] && ! in_fast_list "integration/$(basename "$s")"; then
            not_fast=$((not_fast + 1))
            continue
        fi
        if [ "$no_python" -eq 1 ] && grep -q '^# needs: python-bindings' "$s"; then
            printf '%-40s not run here (loads libtfrec.so into Python)\n' "$(basename "$s")"
            continue
        fi
        if [ "$python_side" -eq 1 ] && ! grep -q '^# needs: python-bindings' "$s"; then
            continue
        fi
        m=$(missing_parts "$s")
        if [ -n "$m" ]; then
            printf '%-40s not run here (needs %s, not built)\n' "$(basename "$s")" "${m% }"
            continue
        fi
        scripts+=("$s")
    done
fi
echo "== unit tests and integration scripts ($BUILD): ${#units[@]} programs, ${#scripts[@]} scripts, $jobs at a time"
[ $((${#units[@]} + ${#scripts[@]})) -eq 0 ] || run_scripts $(longest_first "${units[@]}" "${scripts[@]}")

if [ "$unit_only" -eq 0 ]; then
    if [ "$no_python" -eq 0 ] && ls tests/python/test_*.py >/dev/null 2>&1; then
        echo "== python tests"
        ignore=()
        selected=()
        for f in tests/python/test_*.py; do
            if [ "$fast" -eq 1 ] && ! in_fast_list "python/$(basename "$f")"; then
                not_fast=$((not_fast + 1))
                continue
            fi
            m=$(missing_parts "$f")
            if [ -n "$m" ]; then
                printf '%-40s not run here (needs %s, not built)\n' "$(basename "$f")" "${m% }"
                ignore+=("--ignore=$f")
            elif [ "$fast" -eq 1 ]; then
                selected+=("$f")
            fi
        done
        [ "$fast" -eq 1 ] || selected=(tests/python)
        t0=$SECONDS
        # --fast with no listed file this build can run: nothing to run.
        [ ${#selected[@]} -gt 0 ] || selected=(--version)
        # --jobs=N above 1: N pytest workers (python3-pytest-xdist), each
        # taking whole files (--dist loadfile), so that a file's
        # module-scoped emulators and servers start once.
        workers=()
        if [ "$jobs" -gt 1 ] && [ "${selected[0]}" != --version ]; then
            if /usr/bin/python3 -c 'import xdist' 2>/dev/null; then
                workers=(-n "$jobs" --dist loadfile)
            else
                echo "python3-pytest-xdist missing (make deps): the Python files run one at a time"
            fi
        fi
        timeout 1800 /usr/bin/python3 -m pytest -q -p no:cacheprovider "${workers[@]}" "${ignore[@]}" "${selected[@]}" >"$log" 2>&1
        st=$?
        summary=$(tail -1 "$log")
        p=$(echo "$summary" | grep -o '[0-9]* passed' | grep -o '[0-9]*' || true)
        f=$(echo "$summary" | grep -o '[0-9]* \(failed\|errors\?\)' | awk '{s += $1} END {print s + 0}')
        s=$(echo "$summary" | grep -o '[0-9]* skipped' | grep -o '[0-9]*' || true)
        p=${p:-0}; f=${f:-0}
        # A skipped Python test is not a pass: count it as a failure.
        f=$((f + ${s:-0}))
        if [ "$st" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
        passed=$((passed + p)); failed=$((failed + f))
        [ "$f" -eq 0 ] || { failures+=("pytest"); tail -60 "$log"; }
        printf '%-40s %4d passed, %d failed  %4d s\n' "pytest tests/python" "$p" "$f" "$((SECONDS - t0))"
    fi
fi
if [ "$not_fast" -gt 0 ]; then
    echo "($not_fast slower integration scripts and Python files not run: make test runs everything)"
fi

[ ${#failures[@]} -eq 0 ] || echo "failing suites: ${failures[*]}"
echo "TOTAL: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
