#!/usr/bin/env bash
# Split plans and part files against the official Bigtable emulator, whose
# SampleRowKeys answers at random: 5 trials of 3 and of 7 tasks, each with
# one plan, give exactly the one-process bytes (outputs concatenated in task
# order) and pass --merge_parts; split tasks without a plan refuse;
# --split_keys=sample warns; plans for another table / prefix / count are
# refused; a hand-edited plan (checksum fixed) given to one task is caught by
# --merge_parts naming that task, as are a missing output and an output with
# the same size and other bytes; a row without the cell fails by default
# (naming the row) and is skipped and counted with --missing_cell=skip.
# needs: tfrec-bigtable
source "$(dirname "$0")/lib/common.sh"
it_tmpdir bt-plans
cd "$T"

it_need_bins tfrec2bt bt2tfrec
it_bigtable_emulator "$T/emu.log"
b2t() { "$BIN/bt2tfrec" --project=p --bigtable_instance=i --bigtable_table=t --quiet "$@"; }

N=5000
$CHECK gen "$T/d" 2 $N 23 0 600 >/dev/null || { echo "FAIL setup: gen"; exit 1; }
"$BIN/tfrec2bt" --project=p --bigtable_instance=i --bigtable_table=t --quiet --create_table \
    --source_glob="$T/d/data-*" --num_records=$N >"$T/out" 2>"$T/err" ||
    { echo "FAIL setup: load: $(head -c 400 "$T/err")"; exit 1; }

b2t --output="$T/one.tfrecord" 2>"$T/err"
st=$?
if [ $st -eq 0 ] && $CHECK verify-tfrecord "$T/one.tfrecord" "$T/d/manifest.txt" 0 $N >"$T/v"; then
    pass one_process_export
else fail one_process_export "exit $st: $(cat "$T/err" "$T/v" | head -c 400)"; fi

# --- without a plan: every task refuses, naming the fix
refusals=0
for i in 0 1 2; do
    b2t --output="$T/noplan/x" --num_shards=3 --shard_index=$i 2>"$T/err$i"
    st=$?
    if [ $st -eq 2 ] && grep -q -- "--write_split_plan=PLAN --num_shards=3" "$T/err$i" &&
       grep -q -- "--split_plan=PLAN" "$T/err$i"; then refusals=$((refusals + 1)); fi
done
if [ $refusals = 3 ] && [ ! -e "$T/noplan" ]; then pass tasks_without_plan_refuse
else fail tasks_without_plan_refuse "$refusals of 3 refused: $(head -c 400 "$T/err0")"; fi

# --- --split_keys=sample: allowed, with a warning; the merge never stays silent
mkdir -p "$T/sample"
st=0
for i in 0 1 2; do
    b2t --output="$T/sample/x" --num_shards=3 --shard_index=$i --split_keys=sample \
        --keys_file="$T/sample/keys-$i" 2>"$T/serr$i" || st=$?
done
cat "$T"/sample/keys-* >"$T/sample/keys"
cat "$T"/sample/x-0000?-of-00003 >"$T/sample.tfrecord"
b2t --merge_parts="$T/sample/x" >"$T/smerge" 2>&1
mst=$?
if [ $st -eq 0 ] && grep -q "warning: --split_keys=sample" "$T/serr0" &&
   { [ $mst -ne 0 ] || cmp -s "$T/sample.tfrecord" "$T/one.tfrecord"; }; then
    pass sample_split_warns_and_merge_is_never_silent
else fail sample_split_warns_and_merge_is_never_silent "exit $st merge $mst: $(head -c 400 "$T/serr0") $(head -c 300 "$T/smerge")"; fi
sample_caught=$([ $mst -ne 0 ] && echo yes || echo "no (the samples agreed)")
sample_rows=$(wc -l <"$T/sample/keys") sample_distinct=$(sort -u "$T/sample/keys" | wc -l)

# --- the trials: 5 x 3 tasks and 5 x 7 tasks, each with its own plan
runs=0 rows=0 distinct=0 identical=0 merged=0
for n in 3 7; do
    for trial in 1 2 3 4 5; do
        D="$T/t$n-$trial"
        mkdir -p "$D"
        b2t --write_split_plan="$D/plan" --num_shards=$n 2>"$D/perr" ||
            { fail "plan_${n}_$trial" "$(head -c 300 "$D/perr")"; continue; }
        pids=()
        for ((i = 0; i < n; i++)); do
            b2t --output="$D/x" --num_shards=$n --shard_index=$i --split_plan="$D/plan" \
                --keys_file="$D/keys-$i" 2>"$D/err$i" &
            pids+=($!)
        done
        st=0
        for p in "${pids[@]}"; do wait "$p" || st=$?; done
        runs=$((runs + 1))
        files=()
        for ((i = 0; i < n; i++)); do files+=("$(printf '%s/x-%05d-of-%05d' "$D" $i $n)"); done
        cat "${files[@]}" >"$D/all.tfrecord" 2>/dev/null
        cat "$D"/keys-* >"$D/keys" 2>/dev/null
        rows=$((rows + $(wc -l <"$D/keys")))
        distinct=$((distinct + $(sort -u "$D/keys" | wc -l)))
        cmp -s "$D/all.tfrecord" "$T/one.tfrecord" && [ $st -eq 0 ] && identical=$((identical + 1))
        b2t --merge_parts="$D/x" >"$D/merge" 2>&1 && merged=$((merged + 1))
    done
