#!/usr/bin/env bash
# tfrec2bt and bt2tfrec split into tasks, against the official Bigtable
# emulator: the same command line run as N local processes that differ only
# in JOB_COMPLETION_INDEX (as the pods of a Kubernetes Indexed Job) loads
# every record exactly once under the keys a one-process run writes; with
# and without --num_records (counted by reading, or from fresh .idx files);
# more tasks than records; a task killed (SIGKILL) or stopped (SIGTERM)
# mid-load and resumed alone; bt2tfrec tasks whose outputs, taken by task
# index, are the whole table in key order; bad task identities. Rows and
# records are checked with `cbt` against the generator's manifest (SHA-256
# of each source record, tests/integration/bigtable_check.py), not against
# our code.
# needs: tfrec-bigtable
source "$(dirname "$0")/lib/common.sh"
it_tmpdir bt-tasks
cd "$T"

it_need_cbt
it_need_bins tfrec2bt bt2tfrec tfrec
it_bigtable_emulator "$T/emu.log"
unset JOB_COMPLETION_INDEX TFREC_NUM_TASKS

bt() { cbt -project p -instance i "$@" 2>>"$T/cbt.err"; }

# 1003 records (up to 3 KB; 1003 is not a multiple of 4) in 5 files
N=1003
$CHECK gen "$T/d" 5 $N 21 0 3000 >/dev/null || { echo "FAIL setup: gen"; exit 1; }
GLOB="$T/d/data-*-of-00005"
for t in one four fourn five idx kill; do
    bt createtable $t && bt createfamily $t tfexample || { echo "FAIL setup: table $t"; exit 1; }
done

# run_tasks DIR COUNT ARGS...: the same tfrec2bt command as COUNT processes
# in parallel, task i in DIR/i (its working directory: default progress
# files) with JOB_COMPLETION_INDEX=i; the statuses in DIR/status
run_tasks() {
    local dir=$1 count=$2 i
    shift 2
    local pids=()
    for i in $(seq 0 $((count - 1))); do
        mkdir -p "$dir/$i"
        (cd "$dir/$i" && JOB_COMPLETION_INDEX=$i TFREC_NUM_TASKS=$count \
            "$BIN/tfrec2bt" --project=p --bigtable_instance=i --quiet "$@" >out 2>err) &
        pids+=($!)
    done
    : >"$dir/status"
    for i in "${!pids[@]}"; do
        wait "${pids[$i]}"
        echo "$i $?" >>"$dir/status"
    done
}
all_ok() { ! grep -qv ' 0$' "$1/status"; }

# ------------------------------------------------------------ one process
"$BIN/tfrec2bt" --project=p --bigtable_instance=i --quiet --source_glob="$GLOB" \
    --bigtable_table=one --progress_file="$T/one.progress" >"$T/out" 2>"$T/one.err"
st=$?
bt read one >"$T/one.dump"
$CHECK keys "$T/one.dump" >"$T/one.keys"
if [ $st -eq 0 ] && $CHECK verify "$T/one.dump" "$T/d/manifest.txt" train_ 0 0 $N >"$T/v"; then
    pass one_process_reference_load
else fail one_process_reference_load "exit $st: $(cat "$T/one.err" "$T/v" | head -c 400)"; fi

# ------------------------------------------------------------ 4 tasks, counted
run_tasks "$T/r4" 4 --source_glob="$GLOB" --bigtable_table=four
bt read four >"$T/four.dump"
$CHECK keys "$T/four.dump" >"$T/four.keys"
if all_ok "$T/r4" && $CHECK verify "$T/four.dump" "$T/d/manifest.txt" train_ 0 0 $N >"$T/v" &&
   cmp -s "$T/one.keys" "$T/four.keys"; then
    pass four_tasks_counted_every_row_once_same_keys_as_one_process
else fail four_tasks_counted_every_row_once_same_keys_as_one_process "$(cat "$T/r4/status" "$T/v"; cat "$T/r4"/*/err | head -c 600)"; fi

