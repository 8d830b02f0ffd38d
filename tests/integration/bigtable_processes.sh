#!/usr/bin/env bash
# tfrec2bt --processes=N against the official Bigtable emulator: one command
# that runs N child processes over task shares loads every record exactly
# once under the keys a one-process run writes, with one summary; SIGTERM to
# the parent stops every child, and the one resume command it prints
# completes the load; a child that fails (a corrupt record in its share)
# fails the parent, whose message names it, while the child's own message
# names the file; flags that cannot go with it are usage errors. Rows are
# checked with `cbt` against the generator's manifest (SHA-256 of each
# source record, tests/integration/bigtable_check.py), not against our code.
# needs: tfrec-bigtable
source "$(dirname "$0")/lib/common.sh"
it_tmpdir bt-procs
cd "$T"

it_need_cbt
it_need_bins tfrec2bt
it_bigtable_emulator "$T/emu.log"
unset JOB_COMPLETION_INDEX TFREC_NUM_TASKS

bt() { cbt -project p -instance i "$@" 2>>"$T/cbt.err"; }
t2b() { "$BIN/tfrec2bt" --project=p --bigtable_instance=i "$@"; }

# 1003 records (up to 3 KB; not a multiple of 3 or 4) in 5 files
N=1003
$CHECK gen "$T/d" 5 $N 33 0 3000 >/dev/null || { echo "FAIL setup: gen"; exit 1; }
GLOB="$T/d/data-*-of-00005"
for t in one three stop bad; do
    bt createtable $t && bt createfamily $t tfexample || { echo "FAIL setup: table $t"; exit 1; }
done

# ------------------------------------------------------------ every row once
t2b --quiet --source_glob="$GLOB" --bigtable_table=one --progress_file="$T/one.progress" \
    >/dev/null 2>"$T/one.err"
bt read one >"$T/one.dump"
$CHECK keys "$T/one.dump" >"$T/one.keys"
mkdir -p "$T/w3"
(cd "$T/w3" && t2b --source_glob="$GLOB" --bigtable_table=three --processes=3 >out 2>err)
st=$?
bt read three >"$T/three.dump"
$CHECK keys "$T/three.dump" >"$T/three.keys"
# the shares of 1003 in 3 tasks: 0..333, 334..667, 668..1002
# (complete: no task's progress file is left)
ok=1
for i in 0 1 2; do
    [ ! -e "$T/w3/tfrec2bt-i-three-train_-task-0000$i-of-00003.progress" ] || ok=0
done
if [ $st -eq 0 ] && [ $ok = 1 ] &&
   $CHECK verify "$T/three.dump" "$T/d/manifest.txt" train_ 0 0 $N >"$T/v" &&
   cmp -s "$T/one.keys" "$T/three.keys" &&
   [ "$(grep -c "rows (.* MB) written to three by 3 processes" "$T/w3/err")" = 1 ] &&
   grep -q "^[0-9T:Z-]* \{0,1\}tfrec2bt: $N rows" "$T/w3/err" && ! grep -q "task .* of 3" "$T/w3/err" &&
   [ ! -e "$T/w3/tfrec2bt-i-three-train_.progress" ]; then
    pass three_processes_every_row_once_same_keys_one_summary_task_progress_files
else fail three_processes_every_row_once_same_keys_one_summary_task_progress_files "exit $st ok=$ok: $(cat "$T/w3/err" "$T/v" | head -c 800; ls "$T/w3")"; fi

# ------------------------------------------------------------ SIGTERM, one resume command
# Throttled so that the signal surely comes mid-load: every child stops
# (none is left running), the parent exits 130 and prints one command,
# which, run from elsewhere, loads the rest; then every row is there once.
"$BIN/tfrec2bt" --project=p --bigtable_instance=i --source_glob="$GLOB" \
    --bigtable_table=stop --processes=2 --num_records=$N \
    --max_rows_per_sec=150 --batch_rows=10 --progress_file="$T/stop.progress" \
    >"$T/stop.out" 2>"$T/stop.err" &
parent=$!
P0="$T/stop-task-00000-of-00002.progress"
P1="$T/stop-task-00001-of-00002.progress"
for _ in $(seq 1 500); do
    [ "$(next_index "$P0")" -gt 0 ] 2>/dev/null && [ "$(next_index "$P1")" -gt 501 ] 2>/dev/null && break
    sleep 0.02
