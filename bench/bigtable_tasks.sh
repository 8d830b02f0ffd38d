#!/usr/bin/env bash
# A tfrec2bt load split into tasks, against the official emulator on this
# machine: wall time of one process vs the same command as N parallel tasks
# (JOB_COMPLETION_INDEX=0..N-1), and what finding the total costs each task
# (--dry_run: --num_records given, fresh .idx files, or a counting pass).
# Every process shares the machine's cores with the emulator, so the task
# figures say what splitting costs here, not how it scales over machines.
# Prints RATIO bigtable_tasks_vs_one_process (met when the tasks together
# take at most 1.5x the wall of one process). Every load is counted with
# `cbt` and must hold every record.
# BENCH_RECORDS (200000), BENCH_FILES (16), BENCH_TASKS (4), BENCH_ROUNDS (3).
# needs: tfrec-bigtable
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BIN=${TFREC_BUILD:-$ROOT/build}/bin
R=${BENCH_RECORDS:-200000}
F=${BENCH_FILES:-16}
N=${BENCH_TASKS:-4}
W=$(mktemp -d /tmp/tfrec-bt-tasks-bench.XXXXXX)
EMU=
trap '[ -n "$EMU" ] && scripts/emulator.sh stop "$EMU"; rm -rf "$W"' EXIT
/usr/bin/python3 tests/integration/bigtable_check.py gen "$W/d" "$F" "$R" 3 0 2000 >/dev/null
read -r ADDR EMU < <(scripts/emulator.sh start "$W/emu.log")
export BIGTABLE_EMULATOR_HOST=$ADDR
now() { date +%s.%N; }
secs() { /usr/bin/python3 -c "print('%.2f' % ($2 - $1))"; }
t2b() { "$BIN/tfrec2bt" --project=p --bigtable_instance=i --quiet --create_table "$@"; }
G="$W/d/data-*-of-$(printf %05d "$F")" # not the .idx files
MB=$(du -scm "$W"/d/data-* | tail -1 | cut -f1)
echo "machine: $(nproc) cores; $R records (1..2000 bytes, $MB MB) in $F files; $N tasks"

# interleaved rounds (the machine is shared); each table dropped after its count
ROUNDS=${BENCH_ROUNDS:-3}
ratios=()
for r in $(seq 1 "$ROUNDS"); do
    t0=$(now)
    t2b --source_glob="$G" --bigtable_table=one --progress_file="$W/one.p" 2>"$W/one.err" ||
        { echo "one process failed: $(tail -3 "$W/one.err")"; exit 1; }
    t1=$(now)
    for i in $(seq 0 $((N - 1))); do
        JOB_COMPLETION_INDEX=$i TFREC_NUM_TASKS=$N t2b --source_glob="$G" --bigtable_table=split \
            --num_records="$R" --progress_file="$W/split.$i.p" 2>"$W/split.$i.err" &
    done
    ok=1
    for p in $(jobs -p); do wait "$p" || ok=0; done
    [ $ok = 1 ] || { echo "a task failed: $(tail -3 "$W"/split.*.err)"; exit 1; }
    t2=$(now)
    rows=""
    if command -v cbt >/dev/null; then
        one=$(cbt -project p -instance i count one 2>/dev/null)
        split=$(cbt -project p -instance i count split 2>/dev/null)
        rows="; rows $one/$split"
        [ "$one" = "$R" ] && [ "$split" = "$R" ] ||
            { echo "round $r: rows $one (one process) / $split (tasks), expected $R each"; exit 1; }
        cbt -project p -instance i deletetable one 2>/dev/null
        cbt -project p -instance i deletetable split 2>/dev/null
    fi
    echo "round $r: one process $(secs "$t0" "$t1") s, $N tasks (--num_records) $(secs "$t1" "$t2") s (all done)$rows"
    ratios+=("$(/usr/bin/python3 -c "print(($t1 - $t0) / ($t2 - $t1))")")
done
# The tasks share this machine's cores with each other and the emulator:
# the target is that splitting costs little (their wall within 1.5x of
# one process's), not that it speeds anything up here.
echo "RATIO bigtable_tasks_vs_one_process $(/usr/bin/python3 -c "import statistics, sys; print('%.2f' % statistics.median(map(float, sys.argv[1:])))" "${ratios[@]}") 0.67 one process's wall / $N tasks' wall, median of $ROUNDS rounds (tasks within 1.5x)"

for how in num_records read indexes; do
    extra=()
    [ $how = num_records ] && extra=(--num_records="$R")
    [ $how = indexes ] && "$BIN/tfrec" index $G >/dev/null
    t0=$(now)
    JOB_COMPLETION_INDEX=$((N - 1)) TFREC_NUM_TASKS=$N "$BIN/tfrec2bt" --dry_run --quiet \
        --source_glob="$G" "${extra[@]}" >/dev/null 2>"$W/dry.err" ||
        { echo "dry run failed: $(tail -3 "$W/dry.err")"; exit 1; }
    echo "last task, dry run, total from $how: $(secs "$t0" "$(now)") s"
done