# each task says its share (floor(1003*i/4) ..) and how the total was found,
# and keeps its own progress file, which ends at its share's end
ok=1
shares=("0 250" "250 501" "501 752" "752 1003")
for i in 0 1 2 3; do
    read -r b e <<<"${shares[$i]}"
    p="$T/r4/$i/tfrec2bt-i-four-train_-task-0000$i-of-00004.progress"
    grep -q "task $i of 4: records $b..$((e - 1)) ($((e - b)) of $N, counted by reading files; 5 of 5 files read to count them)" "$T/r4/$i/err" &&
        [ "$(next_index "$p")" = "$e" ] || ok=0
done
if [ $ok = 1 ]; then pass tasks_report_share_and_keep_own_progress_file
else fail tasks_report_share_and_keep_own_progress_file "$(cat "$T/r4"/*/err; ls "$T/r4"/*)"; fi

# ------------------------------------------------------------ 4 tasks, --num_records
run_tasks "$T/r4n" 4 --source_glob="$GLOB" --bigtable_table=fourn --num_records=$N
bt read fourn >"$T/fourn.dump"
if all_ok "$T/r4n" && $CHECK verify "$T/fourn.dump" "$T/d/manifest.txt" train_ $N 0 $N >"$T/v" &&
   grep -q "task 2 of 4: records 501..751 (251 of $N, --num_records)" "$T/r4n/2/err" &&
   ! grep -q "counting" "$T/r4n/2/err"; then
    pass four_tasks_num_records_every_row_once_width_of_num_records
else fail four_tasks_num_records_every_row_once_width_of_num_records "$(cat "$T/r4n/status" "$T/v"; cat "$T/r4n"/*/err | head -c 600)"; fi

# ------------------------------------------------------------ more tasks than records
$CHECK gen "$T/three" 1 3 5 0 100 >/dev/null
run_tasks "$T/r5" 5 --source_glob="$T/three/data-*-of-00001" --bigtable_table=five
bt read five >"$T/five.dump"
empty=$(grep -l "no records (3 in all, counted by reading files, fewer than the tasks): nothing to load" "$T/r5"/*/err | wc -l)
if all_ok "$T/r5" && [ "$empty" = 2 ] &&
   $CHECK verify "$T/five.dump" "$T/three/manifest.txt" train_ 0 0 3 >"$T/v"; then
    pass more_tasks_than_records_empty_tasks_succeed_and_say_so
else fail more_tasks_than_records_empty_tasks_succeed_and_say_so "empty=$empty $(cat "$T/r5/status" "$T/v"; cat "$T/r5"/*/err | head -c 600)"; fi

# ------------------------------------------------------------ fresh indexes
# With FILE.idx beside every file the total comes from the indexes, and a
# task passes over the files before its share without reading them: the
# first three zeroed (same size, indexes touched, so still fresh; any read
# of them is a CRC error), task 3 still loads its share.
mkdir -p "$T/ix" && cp "$T"/d/data-* "$T/ix/"
"$BIN/tfrec" index "$T"/ix/data-*-of-00005 >/dev/null 2>"$T/err"
for k in 0 1 2; do
    f="$T/ix/data-0000$k-of-00005"
    dd if=/dev/zero of="$f" bs="$(stat -c %s "$f")" count=1 conv=notrunc status=none
    touch "$f.idx"
done
(JOB_COMPLETION_INDEX=3 TFREC_NUM_TASKS=4 "$BIN/tfrec2bt" --project=p --bigtable_instance=i \
    --quiet --source_glob="$T/ix/data-*-of-00005" --bigtable_table=idx \
    --progress_file="$T/idx.progress" >"$T/out" 2>"$T/idx.err")
st=$?
bt read idx >"$T/idx.dump"
if [ $st -eq 0 ] &&
   grep -q "task 3 of 4: records 752..1002 (251 of $N, counted from fresh .idx files)" "$T/idx.err" &&
   $CHECK verify "$T/idx.dump" "$T/d/manifest.txt" train_ 0 752 $N >"$T/v"; then
    pass fresh_indexes_count_and_skip_files_before_the_share