done
kids=$(pgrep -P $parent | tr '\n' ' ')
kill -TERM $parent
wait $parent
st=$?
left=0
for k in $kids; do kill -0 "$k" 2>/dev/null && left=$((left + 1)); done
k0=$(next_index "$P0")
k1=$(next_index "$P1")
cmd=$(resume_command "$T/stop.err")
if [ $st -eq 130 ] && [ -n "$kids" ] && [ $left = 0 ] && [ "${k0:-0}" -lt 501 ] && [ "${k1:-0}" -lt $N ] &&
   [ "$(grep -c "to continue, run:" "$T/stop.err")" = 1 ] &&
   [ "$(grep -c "rows (.* MB) written to" "$T/stop.err")" = 1 ] &&
   [ "$(grep -c "every record below\|every task saved" "$T/stop.err")" = 1 ] &&
   grep -q "every task saved its resume point ($P0 and the other" "$T/stop.err" &&
   [[ "$cmd" == *" --processes=2 "*" --resume --progress_file=$T/stop.progress" ]]; then
    pass sigterm_stops_every_child_one_summary_one_resume_command
else fail sigterm_stops_every_child_one_summary_one_resume_command "exit $st kids='$kids' left=$left k0=$k0 k1=$k1 cmd='$cmd': $(head -c 800 "$T/stop.err")"; fi
(cd / && eval "${cmd/--max_rows_per_sec=150/}") >"$T/out" 2>"$T/resume.err"
st=$?
bt read stop >"$T/stop.dump"
if [ $st -eq 0 ] && [ ! -e "$P0" ] && [ ! -e "$P1" ] &&
   $CHECK verify "$T/stop.dump" "$T/d/manifest.txt" train_ $N 0 $N >"$T/v"; then
    pass resume_command_completes_every_row_once
else fail resume_command_completes_every_row_once "exit $st: $(cat "$T/resume.err" "$T/v" | head -c 800)"; fi

# ------------------------------------------------------------ a child fails
# A bad CRC in the last file: only the last task's share has it (given
# --num_records, nothing counts the records, which would find it). That child
# stops with a data error naming the file; the others finish; the parent
# exits 1, names the task, and prints the command to continue.
mkdir -p "$T/bad" && cp "$T"/d/data-* "$T/bad/"
f="$T/bad/data-00004-of-00005"
size=$(stat -c %s "$f")
printf '\377' | dd of="$f" bs=1 seek=$((size - 100)) conv=notrunc status=none
t2b --quiet --source_glob="$T/bad/data-*-of-00005" --bigtable_table=bad --processes=2 \
    --num_records=$N --progress_file="$T/bad.progress" >"$T/out" 2>"$T/bad.err"
st=$?
b0=$(next_index "$T/bad-task-00000-of-00002.progress")
if [ $st -eq 1 ] && grep -q "data-00004-of-00005" "$T/bad.err" &&
   grep -q "task 1 of 2 (process [0-9]*) failed with exit status 1" "$T/bad.err" &&
   ! grep -q "task 0 of 2" "$T/bad.err" && [ "$b0" = 501 ] &&
   [ "$(grep -c "to continue, run:" "$T/bad.err")" = 1 ]; then
    pass failing_child_fails_the_parent_with_its_message
else fail failing_child_fails_the_parent_with_its_message "exit $st b0=$b0: $(head -c 800 "$T/bad.err")"; fi

# ------------------------------------------------------------ usage errors
t2b --source_glob="$GLOB" --bigtable_table=one --processes=2 --task_index=0 --num_tasks=2 \
    >/dev/null 2>"$T/u1"
s1=$?
t2b --source_glob=- --bigtable_table=one --processes=2 <"$T/d/data-00000-of-00005" \
    >/dev/null 2>"$T/u2"
s2=$?
# A task count without this task's index: every pod would take task 0.
TFREC_NUM_TASKS=2 t2b --source_glob="$GLOB" --bigtable_table=one --processes=2 >/dev/null 2>"$T/u3"
s3=$?
if [ "$s1 $s2 $s3" = "2 2 2" ] && grep -q "cannot run one task of --num_tasks" "$T/u1" &&
   grep -q "cannot share standard input" "$T/u2" &&
   grep -q "TFREC_NUM_TASKS is set but JOB_COMPLETION_INDEX is not" "$T/u3"; then
    pass processes_with_tasks_or_stdin_is_a_usage_error
else fail processes_with_tasks_or_stdin_is_a_usage_error "exits $s1 $s2 $s3: $(cat "$T"/u[1-3] | head -c 600)"; fi

it_finish bigtable_processes
