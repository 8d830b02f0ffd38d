#!/usr/bin/env bash
# A glob of data files that also matches the FILE.idx indexes beside them
# ("data-*" after `tfrec index`): every tool reads the data only, as the
# Python Dataset does. tfrec index / count / cat and tfrec2bt --source_glob
# (--dry_run: the records it would write) count the data's records; a
# NAME.idx whose NAME is not matched is data; so is a FILE.idx named
# alone; tfrec ls still lists every match.
# Usage: tests/integration/index_globs.sh [BUILD_DIR]   (or TFREC_BUILD=...)
[ -n "${1:-}" ] && export TFREC_BUILD=$1
source "$(dirname "$0")/lib/common.sh"
it_tmpdir index-globs
it_need_bins tfrec

# 3 files of 10 records each (up to 2000 bytes), written by the independent
# Python writer; the manifest goes elsewhere so that D/* is data and indexes
$CHECK gen "$T/d" 3 30 1 0 2000 >/dev/null || { echo "FAIL setup: gen"; exit 1; }
mv "$T/d/manifest.txt" "$T/manifest.txt"
D=$T/d
# total OUTPUT: the count of the 'COUNT<TAB>total' line of tfrec count
total() { awk -F'\t' '$2 == "total" {print $1}' "$1"; }

"$BIN/tfrec" index "$D/data-*" >"$T/ix1" 2>"$T/err"
st=$?
if [ $st -eq 0 ] && [ "$(wc -l <"$T/ix1")" -eq 3 ] && [ "$(ls "$D" | grep -c '\.idx$')" -eq 3 ]; then
    pass "tfrec index 'data-*': three indexes of 10 records"
else fail "tfrec index 'data-*'" "exit $st: $(cat "$T/ix1" "$T/err" | head -c 300)"; fi

# The same pattern now matches the indexes too: they are not indexed again
# (no data-*.idx.idx) nor read as records.
"$BIN/tfrec" index "$D/data-*" >"$T/ix2" 2>"$T/err"
st=$?
if [ $st -eq 0 ] && cmp -s "$T/ix1" "$T/ix2" && ! ls "$D" | grep -q '\.idx\.idx$'; then
    pass "tfrec index 'data-*' beside its indexes: the data files only"
else fail "tfrec index 'data-*' beside its indexes" "exit $st: $(cat "$T/ix2" "$T/err" | head -c 300)"; fi

for pat in "$D/data-*" "$D/*"; do
    "$BIN/tfrec" count "$pat" >"$T/count" 2>"$T/err"
    st=$?
    if [ $st -eq 0 ] && [ "$(total "$T/count")" = 30 ] && [ "$(wc -l <"$T/count")" -eq 4 ]; then
        pass "tfrec count '${pat#"$T"/}': 30 records of 3 files"
    else fail "tfrec count '${pat#"$T"/}'" "exit $st: $(cat "$T/count" "$T/err" | head -c 300)"; fi
    "$BIN/tfrec" count --noindex "$pat" >"$T/count" 2>"$T/err"
    st=$?
    if [ $st -eq 0 ] && [ "$(total "$T/count")" = 30 ]; then
        pass "tfrec count --noindex '${pat#"$T"/}': the data read, 30 records"
    else fail "tfrec count --noindex '${pat#"$T"/}'" "exit $st: $(cat "$T/count" "$T/err" | head -c 300)"; fi
done

# tfrec ls lists what the pattern matches, the indexes too
"$BIN/tfrec" ls "$D/*" >"$T/ls" 2>"$T/err"
st=$?
if [ $st -eq 0 ] && [ "$(grep -c '\.idx$' "$T/ls")" -eq 3 ]; then
    pass "tfrec ls 'd/*': the indexes listed"
else fail "tfrec ls 'd/*'" "exit $st: $(cat "$T/ls" "$T/err" | head -c 300)"; fi

# Names the shell expanded (an unquoted d/*): FILE.idx given with FILE is
# its index, as in a pattern's matches; FILE.idx named alone is read as
# named, and an index is not TFRecord data.
"$BIN/tfrec" count --noindex "$D"/* >"$T/count" 2>"$T/err"
st=$?
if [ $st -eq 0 ] && [ "$(total "$T/count")" = 30 ] && [ "$(wc -l <"$T/count")" -eq 4 ]; then
    pass "tfrec count d/* (expanded by the shell): 30 records of 3 files"
else fail "tfrec count d/* (expanded by the shell)" "exit $st: $(cat "$T/count" "$T/err" | head -c 300)"; fi
"$BIN/tfrec" count --noindex "$D/data-00000-of-00003.idx" >"$T/out" 2>"$T/err"
st=$?
if [ $st -ne 0 ] && grep -qF "data-00000-of-00003.idx" "$T/err"; then
    pass "tfrec count FILE.idx (named alone): read, and refused"
else fail "tfrec count FILE.idx (named alone)" "exit $st: $(cat "$T/out" "$T/err" | head -c 300)"; fi

# NAME.idx whose NAME is not matched is data: a TFRecord file called so
mkdir "$T/e"
cp "$D/data-00000-of-00003" "$T/e/a.idx"
cp "$D/data-00001-of-00003" "$T/e/b"
"$BIN/tfrec" count --noindex "$T/e/*" >"$T/count" 2>"$T/err"
st=$?
if [ $st -eq 0 ] && [ "$(total "$T/count")" = 20 ] && grep -qF "$T/e/a.idx" "$T/count"; then
    pass "tfrec count 'e/*' with a.idx but no a: a.idx is data"
else fail "tfrec count 'e/*' with a.idx but no a" "exit $st: $(cat "$T/count" "$T/err" | head -c 300)"; fi

# tfrec2bt --source_glob: the rows it would write (the emulator is not
# needed for --dry_run; nothing is written)
if [ -x "$BIN/tfrec2bt" ]; then
    for pat in "$D/data-*" "$D/*"; do
        "$BIN/tfrec2bt" --source_glob="$pat" --dry_run >"$T/dry" 2>"$T/err"
        st=$?
        if [ $st -eq 0 ] && grep -q '^dry run: 30 records ' "$T/dry" &&
            grep -q '^last row: train_0*29$' "$T/dry"; then
            pass "tfrec2bt --source_glob='${pat#"$T"/}' --dry_run: 30 records"
        else fail "tfrec2bt --source_glob='${pat#"$T"/}' --dry_run" "exit $st: $(cat "$T/dry" "$T/err" | head -c 300)"; fi
    done
else
    echo "tfrec2bt not built: its --source_glob checks not run here"
fi

it_finish index_globs
