#!/usr/bin/env bash
# tfrec2bt split into tasks over gs:// objects (Cloud Storage test server
# and Bigtable emulator, loopback only): the total comes from OBJECT.idx
# beside each object when its records tile the object, and a task does not
# read the objects before its share. The first object is overwritten with
# zeros of the same size after indexing (its index still tiles it, any read
# is a CRC error): the last task still loads its share, checked with cbt,
# while the first task, which must read it, fails naming it.
# needs: tfrec-bigtable tfrec-storage
source "$(dirname "$0")/lib/common.sh"
it_storage_emulator "$@"
it_tmpdir bt-tasks-gcs
it_need_cbt
BUCKET=bt-tasks-$$
B=gs://$BUCKET
# upload NAME FILE: the bytes of FILE as object NAME, unframed (a JSON API media upload)
upload() {
    $PY - "$STORAGE_EMULATOR_HOST" "$BUCKET" "$1" "$2" <<'PYEOF'
import sys, urllib.parse, urllib.request
host, bucket, name, path = sys.argv[1:5]
url = "%s/upload/storage/v1/b/%s/o?uploadType=media&name=%s" % (
    host, bucket, urllib.parse.quote(name, safe=""))
req = urllib.request.Request(url, data=open(path, "rb").read(), method="POST",
                             headers={"Content-Type": "application/octet-stream"})
urllib.request.urlopen(req).read()
PYEOF
}

$CHECK gen "$T/d" 3 30 9 0 500 >/dev/null || { echo "FAIL setup: gen"; exit 1; }
ok=1
for k in 0 1 2; do
    f=data-0000$k-of-00003
    "$BIN/tfrec" index "$T/d/$f" >/dev/null 2>>"$T/err" && upload "d/$f" "$T/d/$f" &&
        upload "d/$f.idx" "$T/d/$f.idx" 2>>"$T/err" || ok=0
done
head -c "$(stat -c %s "$T/d/data-00000-of-00003")" /dev/zero >"$T/zero"
upload d/data-00000-of-00003 "$T/zero" || ok=0
[ $ok = 1 ] || { echo "FAIL setup: upload: $(head -c 300 "$T/err")"; exit 1; }

it_bigtable_emulator "$T/emu.log"
t2b() {
    "$BIN/tfrec2bt" --project=p --bigtable_instance=i --bigtable_table=g --create_table --quiet \
        --source_glob="$B/d/data-*-of-00003" "$@"
}
t2b --task_index=2 --num_tasks=3 --progress_file="$T/p2" >"$T/out" 2>"$T/err2"
st=$?
cbt -project p -instance i read g >"$T/g.dump" 2>/dev/null
if [ $st -eq 0 ] && grep -q "task 2 of 3: records 20..29 (10 of 30, counted from fresh .idx files)" "$T/err2" &&
   $CHECK verify "$T/g.dump" "$T/d/manifest.txt" train_ 0 20 30 >"$T/v"; then
    pass gcs_indexes_give_the_total_and_skip_objects_before_the_share
else fail gcs_indexes_give_the_total_and_skip_objects_before_the_share "exit $st: $(cat "$T/err2" "$T/v" | head -c 500)"; fi
t2b --task_index=0 --num_tasks=3 --progress_file="$T/p0" >"$T/out" 2>"$T/err0"
st=$?
if [ $st -eq 1 ] && grep -q "$B/d/data-00000-of-00003" "$T/err0"; then
    pass gcs_task_reading_the_zeroed_object_fails_naming_it
else fail gcs_task_reading_the_zeroed_object_fails_naming_it "exit $st: $(head -c 400 "$T/err0")"; fi

it_finish bigtable_tasks_gcs
