#!/usr/bin/env bash
# tfrec2bt against server-side faults and bad input, on the official
# Bigtable emulator (cbtemulator), checked with `cbt` and
# tests/integration/bigtable_check.py: rows re-sent after the server applied
# them end up as one cell (the test build's injected UNAVAILABLE), the
# production binary ignores the injection variable, requests over the
# channel limit and over the Debian-source emulator's 4 MiB limit are split,
# corrupt and truncated source files are named. Split from bigtable.sh so
# that the runner's parallel lanes balance.
# needs: tfrec-bigtable
source "$(dirname "$0")/lib/common.sh"
it_bigtable_tools_setup bt-faults
TEST_BIN=$BUILD/test-bin # tools built with TFREC_TESTING (fault injection)
[ -x "$TEST_BIN/tfrec2bt" ] || { echo "FAIL setup: $TEST_BIN/tfrec2bt not built (make tests)"; exit 1; }

# ------------------------------------------------------------ re-sent rows
# Every 7th row's first acknowledgement is reported as UNAVAILABLE by the
# writer's status hook (test build of tfrec2bt) after the emulator applied
# it: the row is re-sent and must end up as ONE cell (same explicit
# timestamp replaces), not two.
TFREC2BT_INJECT_RETRY=7 "$TEST_BIN/tfrec2bt" --project=p --bigtable_instance=i --source_glob="$T/small/data-*" \
    --bigtable_table=retried --num_records=2000 --create_table >"$T/out" 2>"$T/err"
st=$?
retried=$(sed -n 's/.*requests, \([0-9]*\) retried entries.*/\1/p' "$T/err")
bt read retried >"$T/retried.dump"
if [ $st -eq 0 ] && [ "$retried" = 286 ] &&
   $CHECK verify "$T/retried.dump" "$T/small/manifest.txt" train_ 2000 0 2000 >"$T/v"; then
    pass retried_rows_replaced_not_duplicated
else fail retried_rows_replaced_not_duplicated "exit $st retried=$retried: $(cat "$T/err" "$T/v" | head -c 500)"; fi

# The production binary carries no fault injection: the variable is ignored.
TFREC2BT_INJECT_RETRY=7 "$BIN/tfrec2bt" --project=p --bigtable_instance=i --source_glob="$T/small/data-*" \
    --bigtable_table=notinjected --num_records=2000 --create_table >"$T/out" 2>"$T/err"
st=$?
retried=$(sed -n 's/.*requests, \([0-9]*\) retried entries.*/\1/p' "$T/err")
if [ $st -eq 0 ] && [ "$retried" = 0 ]; then pass production_build_has_no_fault_injection
else fail production_build_has_no_fault_injection "exit $st retried=$retried: $(head -c 300 "$T/err")"; fi


# A channel limit of 64 KiB makes gRPC refuse the 1 MiB requests as too
# large: they must be split and re-sent, not failed.
"$BIN/tfrec2bt" --project=p --bigtable_instance=i --source_glob="$T/small/data-*" \
    --bigtable_table=split --num_records=2000 --create_table \
    --batch_bytes=1M --max_message_bytes=64K >"$T/out" 2>"$T/err"
st=$?
bt read split >"$T/split.dump"
splits=$(sed -n 's/.* \([0-9]*\) splits.*/\1/p' "$T/err")
if [ $st -eq 0 ] && [ "${splits:-0}" -gt 0 ] &&
   $CHECK verify "$T/split.dump" "$T/small/manifest.txt" train_ 2000 0 2000 >"$T/v"; then
    pass too_large_requests_split
else fail too_large_requests_split "exit $st splits=$splits: $(cat "$T/err" "$T/v" | head -c 500)"; fi

# The emulator built from Debian's golang-google-cloud-dev source refuses
# requests over 4 MiB (server side): 8 MiB batches must be split, not fail.
if command -v go >/dev/null && [ -d /usr/share/gocode/src/cloud.google.com/go/bigtable/bttest ]; then
    SAVED_HOST=$BIGTABLE_EMULATOR_HOST
    # built afresh (its cache directory in $T), from Go packages compiled
    # into the shared Go build cache
    out=$(EMULATOR_FROM_SOURCE=1 GOCACHE="${XDG_CACHE_HOME:-$HOME/.cache}/tfrec/gocache" \
        XDG_CACHE_HOME="$T/cache" "$ROOT/scripts/emulator.sh" start "$T/deb-emu.log" 2>"$T/deb.err")
    if [ -n "$out" ]; then
        EMU_PIDS+=("${out#* }")
        export BIGTABLE_EMULATOR_HOST=${out% *}
        "$BIN/tfrec2bt" --project=p --bigtable_instance=i --source_glob="$T/small/data-*" \
            --bigtable_table=deb --num_records=2000 --create_table --batch_bytes=8M >"$T/out" 2>"$T/err"
        st=$?
        bt read deb >"$T/deb.dump"
        splits=$(sed -n 's/.* \([0-9]*\) splits.*/\1/p' "$T/err")
        if [ $st -eq 0 ] && [ "${splits:-0}" -gt 0 ] &&
           $CHECK verify "$T/deb.dump" "$T/small/manifest.txt" train_ 2000 0 2000 >"$T/v"; then
            pass debian_emulator_4MiB_limit_split
        else fail debian_emulator_4MiB_limit_split "exit $st splits=$splits: $(cat "$T/err" "$T/v" | head -c 500)"; fi
        "$ROOT/scripts/emulator.sh" stop "${out#* }"
    else
        fail debian_emulator_4MiB_limit_split "could not start it: $(head -c 300 "$T/deb.err")"
    fi
    export BIGTABLE_EMULATOR_HOST=$SAVED_HOST
else
    echo "NOTE debian_emulator_4MiB_limit_split not run: golang-go / golang-google-cloud-dev missing"
fi

# ------------------------------------------------------------ corrupt source
mkdir -p "$T/bad"
cp "$T/small/data-00000-of-00002" "$T/bad/a-0"
cp "$T/small/data-00001-of-00002" "$T/bad/a-1"
size=$(stat -c %s "$T/bad/a-1")
printf '\xff' | dd of="$T/bad/a-1" bs=1 seek=$((size / 2)) conv=notrunc status=none
t2b --source_glob="$T/bad/a-*" --bigtable_table=bad --create_table >"$T/out" 2>"$T/err"
st=$?
if [ $st -eq 1 ] && grep -q "$T/bad/a-1" "$T/err" && grep -qi "offset" "$T/err" &&
   grep -q "every record below" "$T/err"; then pass corrupt_source_named
else fail corrupt_source_named "exit $st: $(head -c 500 "$T/err")"; fi
head -c $((size / 3)) "$T/small/data-00001-of-00002" >"$T/bad/a-1"
t2b --source_glob="$T/bad/a-*" --bigtable_table=bad >"$T/out" 2>"$T/err"
st=$?
if [ $st -eq 1 ] && grep -q "$T/bad/a-1" "$T/err" && grep -qi "truncated" "$T/err"; then
    pass truncated_source_named
else fail truncated_source_named "exit $st: $(head -c 500 "$T/err")"; fi
it_finish "bigtable faults"
