#!/usr/bin/env bash
# imagenet2tfrec split into 2 tasks writing to a bucket (the Cloud Storage
# test server, tests/storage/with_emulator.sh), run side by side as an
# Indexed Job runs them (JOB_COMPLETION_INDEX, TFREC_NUM_TASKS), then
# --merge_manifests reading the parts from the bucket. The objects are read
# back over plain HTTP (not through the library) and compared with a local
# one-process run byte for byte; a shard rewritten with the same size and a
# missing part are named. Only loopback is contacted.
# needs: tfrec-image tfrec-storage
source "$(dirname "$0")/lib/common.sh"
it_storage_emulator "$@"
it_tmpdir storage-tasks
B=gs://tasks-$$
FLAGS=(--train_shards=3 --validation_shards=2 --seed=5 --quiet)

$PY tests/fixtures/make_images.py samples "$T/raw" --train 12 --validation 4 --classes 3 \
    --seed 7 >/dev/null || { echo "FAIL fixture generation"; exit 1; }
"$BIN/imagenet2tfrec" --raw_data_dir="$T/raw" --output_dir="$T/one" "${FLAGS[@]}" ||
    { echo "FAIL the one-process run"; exit 1; }

for i in 0 1; do
    JOB_COMPLETION_INDEX=$i TFREC_NUM_TASKS=2 "$BIN/imagenet2tfrec" --raw_data_dir="$T/raw" \
        --gcs_output_path="$B/out" "${FLAGS[@]}" 2>"$T/err.$i" &
done
st=0
for job in $(jobs -p); do wait "$job" || st=$?; done
if [ "$st" -eq 0 ]; then
    pass "2 tasks to gs:// side by side"
else
    fail "2 tasks to gs://" "exit $st: $(cat "$T/err.0" "$T/err.1" | head -c 400)"
fi

if "$BIN/imagenet2tfrec" --merge_manifests --gcs_output_path="$B/out" 2>"$T/err"; then
    pass "--merge_manifests reads the parts from the bucket"
else
    fail "--merge_manifests on gs://" "$(head -c 400 "$T/err")"
fi

# Every shard and the merged manifest, fetched over plain HTTP.
if $PY - "$STORAGE_EMULATOR_HOST" "$B/out" "$T/one" 2>"$T/err" <<'PYEOF'; then
import json, os, sys, urllib.parse, urllib.request
host, prefix, local = sys.argv[1:4]
bucket, base = prefix[len("gs://"):].split("/", 1)
def get(rel):
    url = "%s/storage/v1/b/%s/o/%s?alt=media" % (host, bucket,
                                                 urllib.parse.quote(base + "/" + rel, safe=""))
    return urllib.request.urlopen(url, timeout=30).read()
shards = 0
for d in ("train", "validation"):
    for f in sorted(os.listdir(os.path.join(local, d))):
        with open(os.path.join(local, d, f), "rb") as fh:
            assert get(d + "/" + f) == fh.read(), f
        shards += 1
assert shards == 5
merged = json.loads(get("manifest.json"))
with open(os.path.join(local, "manifest.json")) as fh:
    one = json.load(fh)
for m in (merged, one):
    m["counts"]["seconds"] = 0
    m["options"]["output_dir"] = "OUT"
assert merged == one, (merged, one)
part = json.loads(get("manifest-task-00001-of-00002.json"))
assert part["task"]["index"] == 1 and len(part["shards"]) == 3, part["task"]
PYEOF
    pass "the tasks' objects are the one-process shards; the merged manifest is its manifest"
else
    fail "objects and manifest vs the local run" "$(tail -3 "$T/err")"
fi

# A shard object rewritten with the same size (another run's bytes): the
# merge reads it, finds another CRC32C than the part's and names the shard
# and the task to re-run; the original bytes put back merge again.
# flip OBJECT: one byte of the object changed in place (same size)
flip() {
    $PY - "$STORAGE_EMULATOR_HOST" "$1" <<'PYEOF'
import sys, urllib.parse, urllib.request
host, name = sys.argv[1:3]
bucket, obj = name[len("gs://"):].split("/", 1)
q = urllib.parse.quote(obj, safe="")
data = bytearray(urllib.request.urlopen("%s/storage/v1/b/%s/o/%s?alt=media" % (host, bucket, q),
                                        timeout=30).read())
data[len(data) // 2] ^= 0x20
req = urllib.request.Request("%s/upload/storage/v1/b/%s/o?uploadType=media&name=%s" % (host, bucket, q),
                             data=bytes(data), headers={"Content-Type": "application/octet-stream"})
urllib.request.urlopen(req, timeout=30).read()
PYEOF
}
flip "$B/out/train/train-00001-of-00003"
"$BIN/imagenet2tfrec" --merge_manifests --gcs_output_path="$B/out" 2>"$T/err"
st=$?
if [ "$st" -ne 0 ] && grep -qF "train/train-00001-of-00003 has CRC32C" "$T/err" &&
    grep -qF "re-run task" "$T/err"; then
    pass "a same-size rewritten shard in the bucket fails the merge, naming it and the task"
else
    fail "same-size shard on gs://" "exit $st: $(head -c 300 "$T/err")"
fi
flip "$B/out/train/train-00001-of-00003"
"$BIN/imagenet2tfrec" --merge_manifests --gcs_output_path="$B/out" 2>"$T/err" &&
    pass "the shard's own bytes back: the merge goes through" ||
    fail "merge after restoring the shard" "$(head -c 300 "$T/err")"

# Without task 0's part the merge names it.
$PY - "$STORAGE_EMULATOR_HOST" "$B/out/manifest-task-00000-of-00002.json" <<'PYEOF'
import sys, urllib.parse, urllib.request
host, name = sys.argv[1:3]
bucket, obj = name[len("gs://"):].split("/", 1)
req = urllib.request.Request("%s/storage/v1/b/%s/o/%s" % (host, bucket, urllib.parse.quote(obj, safe="")),
                             method="DELETE")
urllib.request.urlopen(req, timeout=30).read()
PYEOF
"$BIN/imagenet2tfrec" --merge_manifests --gcs_output_path="$B/out" 2>"$T/err"
st=$?
if [ "$st" -eq 1 ] && grep -qF "task 0 of 2 has no manifest part" "$T/err" &&
    grep -qF -- "--task_index=0" "$T/err"; then
    pass "a missing part in the bucket is named (exit 1)"
else
    fail "missing part on gs://" "exit $st: $(head -c 300 "$T/err")"
fi

it_finish storage_imagenet_tasks
