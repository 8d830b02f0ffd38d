#!/usr/bin/env bash
# Code comments name the bench/RESULTS.md section behind a default instead
# of quoting measured speeds: no comment line in lib/, tools/, python/ or
# include/ may hold a measured-speed figure (MB/s, rows/s, "1.4x faster",
# "+20%", "11-17% less CPU", "measured ... 8%", ...). The figures belong in
# bench/RESULTS.md ("Defaults in the code: the measurements behind them").
# Also checks that the pattern still catches such a comment. Prints
# PASS/FAIL lines for tests/run.sh.
set -u
ROOT=${TFREC_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$ROOT" || exit 2
fail=0

# A number with a speed unit, a speed ratio, or a percentage of speed/CPU.
num='[0-9]+([.,][0-9]+)?([-–][0-9]+([.][0-9]+)?)?'
figure="$num ?([KMGT]i?B|rows|records|images|img|files|calls|requests)/s\\b"
figure+="|$num ?x (faster|slower|the|less|more|as fast|isa-l|zlib|its|our|over)"
figure+="|$num ?% (less|more|faster|slower|better|worse|of the (client |)(cpu|time|speed))"
figure+="|\\(\\+$num ?%\\)|(adds|gains|saves|costs) ~?$num ?%"
figure+="|measured[^.;]*[^a-z0-9_.][0-9]+([.][0-9]+)? ?(%|x\\b|ms\\b|us\\b|s\\b)"
# A limit the code enforces is a setting, not a measurement.
limit="(under|below|above|at least|at most) $num ?[KMGT]i?B/s"

# Comment text only: C comments (lines of /* */ blocks and // lines) and
# Python # comments; string literals (printf formats, messages) are code.
comment_lines() { # files...
    awk '
        FNR == 1 { inblock = 0 }
        {
            line = $0; text = ""
            if (FILENAME ~ /\.pyi?$/) {
                i = index(line, "#")
                if (i > 0) print FILENAME ":" FNR ": " substr(line, i)
                next
            }
            while (line != "") {
                if (inblock) {
                    j = index(line, "*/")
                    if (j == 0) { text = text line; line = "" }
                    else { text = text substr(line, 1, j - 1); line = substr(line, j + 2); inblock = 0 }
                } else {
                    b = index(line, "/*"); s = index(line, "//")
                    if (s > 0 && (b == 0 || s < b)) { text = text substr(line, s); line = "" }
                    else if (b > 0) { line = substr(line, b + 2); inblock = 1 }
                    else line = ""
                }
            }
            if (text != "") print FILENAME ":" FNR ": " text
        }' "$@"
}

files=$(git ls-files 'lib/*.[ch]' 'tools/*.[ch]' 'include/*.h' 'python/*.py' 'python/*.pyi' 2>/dev/null)
[ -n "$files" ] || files=$(find lib tools include python -name '*.[ch]' -o -name '*.py' -o -name '*.pyi')
# shellcheck disable=SC2086
hits=$(comment_lines $files | grep -iE "$figure" | grep -viE "$limit")
if [ -z "$hits" ]; then
    echo "PASS no measured-speed figures in code comments"
else
    echo "FAIL measured-speed figures in code comments (name the bench/RESULTS.md section instead):"
    printf '%s\n' "$hits" | sed 's/^/    /'
    fail=1
fi

# The pattern must still see figures of the kinds it was written for.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/a.c" <<'C'
int a; /* 1 MiB reads measured 10-13% less CPU */
/* Polling helps:
 * 1.4x the rows/s for 1 KB rows */
// best distance (+20%)
const char *fmt = "%.1f MB/s"; /* a format, not a figure */
/* A stalled connection (under 1 KB/s for 60 s) fails: a limit. */
C
cat >"$tmp/b.py" <<'P'
x = 1  # measured 2-4x slower against the emulator
print("3 rows/s")
P
n=$(comment_lines "$tmp/a.c" "$tmp/b.py" | grep -iE "$figure" | grep -viE "$limit" | wc -l)
if [ "$n" -eq 4 ]; then
    echo "PASS the figure pattern catches the sample comments (and not code)"
else
    echo "FAIL the figure pattern matched $n sample comment lines, expected 4"
    comment_lines "$tmp/a.c" "$tmp/b.py" | grep -iE "$figure" | grep -viE "$limit" | sed 's/^/    /'
    fail=1
fi
exit "$fail"