done
echo "trials: $runs runs (5 x 3 tasks, 5 x 7 tasks), $rows rows, $distinct distinct (expected $((10 * N)) each), $identical identical to one process, $merged merges clean; $refusals of 3 tasks without a plan refused; 3 tasks with --split_keys=sample: $sample_rows rows, $sample_distinct distinct, caught by the merge: $sample_caught"
if [ $runs = 10 ] && [ $rows = $((10 * N)) ] && [ $distinct = $((10 * N)) ] && [ $identical = 10 ] &&
   [ $merged = 10 ]; then pass trials_with_plan_give_the_one_process_bytes
else fail trials_with_plan_give_the_one_process_bytes "see the trials line"; fi

# --- the merge against a given plan: the tasks must have run that one
b2t --merge_parts="$T/t3-1" --split_plan="$T/t3-1/plan" >"$T/m1" 2>&1
st1=$?
b2t --merge_parts="$T/t3-1/x.part-*" --split_plan="$T/t3-2/plan" >"$T/m2" 2>&1
st2=$?
if [ $st1 = 0 ] && grep -q "3 tasks, $N rows" "$T/m1" && [ $st2 = 1 ] &&
   grep -q "task 0 of 3 ran split plan .*, the export's plan is" "$T/m2"; then
    pass merge_against_the_given_plan
else fail merge_against_the_given_plan "$st1 $st2: $(cat "$T/m1" "$T/m2" | head -c 500)"; fi

# --- plans for something else are refused
P3="$T/t3-1/plan"
b2t --output="$T/m/x" --num_shards=7 --shard_index=0 --split_plan="$P3" 2>"$T/err"
st1=$?
b2t --output="$T/m/x" --num_shards=3 --shard_index=0 --split_plan="$P3" --row_prefix=validation_ 2>"$T/err2"
st2=$?
"$BIN/bt2tfrec" --project=p --bigtable_instance=i --bigtable_table=other --quiet --output="$T/m/x" \
    --num_shards=3 --shard_index=0 --split_plan="$P3" 2>"$T/err3"
st3=$?
if [ $st1 = 2 ] && grep -q "plan has 3 shards, this read is split into 7" "$T/err" &&
   [ $st2 = 2 ] && grep -q "same prefix" "$T/err2" &&
   [ $st3 = 2 ] && grep -q "tables/t, not projects/p/instances/i/tables/other" "$T/err3"; then
    pass plan_for_other_count_prefix_table_refused
else fail plan_for_other_count_prefix_table_refused "$st1 $st2 $st3: $(cat "$T/err" "$T/err2" "$T/err3" | head -c 600)"; fi

# --- hand-edited plans. edit_cut PLAN K KEY OUT: cut K (1-based) set to KEY,
# checksum recomputed; also a copy with the cut edited and the checksum left.
edit_cut() {
    $PY - "$@" <<'PY'
import sys, zlib
src, k, key, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
lines = open(src, "rb").read().split(b"\n")[:-2]          # drop the crc line
cuts = [i for i, l in enumerate(lines) if l.startswith(b"cut ")]
lines[cuts[k - 1]] = b"cut " + key.encode()
body = b"\n".join(lines) + b"\n"
def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
    return c ^ 0xFFFFFFFF
open(out, "wb").write(body + b"crc32c %08x\n" % crc32c(body))
open(out + ".stale", "wb").write(body + open(src, "rb").read().split(b"\n")[-2] + b"\n")
PY
}
D="$T/t3-1"
cut1=$(sed -n 's/^cut //p' "$D/plan" | sed -n 1p)
cut2=$(sed -n 's/^cut //p' "$D/plan" | sed -n 2p)
for kind in overlap gap; do
    E="$T/edit-$kind"
    mkdir -p "$E"
    # the boundary between tasks 1 and 2 moved down (overlap) or up (gap) in task 2's plan
    # (still above cut 1, so that the edited plan is valid on its own)
    [ $kind = overlap ] && key=${cut1}0 || key=train_4900
    edit_cut "$D/plan" 2 $key "$E/plan"
    st=0
    b2t --output="$E/x" --num_shards=3 --shard_index=0 --split_plan="$D/plan" 2>"$E/err0" || st=$?
    b2t --output="$E/x" --num_shards=3 --shard_index=1 --split_plan="$D/plan" 2>"$E/err1" || st=$?
    b2t --output="$E/x" --num_shards=3 --shard_index=2 --split_plan="$E/plan" 2>"$E/err2" || st=$?
    b2t --merge_parts="$E" >"$E/merge" 2>&1
    mst=$?
    if [ $st = 0 ] && [ $mst = 1 ] && grep -q "tasks 1 and 2 of 3: $kind" "$E/merge" &&
       grep -q "run task 2 again with the shared plan" "$E/merge"; then
        pass "edited_plan_${kind}_caught_by_merge_naming_task_2"
    else fail "edited_plan_${kind}_caught_by_merge_naming_task_2" "cut2=$cut2 exit $st merge $mst: $(head -c 600 "$E/merge") $(head -c 200 "$E/err2")"; fi