else fail fresh_indexes_count_and_skip_files_before_the_share "exit $st: $(cat "$T/idx.err" "$T/v" | head -c 600)"; fi

# ------------------------------------------------------------ killed and resumed
# 4 throttled tasks; task 1 is killed (SIGKILL: no chance to save anything
# more) and task 2 stopped (SIGTERM) mid-load, the others finish. Task 1 is
# resumed alone with --resume from the same environment, task 2 by the
# command it printed (which names the task: run without the environment).
mkdir -p "$T/rk"
pids=()
for i in 0 1 2 3; do
    mkdir -p "$T/rk/$i"
    (cd "$T/rk/$i" && exec env JOB_COMPLETION_INDEX=$i TFREC_NUM_TASKS=4 "$BIN/tfrec2bt" \
        --project=p --bigtable_instance=i --quiet --source_glob="$GLOB" --bigtable_table=kill \
        --num_records=$N --max_rows_per_sec=200 --batch_rows=20 >out 2>err) &
    pids+=($!)
done
P1="$T/rk/1/tfrec2bt-i-kill-train_-task-00001-of-00004.progress"
P2="$T/rk/2/tfrec2bt-i-kill-train_-task-00002-of-00004.progress"
wait_for_index "$P1" 300 && wait_for_index "$P2" 551 || fail kill_setup "no progress: $(cat "$T"/rk/*/err | head -c 300)"
kill -KILL "${pids[1]}"
kill -TERM "${pids[2]}"
st=()
for i in 0 1 2 3; do { wait "${pids[$i]}"; } 2>/dev/null; st+=($?); done
k1=$(next_index "$P1")
k2=$(next_index "$P2")
cmd=$(resume_command "$T/rk/2/err")
if [ "${st[0]} ${st[1]} ${st[2]} ${st[3]}" = "0 137 130 0" ] && [ "$k1" -lt 501 ] && [ "$k2" -lt 752 ] &&
   [[ "$cmd" == *" --task_index=2 --num_tasks=4 --resume --progress_file=$P2" ]]; then
    pass task_killed_and_task_stopped_mid_load
else fail task_killed_and_task_stopped_mid_load "statuses ${st[*]} k1=$k1 k2=$k2 cmd='$cmd': $(cat "$T/rk/2/err" | head -c 400)"; fi
(cd "$T/rk/1" && JOB_COMPLETION_INDEX=1 TFREC_NUM_TASKS=4 "$BIN/tfrec2bt" --project=p \
    --bigtable_instance=i --source_glob="$GLOB" --bigtable_table=kill --num_records=$N \
    --max_rows_per_sec=200 --batch_rows=20 --resume >out 2>resume.err)
r1=$?
(cd / && eval "$cmd") >"$T/out" 2>"$T/rk/2/resume.err"
r2=$?
bt read kill >"$T/kill.dump"
if [ $r1 -eq 0 ] && [ $r2 -eq 0 ] && grep -q "resuming at record $k1" "$T/rk/1/resume.err" &&
   [ "$(next_index "$P1")" = 501 ] && [ "$(next_index "$P2")" = 752 ] &&
   $CHECK verify "$T/kill.dump" "$T/d/manifest.txt" train_ $N 0 $N >"$T/v"; then
    pass resumed_tasks_alone_every_row_once
else fail resumed_tasks_alone_every_row_once "exit $r1/$r2: $(cat "$T/rk/1/resume.err" "$T/rk/2/resume.err" "$T/v" | head -c 600)"; fi

# another task's progress file is refused
(JOB_COMPLETION_INDEX=3 TFREC_NUM_TASKS=4 "$BIN/tfrec2bt" --project=p --bigtable_instance=i \
    --quiet --source_glob="$GLOB" --bigtable_table=kill --num_records=$N --resume \
    --progress_file="$P1" >"$T/out" 2>"$T/err")
st=$?
if [ $st -eq 2 ] && grep -q "was written for task 1 of 4, not task 3 of 4" "$T/err"; then
    pass other_tasks_progress_file_refused
