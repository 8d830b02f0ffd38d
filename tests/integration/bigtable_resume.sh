#!/usr/bin/env bash
# tfrec2bt interrupted and resumed, against the official Bigtable emulator
# (cbtemulator), checked with `cbt` and tests/integration/bigtable_check.py:
# SIGTERM mid-load (exit 130, the progress file equal to the rows in the
# table, then --resume to completion), a 3 s frozen emulator ridden out by
# retries, the emulator killed mid-load (a precise report and .failed list),
# then a resume on a fresh emulator ending with every row exactly once, and
# a foreign progress file refused. Split from bigtable.sh so that the
# runner's parallel lanes balance.
# needs: tfrec-bigtable
source "$(dirname "$0")/lib/common.sh"
it_bigtable_tools_setup bt-resume
EMU1=$EMU

# ------------------------------------------------------------ interrupted
# SIGINT/SIGTERM in the middle of a throttled load: what was sent is flushed, the
# progress file says exactly how far the table got, exit 130; --resume
# then completes it with every row once.
PROG3="$T/intr.progress"
# (SIGTERM: a script's background jobs ignore SIGINT, and so does the tool then)
"$BIN/tfrec2bt" --project=p --bigtable_instance=i --quiet --source_glob="$T/small/data-*" \
    --bigtable_table=intr --num_records=2000 --create_table --max_rows_per_sec=500 --batch_rows=50 \
    --progress_file="$PROG3" >"$T/out" 2>"$T/intr.err" &
LOADER=$!
for _ in $(seq 1 400); do
    n=$(sed -n 's/^next_index \([0-9]*\)/\1/p' "$PROG3" 2>/dev/null)
    [ "${n:-0}" -ge 200 ] && break
    sleep 0.02
done
kill -TERM $LOADER
wait $LOADER
st=$?
N=$(sed -n 's/^next_index \([0-9]*\)/\1/p' "$PROG3")
n=$(bt count intr | tr -dc 0-9)
if [ $st -eq 130 ] && [ -n "$N" ] && [ "$N" -lt 2000 ] && [ "$n" = "$N" ] &&
   grep -q "interrupted; every record below $N is acknowledged" "$T/intr.err"; then
    pass interrupt_flushes_and_saves_progress_exit_130
else fail interrupt_flushes_and_saves_progress_exit_130 "exit $st N=$N rows=$n: $(head -c 400 "$T/intr.err")"; fi
t2b --source_glob="$T/small/data-*" --bigtable_table=intr --num_records=2000 --resume \
    --progress_file="$PROG3" >"$T/out" 2>"$T/err"
st=$?
bt read intr >"$T/intr.dump"
if [ $st -eq 0 ] && $CHECK verify "$T/intr.dump" "$T/small/manifest.txt" train_ 2000 0 2000 >"$T/v"; then
    pass resume_after_interrupt_every_row_once
else fail resume_after_interrupt_every_row_once "exit $st: $(cat "$T/err" "$T/v" | head -c 400)"; fi

# ------------------------------------------------------------ outage
# Freeze the emulator for 3 s in the middle of a load: calls run into their
# 1 s deadline and are retried until it thaws; the load must then complete
# with every row once and one cell each (retries replace).
PROG2="$T/outage.progress"
"$BIN/tfrec2bt" --project=p --bigtable_instance=i --bigtable_table=outage --source_glob="$T/small/data-*" \
    --num_records=2000 --create_table --batch_rows=20 --max_inflight=2 --rpc_timeout=1 \
    --retry_timeout=60 --max_rows_per_sec=1000 --progress_file="$PROG2" >"$T/out" 2>"$T/outage.err" &
LOADER=$!
for _ in $(seq 1 400); do
    n=$(sed -n 's/^next_index \([0-9]*\)/\1/p' "$PROG2" 2>/dev/null)
    [ "${n:-0}" -ge 300 ] && break
    sleep 0.01
done
kill -STOP "$EMU1"
sleep 3
kill -CONT "$EMU1"
wait $LOADER
st=$?
bt read outage >"$T/outage.dump"
failed_calls=$(sed -n 's/.* \([0-9]*\) failed calls.*/\1/p' "$T/outage.err")
if [ $st -eq 0 ] && [ "${failed_calls:-0}" -gt 0 ] &&
   $CHECK verify "$T/outage.dump" "$T/small/manifest.txt" train_ 2000 0 2000 >"$T/v"; then
    pass frozen_emulator_outage_retried
else fail frozen_emulator_outage_retried "exit $st failed_calls=$failed_calls: $(cat "$T/outage.err" "$T/v" | head -c 600)"; fi

# ------------------------------------------------------------ kill + resume
# Load with small batches; once a few hundred rows are acknowledged, freeze
# the loader, kill the emulator, let the loader run into the dead server.
PROG="$T/kill.progress"
"$BIN/tfrec2bt" --project=p --bigtable_instance=i --bigtable_table=train --source_glob="$T/small/data-*" \
    --num_records=2000 --row_prefix=k_ --batch_rows=20 --max_inflight=1 --retry_timeout=3 \
    --max_rows_per_sec=1000 --create_table \
    --progress_file="$PROG" --quiet >"$T/out" 2>"$T/kill.err" &
