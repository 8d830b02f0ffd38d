#!/usr/bin/env bash
# The tools take their task from a training job's environment
# (tfrec_task_resolve, docs/training.md): imagenet2tfrec run as the three
# replicas of a Vertex AI job (CLUSTER_SPEC: a chief and two workers)
# writes, together, the files of one process, each replica the shards
# --task_index=I --num_tasks=3 writes; RANK/WORLD_SIZE likewise; two
# sources that disagree stop tfrec2bt, bt2tfrec and imagenet2tfrec with
# exit 2 and a message naming both, before any work. No network.
# needs: tfrec-image tfrec-bigtable
source "$(dirname "$0")/lib/common.sh"
it_tmpdir training-ids
FLAGS=(--train_shards=5 --validation_shards=2 --seed=5 --quiet)
unset TF_CONFIG CLUSTER_SPEC RANK WORLD_SIZE LOCAL_RANK JOB_COMPLETION_INDEX TFREC_NUM_TASKS

$PY tests/fixtures/make_images.py samples "$T/raw" --train 14 --validation 4 --classes 3 \
    --seed 7 >/dev/null || { echo "FAIL fixture generation"; exit 1; }
"$BIN/imagenet2tfrec" --raw_data_dir="$T/raw" --output_dir="$T/one" "${FLAGS[@]}" ||
    { echo "FAIL the one-process run"; exit 1; }

spec() { # pool index
    printf '{"cluster": {"workerpool0": ["c:2222"], "workerpool1": ["w0:2222", "w1:2222"]}, "task": {"type": "%s", "index": %d}}' "$1" "$2"
}
st=0
CLUSTER_SPEC=$(spec workerpool0 0) "$BIN/imagenet2tfrec" --raw_data_dir="$T/raw" \
    --output_dir="$T/vertex" "${FLAGS[@]}" 2>"$T/err" || st=$?
for i in 0 1; do
    CLUSTER_SPEC=$(spec workerpool1 $i) "$BIN/imagenet2tfrec" --raw_data_dir="$T/raw" \
        --output_dir="$T/vertex" "${FLAGS[@]}" 2>>"$T/err" || st=$?
done
"$BIN/imagenet2tfrec" --raw_data_dir="$T/raw" --output_dir="$T/flag1" --task_index=1 \
    --num_tasks=3 "${FLAGS[@]}" 2>>"$T/err" || st=$?
# the shards of task 1 of 3 (flags) are the ones replica workerpool1/0 wrote
same_share=1
for f in "$T"/flag1/train/* "$T"/flag1/validation/*; do
    [ -f "$f" ] || continue
    cmp -s "$f" "$T/vertex/${f#"$T"/flag1/}" || same_share=0
done
if [ "$st" -eq 0 ] && [ "$same_share" = 1 ] && ls "$T"/flag1/train/* >/dev/null 2>&1 &&
   diff -r "$T/one/train" "$T/vertex/train" >/dev/null &&
   diff -r "$T/one/validation" "$T/vertex/validation" >/dev/null; then
    pass "imagenet2tfrec as 3 CLUSTER_SPEC replicas writes the one-process shards"
else
    fail "imagenet2tfrec under CLUSTER_SPEC" "exit $st same_share $same_share: $(head -c 400 "$T/err")"
fi

st=0
for r in 0 1; do
    RANK=$r WORLD_SIZE=2 "$BIN/imagenet2tfrec" --raw_data_dir="$T/raw" \
        --output_dir="$T/torch" "${FLAGS[@]}" 2>"$T/err" || st=$?
done
if [ "$st" -eq 0 ] && diff -r "$T/one/train" "$T/torch/train" >/dev/null; then
    pass "imagenet2tfrec as 2 torch ranks writes the one-process shards"
else
    fail "imagenet2tfrec under RANK/WORLD_SIZE" "exit $st: $(head -c 400 "$T/err")"
fi

TFC='{"cluster": {"chief": ["c"], "worker": ["a", "b"]}, "task": {"type": "worker", "index": 1}}'
bad=0
for tool in tfrec2bt bt2tfrec imagenet2tfrec; do
    case $tool in
    tfrec2bt) args=(--project=p --bigtable_instance=i --bigtable_table=t --source_glob="$T/x-*") ;;
    bt2tfrec) args=(--project=p --bigtable_instance=i --bigtable_table=t --output="$T/bt") ;;
    imagenet2tfrec) args=(--raw_data_dir="$T/raw" --output_dir="$T/never" "${FLAGS[@]}") ;;
    esac
    TF_CONFIG=$TFC RANK=0 WORLD_SIZE=3 "$BIN/$tool" "${args[@]}" >/dev/null 2>"$T/err.$tool"
    s=$?
    if [ "$s" != 2 ] || ! grep -q "TF_CONFIG says task 2 of 3 but RANK/WORLD_SIZE says task 0 of 3" "$T/err.$tool"; then
        bad=1
        echo "  $tool: exit $s: $(head -c 300 "$T/err.$tool")"
    fi
done
if [ "$bad" = 0 ] && [ ! -e "$T/never" ] && ! ls "$T"/bt* >/dev/null 2>&1; then
    pass "conflicting sources: exit 2 naming both, nothing written"
else
    fail "conflicting sources"
fi

# Flags win: the same conflict with --task_index/--num_tasks given runs.
if TF_CONFIG=$TFC RANK=0 WORLD_SIZE=3 "$BIN/imagenet2tfrec" --raw_data_dir="$T/raw" \
    --output_dir="$T/flags" --task_index=0 --num_tasks=1 "${FLAGS[@]}" 2>"$T/err" &&
   diff -r "$T/one/train" "$T/flags/train" >/dev/null; then
    pass "flags win over the environment"
else
    fail "flags win over the environment" "$(head -c 300 "$T/err")"
fi

it_finish training_task_identity
