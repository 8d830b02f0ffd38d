#!/usr/bin/env bash
# The C sources follow .clang-format: every tracked C/C++ file under lib/,
# include/, tools/, tests/ and bench/ is unchanged by clang-format.
# Prints PASS/FAIL lines for tests/run.sh.
set -u
ROOT=${TFREC_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$ROOT" || exit 1
if ! command -v clang-format >/dev/null; then
    echo "FAIL clang-format: not installed (scripts/install-deps.sh installs it)"
    exit 1
fi
files=$(git ls-files 'lib/*.[ch]' 'include/*.h' 'tools/*.[ch]' 'tests/*.[ch]' 'tests/*.cpp' 'bench/*.c')
[ -n "$files" ] || { echo "FAIL clang-format: no sources found"; exit 1; }
bad=
for f in $files; do
    clang-format "$f" | cmp -s - "$f" || bad="$bad $f"
done
if [ -z "$bad" ]; then
    echo "PASS every C source is formatted as .clang-format says ($(echo "$files" | wc -w) files)"
else
    echo "FAIL not formatted (run clang-format -i):$bad"
    exit 1
fi