LOADER=$!
for _ in $(seq 1 400); do
    n=$(sed -n 's/^next_index \([0-9]*\)/\1/p' "$PROG" 2>/dev/null)
    [ "${n:-0}" -ge 300 ] && break
    sleep 0.01
done
kill -STOP $LOADER 2>/dev/null
"$ROOT/scripts/emulator.sh" stop "$EMU1"
kill -9 "$EMU1" 2>/dev/null
kill -CONT $LOADER 2>/dev/null
wait $LOADER
st=$?
N=$(sed -n 's/^next_index \([0-9]*\)/\1/p' "$PROG")
first_failed=$(sed -n 's/.*not written: row k_\([0-9]*\) (record \([0-9]*\)).*/\2/p' "$T/kill.err" | head -1)
# "X of Y rows not written": the .failed file lists exactly X rows, and X
# plus the rows acknowledged is every row handed to the writer (Y)
nfailed=$(wc -l <"$PROG.failed" 2>/dev/null || echo 0)
acked=$(sed -n 's/^[0-9T:Z-]* \{0,1\}tfrec2bt: \([0-9]*\) rows .*/\1/p' "$T/kill.err")
X=$(sed -n 's/.* \([0-9]*\) of \([0-9]*\) rows not written.*/\1/p' "$T/kill.err")
Y=$(sed -n 's/.* \([0-9]*\) of \([0-9]*\) rows not written.*/\2/p' "$T/kill.err")
if [ $st -eq 3 ] && [ -n "$N" ] && [ "$N" -gt 0 ] && [ "$N" -lt 2000 ] &&
   grep -q "every record below $N is acknowledged" "$T/kill.err" &&
   grep -q "rows not written" "$T/kill.err" && [ "$first_failed" = "$N" ] &&
   [ "$nfailed" = "$X" ] && [ $((nfailed + acked)) = "$Y" ] && [ "$(cut -f2 "$PROG.failed" | sort -n | head -1)" = "$N" ]; then
    pass emulator_killed_mid_load_reported
else fail emulator_killed_mid_load_reported "exit $st N=$N first_failed=$first_failed failed=$nfailed/$X acked=$acked of $Y: $(head -c 800 "$T/kill.err")"; fi

# A fresh emulator has lost everything: first re-create what the dead one
# had acknowledged (records 0..N-1, same key width), then --resume loads the
# rest. The final table must hold every row exactly once, one cell each.
it_bigtable_emulator "$T/emulator2.log"
$CHECK head "$T/acked.tfrecord" "$N" "$T"/small/data-* || fail resume_setup "head"
t2b --source_glob="$T/acked.tfrecord" --bigtable_table=train --num_records=2000 --row_prefix=k_ \
    --create_table >"$T/out" 2>"$T/err" || fail resume_setup "$(cat "$T/err")"
bt read train >"$T/before.dump"
# (checked while the interrupted load's progress file is there: the
# completed resume below removes it)
t2b --source_glob="$T/small/data-*" --bigtable_table=train --num_records=2000 --row_prefix=other_ \
    --resume --progress_file="$PROG" >"$T/out" 2>"$T/err"
st=$?
if [ $st -eq 2 ] && grep -q "was written for row_prefix k_, not row_prefix other_" "$T/err"; then
    pass resume_refuses_foreign_progress_file
else fail resume_refuses_foreign_progress_file "exit $st: $(head -c 300 "$T/err")"; fi
"$BIN/tfrec2bt" --project=p --bigtable_instance=i --bigtable_table=train --source_glob="$T/small/data-*" \
    --num_records=2000 --row_prefix=k_ --resume --progress_file="$PROG" >"$T/out" 2>"$T/resume.err"
st=$?
bt read train >"$T/resumed.dump"
if [ $st -eq 0 ] && grep -q "resuming at record $N" "$T/resume.err" &&
   $CHECK verify "$T/resumed.dump" "$T/small/manifest.txt" k_ 2000 0 2000 >"$T/v"; then
    pass resume_after_kill_every_row_once
else fail resume_after_kill_every_row_once "exit $st: $(cat "$T/resume.err" "$T/v" | head -c 800)"; fi
wrote=$(sed -n 's/^[0-9T:Z-]* \{0,1\}tfrec2bt: \([0-9]*\) rows .*/\1/p' "$T/resume.err")
# the load is complete: its progress file is removed
if [ "$wrote" = $((2000 - N)) ] && [ ! -e "$PROG" ]; then
    pass resume_skips_acknowledged_rows
else fail resume_skips_acknowledged_rows "resume wrote '$wrote' rows, expected $((2000 - N))"; fi
it_finish "bigtable resume"
