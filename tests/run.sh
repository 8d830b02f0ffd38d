#!/usr/bin/env bash
# Run every test: unit binaries, integration scripts, then the Python suite.
# Usage: tests/run.sh [--unit-only | --no-python] BUILD_DIR
#   --no-python  unit and integration tests only (sanitizer builds: the
#                Python suite would load an instrumented libtfrec.so)
# Scripts and Python test files that use an optional part of the library
# say so with a "# needs: tfrec-image tfrec-bigtable" line; they are left
# out (and listed) when the build has not got that part ($BUILD/parts,
# written by make: `make WITH_IMAGE=0 WITH_BIGTABLE=0` builds the core only).
# Ends with one summary line: "TOTAL: N passed, N failed".
set -u
unit_only=0
no_python=0
case "${1:-}" in
--unit-only) unit_only=1; shift ;;
--no-python) no_python=1; shift ;;
esac
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

# Count "PASS name" / "FAIL name" lines of a suite's output; a suite that
# exits non-zero without reporting a failure counts as one failure itself.
tally() { # name status logfile
    local p f
    p=$(grep -c '^PASS ' "$3")
    f=$(grep -c '^FAIL ' "$3")
    if [ "$2" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$f" -ne 0 ]; then failures+=("$1"); fi
    printf '%-40s %4d passed, %d failed\n' "$1" "$p" "$f"
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "== unit tests ($BUILD)"
for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    "$t" >"$log" 2>&1
    st=$?
    tally "$(basename "$t")" "$st" "$log"
    [ "$st" -eq 0 ] || sed -n '/^FAIL\|^    /p' "$log" | head -40
done

if [ "$unit_only" -eq 0 ]; then
    echo "== integration tests"
    for s in tests/integration/*.sh; do
        [ -f "$s" ] || continue
        if [ "$no_python" -eq 1 ] && grep -q '^# needs: python-bindings' "$s"; then
            printf '%-40s not run here (loads libtfrec.so into Python)\n' "$(basename "$s")"
            continue
        fi
        m=$(missing_parts "$s")
        if [ -n "$m" ]; then
            printf '%-40s not run here (needs %s, not built)\n' "$(basename "$s")" "${m% }"
            continue
        fi
        timeout 1200 bash "$s" >"$log" 2>&1
        st=$?
        tally "$(basename "$s")" "$st" "$log"
        [ "$st" -eq 0 ] || tail -40 "$log"
    done

    if [ "$no_python" -eq 0 ] && ls tests/python/test_*.py >/dev/null 2>&1; then
        echo "== python tests"
        ignore=()
        for f in tests/python/test_*.py; do
            m=$(missing_parts "$f")
            [ -z "$m" ] && continue
            printf '%-40s not run here (needs %s, not built)\n' "$(basename "$f")" "${m% }"
            ignore+=("--ignore=$f")
        done
        timeout 1800 /usr/bin/python3 -m pytest -q -p no:cacheprovider "${ignore[@]}" tests/python >"$log" 2>&1
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
        printf '%-40s %4d passed, %d failed\n' "pytest tests/python" "$p" "$f"
    fi
fi

[ ${#failures[@]} -eq 0 ] || echo "failing suites: ${failures[*]}"
echo "TOTAL: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