else fail other_tasks_progress_file_refused "exit $st: $(head -c 300 "$T/err")"; fi

# ------------------------------------------------------------ bt2tfrec tasks
# 4 tasks from the environment, the same command line: each writes its own
# file OUTPUT-iiiii-of-00004, and concatenated by task index they are the
# table in key order, every row once. Then with 2 scans each and
# --output_shards: 8 files numbered over all the tasks, the same. Split
# points from a file, as tasks on separate machines would share them.
b2t_tasks() { # COUNT ARGS...
    local count=$1 i
    shift
    local pids=()
    for i in $(seq 0 $((count - 1))); do
        JOB_COMPLETION_INDEX=$i TFREC_NUM_TASKS=$count "$BIN/bt2tfrec" --project=p \
            --bigtable_instance=i --bigtable_table=four --quiet "$@" 2>"$T/b2t.$i.err" &
        pids+=($!)
    done
    b2t_st=0
    for p in "${pids[@]}"; do wait "$p" || b2t_st=$?; done
}
printf 'train_0000000100\ntrain_0000000400\ntrain_0000000401\ntrain_0000000777\ntrain_0000000900\n' >"$T/splits"
b2t_tasks 4 --output="$T/part" --split_keys_file="$T/splits"
cat "$T"/part-0000?-of-00004 >"$T/part.all" 2>/dev/null
if [ $b2t_st -eq 0 ] && [ "$(ls "$T"/part-* | wc -l)" = 4 ] &&
   $CHECK verify-tfrecord "$T/part.all" "$T/d/manifest.txt" 0 $N >"$T/v"; then
    pass bt2tfrec_tasks_one_file_each_union_in_key_order
else fail bt2tfrec_tasks_one_file_each_union_in_key_order "exit $b2t_st: $(ls "$T"/part-*; cat "$T"/b2t.*.err "$T/v" | head -c 600)"; fi
b2t_tasks 4 --output="$T/sh" --parallel_scans=2 --output_shards --split_keys_file="$T/splits"
cat "$T"/sh-0000?-of-00008 >"$T/sh.all" 2>/dev/null
if [ $b2t_st -eq 0 ] && [ "$(ls "$T"/sh-* | wc -l)" = 8 ] &&
   $CHECK verify-tfrecord "$T/sh.all" "$T/d/manifest.txt" 0 $N >"$T/v"; then
    pass bt2tfrec_tasks_output_shards_numbered_globally
else fail bt2tfrec_tasks_output_shards_numbered_globally "exit $b2t_st: $(ls "$T"/sh-*; cat "$T"/b2t.*.err "$T/v" | head -c 600)"; fi
# a task run again rewrites its file with the same records
cp "$T/part-00002-of-00004" "$T/part2.before"
JOB_COMPLETION_INDEX=2 TFREC_NUM_TASKS=4 "$BIN/bt2tfrec" --project=p --bigtable_instance=i \
    --bigtable_table=four --quiet --output="$T/part" --split_keys_file="$T/splits" 2>"$T/err"
st=$?
if [ $st -eq 0 ] && cmp -s "$T/part2.before" "$T/part-00002-of-00004" && [ "$(ls "$T"/part-* | wc -l)" = 4 ]; then
    pass bt2tfrec_task_rerun_rewrites_the_same_file
else fail bt2tfrec_task_rerun_rewrites_the_same_file "exit $st: $(head -c 300 "$T/err")"; fi

# ------------------------------------------------------------ bad identities
JOB_COMPLETION_INDEX=4 TFREC_NUM_TASKS=4 "$BIN/tfrec2bt" --project=p --bigtable_instance=i \
    --source_glob="$GLOB" --bigtable_table=four >"$T/out" 2>"$T/err1"
s1=$?
JOB_COMPLETION_INDEX=4 TFREC_NUM_TASKS=4 "$BIN/bt2tfrec" --project=p --bigtable_instance=i \
    --bigtable_table=four --output="$T/bad" >"$T/out" 2>"$T/err2"
