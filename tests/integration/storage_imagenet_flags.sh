#!/usr/bin/env bash
# imagenet2tfrec with every flag of the reference (tensorflow/tpu
# tools/datasets/imagenet_to_gcs.py) written out explicitly, against the
# Cloud Storage test server (tests/storage/with_emulator.sh): --project,
# --gcs_output_path, --local_scratch_dir, --raw_data_dir,
# --imagenet_username, --imagenet_access_key and --gcs_upload in each of its
# spellings (--gcs_upload, --gcs_upload=true, --gcs_upload=false,
# --nogcs_upload). Uploading runs put the local run's bytes in the bucket;
# the others leave the bucket alone and write --local_scratch_dir. Only
# loopback is contacted.
# needs: tfrec-image tfrec-storage
source "$(dirname "$0")/lib/common.sh"
it_storage_emulator "$@"
it_tmpdir storage-imagenet-flags
it_need_bins imagenet2tfrec tfrec
B=gs://imflags-$$
SHARDS=(--train_shards=3 --validation_shards=2 --seed=1 --quiet)
$PY tests/fixtures/make_images.py tree "$T/raw" >/dev/null || { echo "FAIL fixture generation"; exit 1; }
"$BIN/imagenet2tfrec" --raw_data_dir="$T/raw" --output_dir="$T/local" "${SHARDS[@]}" ||
    { echo "FAIL the local reference run"; exit 1; }
local_shards=$(cd "$T/local" && find . -name '*-of-*' | sort)

# uploaded PREFIX: every shard of the local run is in the bucket, same bytes
uploaded() {
    local f
    for f in $local_shards; do
        "$BIN/tfrec" convert -q "$1/${f#./}" "$T/back" 2>"$T/err" || { echo "missing $f"; return 1; }
        cmp -s "$T/back" "$T/local/$f" || { echo "differs: $f"; return 1; }
    done
}
# no_objects PREFIX: nothing below it
no_objects() { ! "$BIN/tfrec" count "$1/*/*" >/dev/null 2>&1; }

REF=(--project=my-project --raw_data_dir="$T/raw" --imagenet_username=user
     --imagenet_access_key=key)
i=0
for spelling in --gcs_upload --gcs_upload=true --gcs_upload=1; do
    i=$((i + 1))
    "$BIN/imagenet2tfrec" "$spelling" --gcs_output_path="$B/up$i" "${REF[@]}" \
        --local_scratch_dir="$T/scratch$i" "${SHARDS[@]}" >"$T/out" 2>"$T/err"
    st=$?
    if [ "$st" -eq 0 ] && why=$(uploaded "$B/up$i"); then
        pass "imagenet2tfrec $spelling --gcs_output_path --project ... uploads the local run's shards"
    else
        fail "imagenet2tfrec $spelling" "exit $st: $(head -c 300 "$T/err") ${why:-}"
    fi
    if grep -q "not built" "$T/err"; then fail "imagenet2tfrec $spelling: stale message"; fi
    # streamed: the scratch directory holds no shard
    if [ -z "$(find "$T/scratch$i" -name '*-of-*' 2>/dev/null)" ]; then
        pass "imagenet2tfrec $spelling: no local scratch copy"
    else
        fail "imagenet2tfrec $spelling left shards in --local_scratch_dir"
    fi
done
i=0
for spelling in --gcs_upload=false --nogcs_upload --gcs_upload=0; do
    i=$((i + 1))
    "$BIN/imagenet2tfrec" "$spelling" --gcs_output_path="$B/local$i" "${REF[@]}" \
        --local_scratch_dir="$T/kept$i" "${SHARDS[@]}" >"$T/out" 2>"$T/err"
    st=$?
    same=1
    for f in $local_shards; do cmp -s "$T/kept$i/$f" "$T/local/$f" || same=0; done
    if [ "$st" -eq 0 ] && [ "$same" -eq 1 ] && no_objects "$B/local$i"; then
        pass "imagenet2tfrec $spelling: the shards stay in --local_scratch_dir, nothing uploaded"
    else
        fail "imagenet2tfrec $spelling" "exit $st, same=$same: $(head -c 300 "$T/err")"
    fi
done
# without --gcs_upload: the default (true) uploads the same way
"$BIN/imagenet2tfrec" --gcs_output_path="$B/default" "${REF[@]}" "${SHARDS[@]}" 2>"$T/err" &&
    uploaded "$B/default" >/dev/null &&
    pass "imagenet2tfrec --gcs_output_path without --gcs_upload uploads (the default)" ||
    fail "imagenet2tfrec default upload" "$(head -c 300 "$T/err")"
# the usage errors name the way out
"$BIN/imagenet2tfrec" --gcs_upload --raw_data_dir="$T/raw" >/dev/null 2>"$T/err"
st=$?
if [ "$st" -eq 2 ] && grep -q -- "pass --nogcs_upload" "$T/err" && ! grep -q "not built" "$T/err"; then
    pass "imagenet2tfrec --gcs_upload without --gcs_output_path: usage error naming --nogcs_upload"
else
    fail "imagenet2tfrec --gcs_upload alone" "exit $st: $(head -c 300 "$T/err")"
fi
"$BIN/imagenet2tfrec" --gcs_upload --gcs_output_path=/tmp/x --raw_data_dir="$T/raw" >/dev/null 2>"$T/err"
st=$?
if [ "$st" -eq 2 ] && grep -q -- "must start with gs://" "$T/err"; then
    pass "imagenet2tfrec --gcs_output_path that is not gs://: usage error"
else
    fail "imagenet2tfrec --gcs_output_path=/tmp/x" "exit $st: $(head -c 300 "$T/err")"
fi
"$BIN/imagenet2tfrec" --gcs_upload=maybe --gcs_output_path="$B/x" --raw_data_dir="$T/raw" >/dev/null 2>"$T/err"
[ $? -eq 2 ] && pass "imagenet2tfrec --gcs_upload=maybe: usage error" ||
    fail "imagenet2tfrec --gcs_upload=maybe" "$(head -c 300 "$T/err")"
it_finish storage_imagenet_flags