done
b2t --output="$T/e/x" --num_shards=3 --shard_index=2 --split_plan="$T/edit-gap/plan.stale" 2>"$T/err"
st1=$?
edit_cut "$D/plan" 1 train_4999 "$T/down.plan"   # cut 1 above cut 2: shards would overlap
b2t --output="$T/e/x" --num_shards=3 --shard_index=0 --split_plan="$T/down.plan" 2>"$T/err2"
st2=$?
head -c 100 "$D/plan" >"$T/cut.plan"
b2t --output="$T/e/x" --num_shards=3 --shard_index=0 --split_plan="$T/cut.plan" 2>"$T/err3"
st3=$?
if [ $st1 = 2 ] && grep -q "checksum mismatch" "$T/err" && [ $st2 = 2 ] &&
   grep -q "cuts must never go down" "$T/err2" && [ $st3 = 2 ] && grep -q "truncated" "$T/err3"; then
    pass bad_plan_files_refused_by_the_task
else fail bad_plan_files_refused_by_the_task "$st1 $st2 $st3: $(cat "$T/err" "$T/err2" "$T/err3" | head -c 600)"; fi

# --- outputs: altered (same size) and missing
D="$T/t3-2"
f1=$(printf '%s/x-%05d-of-%05d' "$D" 1 3)
$PY -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[100]^=1; open(p,'wb').write(b)" "$f1"
b2t --merge_parts="$D/x" >"$D/merge2" 2>&1
st1=$?
rm -f "$(printf '%s/x-%05d-of-%05d' "$D" 2 3)"
b2t --merge_parts="$D/x" >"$D/merge3" 2>&1
st2=$?
if [ $st1 = 1 ] && grep -q "task 1 of 3: output .*x-00001-of-00003 has [0-9]* bytes with CRC32C" "$D/merge2" &&
   grep -q "run task 1 again" "$D/merge2" &&
   [ $st2 = 1 ] && grep -q "task 2 of 3: output .*x-00002-of-00003 cannot be read" "$D/merge3"; then
    pass altered_and_missing_outputs_caught_by_crc_check
else fail altered_and_missing_outputs_caught_by_crc_check "$st1 $st2: $(cat "$D/merge2" "$D/merge3" | head -c 600)"; fi
rm -f "$D/x.part-00001-of-00003"
b2t --merge_parts="$D/x" >"$D/merge4" 2>&1
st=$?
if [ $st = 1 ] && grep -q "task 1 of 3: no part file" "$D/merge4"; then pass missing_part_file_names_the_task
else fail missing_part_file_names_the_task "$st: $(head -c 300 "$D/merge4")"; fi

# --- a row without the cell: an error naming it by default; skipped and counted on request
export BIGTABLE_EMULATOR_HOST
cbt -project p -instance i set t train_2500x tfexample:other=zz >/dev/null 2>"$T/cbt.err" ||
    { fail missing_cell "cbt: $(head -c 200 "$T/cbt.err")"; }
b2t --output="$T/mc-error.tfrecord" 2>"$T/err"
st1=$?
b2t --output="$T/mc-skip.tfrecord" --missing_cell=skip 2>"$T/err2"
st2=$?
"$BIN/bt2tfrec" --project=p --bigtable_instance=i --bigtable_table=t --output="$T/mc-skip.tfrecord" \
    --missing_cell=skip 2>"$T/err3" >/dev/null
if [ $st1 = 1 ] && grep -q "row train_2500x has no tfexample:example cell" "$T/err" &&
   [ ! -e "$T/mc-error.tfrecord" ] && [ $st2 = 0 ] && cmp -s "$T/mc-skip.tfrecord" "$T/one.tfrecord" &&
   grep -q "skipped 1 rows without a tfexample:example cell" "$T/err3"; then
    pass row_without_cell_error_or_skip
else fail row_without_cell_error_or_skip "$st1 $st2: $(cat "$T/err" "$T/err2" "$T/err3" | head -c 500)"; fi

it_finish bigtable_plans