s2=$?
JOB_COMPLETION_INDEX=1 "$BIN/tfrec2bt" --project=p --bigtable_instance=i \
    --source_glob="$GLOB" --bigtable_table=four >"$T/out" 2>"$T/err3"
s3=$?
"$BIN/bt2tfrec" --project=p --bigtable_instance=i --bigtable_table=four --output="$T/bad" \
    --shard_index=0 --num_shards=2 --task_index=1 --num_tasks=2 >"$T/out" 2>"$T/err4"
s4=$?
"$BIN/tfrec2bt" --project=p --bigtable_instance=i --bigtable_table=four --source_glob=- \
    --task_index=1 --num_tasks=2 <"$T/d/data-00000-of-00005" >"$T/out" 2>"$T/err5"
s5=$?
if [ "$s1 $s2 $s3 $s4 $s5" = "2 2 2 2 2" ] && grep -q "standard input only with --num_records" "$T/err5" &&
   grep -q "JOB_COMPLETION_INDEX=4 is not below TFREC_NUM_TASKS=4" "$T/err1" &&
   grep -q "JOB_COMPLETION_INDEX=4 is not below TFREC_NUM_TASKS=4" "$T/err2" &&
   grep -q "TFREC_NUM_TASKS" "$T/err3" && grep -q "give one pair" "$T/err4" && ! ls "$T"/bad* >/dev/null 2>&1 &&
   [ "$(next_index "$T/r4/0/tfrec2bt-i-four-train_-task-00000-of-00004.progress")" = 250 ]; then
    pass bad_task_identity_exit_2
else fail bad_task_identity_exit_2 "exits $s1 $s2 $s3 $s4 $s5: $(cat "$T"/err[1-5] | head -c 600)"; fi

# A task re-run from scratch (a new pod: no progress file) with the job's
# one --timestamp_micros replaces its cells; without it, each run stamps
# its own start, so the same re-run leaves two versions of every row.
cells_per_row() { # table: "<rows> <max cells of a row>"
    bt read "$1" columns=tfexample:example | awk '
        /^----/ { next }
        /^[^ ]/ { row = $1; rows[row] = 0; next }
        /^  tfexample:example/ { rows[row]++ }
        END { n = 0; m = 0; for (r in rows) { n++; if (rows[r] > m) m = rows[r] } print n, m }'
}
bt createtable ts && bt createfamily ts tfexample && bt createtable nots && bt createfamily nots tfexample
for table in ts nots; do
    flag=; [ $table = ts ] && flag=--timestamp_micros=1700000000123000
    for run in 1 2; do
        mkdir -p "$T/$table/$run"
        (cd "$T/$table/$run" && "$BIN/tfrec2bt" --project=p --bigtable_instance=i --bigtable_table=$table \
            --source_glob="$GLOB" --task_index=1 --num_tasks=4 --num_records=$N $flag --quiet \
            >"$T/$table.out" 2>&1) || echo "run $run of $table failed: $(cat "$T/$table.out")" >>"$T/ts.err"
        sleep 0.01 # the second run of nots starts at least a millisecond later
    done
done
"$BIN/tfrec2bt" --project=p --bigtable_instance=i --bigtable_table=ts --source_glob="$GLOB" \
    --timestamp_micros=1700000000123456 >"$T/out" 2>"$T/err6"
s6=$?
ts_cells=$(cells_per_row ts)
nots_cells=$(cells_per_row nots)
if [ ! -s "$T/ts.err" ] && [ "$ts_cells" = "251 1" ] && [ "$nots_cells" = "251 2" ] && [ $s6 = 2 ] &&
   grep -q "not a whole number of milliseconds" "$T/err6"; then
    pass rerun_task_with_job_timestamp_replaces_cells
else fail rerun_task_with_job_timestamp_replaces_cells \
    "with the flag: $ts_cells, without: $nots_cells (rows, max cells), bad value exit $s6; $(cat "$T/ts.err" "$T/err6" 2>/dev/null | head -c 400)"; fi

it_finish bigtable_tasks
