#!/usr/bin/env bash
# Every tool with gs:// names, against the Cloud Storage test server
# (tests/storage/with_emulator.sh) and, for tfrec2bt / bt2tfrec, the
# Bigtable emulator: tfrec's subcommands on objects and bucket globs (same
# order as local globs), convert writing to a bucket, imagenet2tfrec
# streaming its shards (and removing them when the run fails), tfrec2bt
# --source_glob=gs://... and bt2tfrec --output=gs://... byte-compared with
# the shards; missing objects and patterns (exit 3, the name in the
# message); Ctrl-C during an upload (exit 130, no object); and the same
# tfrec built without the storage part refusing gs:// (exit 2).
# Only loopback is contacted.
# needs: tfrec-storage
source "$(dirname "$0")/lib/common.sh"
it_storage_emulator "$@"
it_tmpdir storage-tools
# expect NAME STATUS PATTERN CMD...: CMD exits STATUS and says PATTERN on stderr
expect() {
    local name=$1 want=$2 says=$3
    shift 3
    "$@" >"$T/out" 2>"$T/err"
    local st=$?
    if [ "$st" -eq "$want" ] && grep -qF -- "$says" "$T/err"; then
        pass "$name"
    else
        fail "$name" "exit $st (want $want), stderr: $(head -c 300 "$T/err")"
    fi
}
# sessions: the test server's resumable sessions (JSON), from its admin port
sessions() {
    $PY -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1] + "/sessions").read().decode())' \
        "$TFREC_TEST_GCS_ADMIN" 2>/dev/null
}
# object_absent NAME: no such object (stat through the Python-free tool)
object_absent() { ! "$BIN/tfrec" count "$1" >/dev/null 2>&1; }
B=gs://tools-$$
# Objects read and written by plain HTTP, not through the library (whose
# sanitizer build Python cannot load): gcs_get OBJECT >FILE, gcs_put OBJECT <FILE.
gcs_http() { # get|put OBJECT
    $PY -c '
import sys, urllib.parse, urllib.request
ep, op, obj = sys.argv[1:4]
bucket, name = obj[len("gs://"):].split("/", 1)
if op == "get":
    url = "%s/storage/v1/b/%s/o/%s?alt=media" % (ep, bucket, urllib.parse.quote(name, safe=""))
    sys.stdout.buffer.write(urllib.request.urlopen(url, timeout=30).read())
else:
    url = "%s/upload/storage/v1/b/%s/o?uploadType=media&name=%s" % (
        ep, bucket, urllib.parse.quote(name, safe=""))
    req = urllib.request.Request(url, data=sys.stdin.buffer.read(), method="POST",
                                 headers={"Content-Type": "application/octet-stream"})
    urllib.request.urlopen(req, timeout=30).read()
' "$STORAGE_EMULATOR_HOST" "$@"
}
gcs_get() { gcs_http get "$1"; }
gcs_put() { gcs_http put "$1"; }

# ---------------------------------------------------------------- fixtures
$PY - "$T" <<'EOF' || { echo "FAIL fixture generation"; exit 1; }
import sys
sys.path.insert(0, "tests/python")
import tfrecord_ref as ref
d = sys.argv[1]
# names whose byte order differs from a natural or locale order
for name, n in (("train-10", 3), ("train-2", 4), ("train-B", 2), ("train-a", 1)):
    ref.write_records("%s/%s" % (d, name), [b"%s/%d" % (name.encode(), i) for i in range(n)],
                      "NONE")
ref.write_records(d + "/big", [bytes([i % 251]) * 100000 for i in range(400)], "NONE")
EOF

# ---------------------------------------------------------------- tfrec
for f in train-10 train-2 train-B train-a; do
    "$BIN/tfrec" convert -q "$T/$f" "$B/data/$f" || fail "convert $f to the bucket"
done
"$BIN/tfrec" convert -q -C GZIP "$T/train-2" "$B/gz/train-2.gz" || fail "convert -C GZIP to the bucket"
(cd "$T" && "$BIN/tfrec" count 'train-*') >"$T/local.count" 2>&1
"$BIN/tfrec" count "$B/data/train-*" >"$T/remote.count" 2>"$T/err"
if [ $? -eq 0 ] && diff <(awk '{print $1}' "$T/local.count") <(awk '{print $1}' "$T/remote.count") >/dev/null &&
    [ "$(awk 'NR==1{print $2}' "$T/remote.count")" = "$B/data/train-10" ] &&
    [ "$(awk 'NR==4{print $2}' "$T/remote.count")" = "$B/data/train-a" ]; then
    pass "tfrec count gs://.../train-*: the objects in byte order, as a local glob"
else
    fail "tfrec count gs:// glob" "$(cat "$T/remote.count" "$T/err")"
fi
for c in verify cat dump stats; do
    (cd "$T" && "$BIN/tfrec" "$c" train-2) >"$T/l.$c" 2>/dev/null
    "$BIN/tfrec" "$c" "$B/data/train-2" >"$T/r.$c" 2>"$T/err"
    st=$?
    # the same output but for the name
    if [ "$st" -eq 0 ] && [ -s "$T/r.$c" ] && diff <(sed "s#$B/data/##g" "$T/r.$c") "$T/l.$c" >/dev/null; then
        pass "tfrec $c on an object: as on the local file"
    else
        fail "tfrec $c on an object" "exit $st: $(head -c 300 "$T/err") $(diff <(sed "s#$B/data/##g" "$T/r.$c") "$T/l.$c" | head -5)"
    fi
done
"$BIN/tfrec" head -n 2 "$B/gz/train-2.gz" >"$T/head" 2>"$T/err"
if [ $? -eq 0 ] && [ "$(wc -l <"$T/head")" -eq 2 ] && grep -q '"text":"train-2/1"' "$T/head"; then
    pass "tfrec head on a GZIP object"
else
    fail "tfrec head on a GZIP object" "$(cat "$T/head" "$T/err" | head -c 300)"
fi
# tfrec index / count on objects: through the file system layer, as on
# local files; the index is OBJECT.idx beside the object, and count reads it.
# (a prefix of its own: data/train-* stays the records alone)
"$BIN/tfrec" convert -q "$T/train-2" "$B/ix/train-2" || fail "convert train-2 to the bucket"
"$BIN/tfrec" index "$B/ix/train-2" >"$T/r.index" 2>"$T/err"
st=$?
cp "$T/train-2" "$T/ix-train-2" && "$BIN/tfrec" index "$T/ix-train-2" >/dev/null 2>&1
if [ "$st" -eq 0 ] && grep -qF "$B/ix/train-2.idx" "$T/r.index" &&
    gcs_get "$B/ix/train-2.idx" >"$T/r.idx" && cmp -s "$T/r.idx" "$T/ix-train-2.idx"; then
    pass "tfrec index gs://...: OBJECT.idx written beside the object, the local index's bytes"
else
    fail "tfrec index gs://" "exit $st: $(cat "$T/r.index") $(head -c 300 "$T/err")"
fi
"$BIN/tfrec" count "$B/ix/train-2" >"$T/r.count" 2>"$T/err"
if [ $? -eq 0 ] && [ "$(awk '{print $1}' "$T/r.count")" = 4 ]; then
    pass "tfrec count gs://... with OBJECT.idx: the records"
else
    fail "tfrec count gs:// with OBJECT.idx" "$(cat "$T/r.count" "$T/err" | head -c 300)"
fi
# tfrec ls on a bucket pattern: sizes from the listing, counts from fresh
# indexes ('index'), read with --count ('counted'), a non-TFRecord object
# ('error' with --count); tfrec cat --raw prints an object's bytes as stored.
printf '{"version": "1.0.0"}\n' | gcs_put "$B/ix/manifest.json"
"$BIN/tfrec" convert -q "$T/train-10" "$B/ix/train-10"
"$BIN/tfrec" ls "$B/ix/*" >"$T/r.ls" 2>"$T/err"
st=$?
size2=$(stat -c %s "$T/train-2")
size10=$(stat -c %s "$T/train-10")
want=$(printf '%s\t-\t-\t%s\n' 21 "$B/ix/manifest.json"
       printf '%s\t-\t-\t%s\n' "$size10" "$B/ix/train-10"
       printf '%s\t4\tindex\t%s\n' "$size2" "$B/ix/train-2"
       printf '%s\t-\t-\t%s\n' "$(stat -c %s "$T/ix-train-2.idx")" "$B/ix/train-2.idx")
if [ "$st" -eq 0 ] && [ "$(head -4 "$T/r.ls")" == "$want" ] && tail -1 "$T/r.ls" | grep -qP '^\d+\t-\t-\ttotal$'; then
    pass "tfrec ls gs://...: sizes, the count from OBJECT.idx, the others not known"
else
    fail "tfrec ls gs://" "exit $st: $(cat "$T/r.ls" "$T/err" | head -c 500)"
fi
"$BIN/tfrec" ls --count "$B/ix/train-*" >"$T/r.ls" 2>"$T/err"
st=$?
if [ "$st" -eq 0 ] && grep -qP "^$size10\t3\tcounted\t$B/ix/train-10\$" "$T/r.ls" &&
    grep -qP "^$size2\t4\tindex\t$B/ix/train-2\$" "$T/r.ls" &&
    grep -qP "^\d+\t-\terror\t$B/ix/train-2.idx\$" "$T/r.ls"; then
    pass "tfrec ls --count gs://...: counted where no index, 'error' for a non-TFRecord object"
else
    fail "tfrec ls --count gs://" "exit $st: $(cat "$T/r.ls" "$T/err" | head -c 500)"
fi
# The data of a bucket pattern that also matches OBJECT.idx: its records,
# the index left out (tfrec's subcommands and tfrec2bt --source_glob alike)
"$BIN/tfrec" count --noindex "$B/ix/train-*" >"$T/r.count" 2>"$T/err"
st=$?
if [ "$st" -eq 0 ] && [ "$(wc -l <"$T/r.count")" -eq 3 ] && grep -qP '^7\ttotal$' "$T/r.count"; then
    pass "tfrec count gs://.../train-* beside train-2.idx: 7 records of 2 objects"
else
    fail "tfrec count gs://.../train-* beside train-2.idx" "exit $st: $(cat "$T/r.count" "$T/err" | head -c 300)"
fi
if [ -x "$BIN/tfrec2bt" ]; then
    "$BIN/tfrec2bt" --source_glob="$B/ix/train-*" --dry_run >"$T/r.dry" 2>"$T/err"
    st=$?
    if [ "$st" -eq 0 ] && grep -q '^dry run: 7 records ' "$T/r.dry"; then
        pass "tfrec2bt --source_glob=gs://.../train-* --dry_run beside train-2.idx: 7 records"
    else
        fail "tfrec2bt --source_glob=gs:// beside an index" "exit $st: $(cat "$T/r.dry" "$T/err" | head -c 300)"
    fi
else
    echo "tfrec2bt not built: its --source_glob=gs:// check beside an index not run here"
fi
"$BIN/tfrec" cat --raw "$B/ix/manifest.json" >"$T/r.manifest" 2>"$T/err"
st=$?
if [ "$st" -eq 0 ] && [ "$(cat "$T/r.manifest")" = '{"version": "1.0.0"}' ]; then
    pass "tfrec cat --raw gs://.../manifest.json: the object's bytes"
else
    fail "tfrec cat --raw gs://" "exit $st: $(head -c 300 "$T/r.manifest" "$T/err")"
fi
expect "tfrec cat --raw of a missing object: exit 3 naming it" 3 "$B/ix/nope.json" \
    "$BIN/tfrec" cat --raw "$B/ix/nope.json"

# gs:// to gs:// and back to a local file: the same bytes as converting locally
"$BIN/tfrec" convert -q "$B/data/train-*" "$B/all" &&
    "$BIN/tfrec" convert -q "$B/all" "$T/all.back" &&
    (cd "$T" && "$BIN/tfrec" convert -q 'train-*' "$T/all.local")
if cmp -s "$T/all.back" "$T/all.local"; then
    pass "tfrec convert bucket glob -> object -> local file: identical to the local conversion"
else
    fail "tfrec convert through the bucket" "files differ"
fi

# ---------------------------------------------------------------- errors
expect "a missing object: exit 3, named" 3 "$B/data/nope" "$BIN/tfrec" count "$B/data/nope"
expect "a pattern matching no object: exit 3, named" 3 "$B/data/none-*" \
    "$BIN/tfrec" count "$B/data/none-*"
expect "convert from a missing object: exit 3" 3 "$B/data/nope" \
    "$BIN/tfrec" convert -q "$B/data/nope" "$B/never"
if object_absent "$B/never"; then pass "a failed convert leaves no object"; else fail "a failed convert left $B/never"; fi
expect "a bucket name that cannot exist: exit 3, named" 3 "gs://Bad..Bucket" \
    "$BIN/tfrec" count "gs://Bad..Bucket/x"

# ---------------------------------------------------------------- Ctrl-C
# A convert from a pipe that keeps it open: SIGINT while the upload is
# under way (the first 16 MiB chunk sent); exit 130 and no object. Job
# control on, so the background job does not start with SIGINT ignored.
set -m
mkfifo "$T/fifo"
(cat "$T/big" "$T/big"; sleep 30) >"$T/fifo" &
feeder=$!
"$BIN/tfrec" convert -q - "$B/interrupted" <"$T/fifo" 2>"$T/int.err" &
conv=$!
for _ in $(seq 1 100); do
    sessions | grep -q '"interrupted"' && break
    sleep 0.1
done
sleep 0.5
kill -INT "$conv"
st=999
for _ in $(seq 1 100); do
    kill -0 "$conv" 2>/dev/null || { wait "$conv"; st=$?; break; }
    sleep 0.1
done
kill "$feeder" 2>/dev/null
wait "$feeder" 2>/dev/null
set +m
if [ "$st" -eq 130 ] && object_absent "$B/interrupted"; then
    pass "Ctrl-C during a gs:// convert: exit 130, no object"
else
    fail "Ctrl-C during a gs:// convert" "exit $st, $(head -c 300 "$T/int.err"); object $(object_absent "$B/interrupted" && echo absent || echo PRESENT)"
fi
sess=$(sessions | grep -o '"name":"interrupted"[^}]*')
if [ -n "$sess" ] && ! echo "$sess" | grep -q '"state":"final"'; then
    pass "the interrupted upload session was never finalized ($(echo "$sess" | grep -o '"state":"[a-z]*"'))"
else
    fail "the interrupted upload session" "${sess:-not found}"
fi

# ---------------------------------------------------------------- imagenet2tfrec
if [ -x "$BIN/imagenet2tfrec" ]; then
    $PY tests/fixtures/make_images.py samples "$T/raw" --train 12 --validation 4 --classes 3 \
        --seed 7 >/dev/null
    (cd "$T" && "$BIN/imagenet2tfrec" --raw_data_dir="$T/raw" --local_scratch_dir="$T/scratch" \
        --gcs_output_path="$B/imagenet" --project=p --train_shards=3 --validation_shards=2 \
        --seed=1 --quiet) 2>"$T/err"
    st=$?
    "$BIN/tfrec" count "$B/imagenet/*/*-of-*" >"$T/shards.count" 2>>"$T/err"
    if [ "$st" -eq 0 ] && [ "$(tail -1 "$T/shards.count" | awk '{print $1}')" = 16 ] &&
        [ "$(grep -c -- '-of-0000' "$T/shards.count")" = 5 ] && [ ! -e "$T/scratch" ] &&
        "$BIN/tfrec" verify -q "$B/imagenet/*/*-of-*" >/dev/null 2>&1; then
        pass "imagenet2tfrec --gcs_output_path: 5 shards, 16 records, streamed (no scratch copy)"
    else
        fail "imagenet2tfrec --gcs_output_path" "exit $st, $(head -c 300 "$T/err") $(cat "$T/shards.count")"
    fi
    # the same shards as a local run
    "$BIN/imagenet2tfrec" --raw_data_dir="$T/raw" --output_dir="$T/local-imnet" --train_shards=3 \
        --validation_shards=2 --seed=1 --quiet
    "$BIN/tfrec" convert -q "$B/imagenet/train/train-00001-of-00003" "$T/shard.back"
    if cmp -s "$T/shard.back" "$T/local-imnet/train/train-00001-of-00003"; then
        pass "imagenet2tfrec to gs:// writes the bytes of the local run"
    else
        fail "imagenet2tfrec to gs:// vs local" "shard differs"
    fi
    # read back by plain HTTP, not through the library (whose sanitizer
    # build Python could not load)
    if $PY -c '
import json, sys, urllib.parse, urllib.request
bucket, name = sys.argv[2][len("gs://"):].split("/", 1)
url = "%s/storage/v1/b/%s/o/%s?alt=media" % (sys.argv[1], bucket,
                                             urllib.parse.quote(name, safe=""))
m = json.loads(urllib.request.urlopen(url, timeout=30).read())
assert m["status"] == "ok" and len(m["shards"]) == 5, m
' "$STORAGE_EMULATOR_HOST" "$B/imagenet/manifest.json" 2>"$T/err"; then
        pass "imagenet2tfrec uploads manifest.json beside the shards"
    else
        fail "imagenet2tfrec manifest in the bucket" "$(tail -3 "$T/err")"
    fi
    # a run that fails in its last shard removes the shards it had uploaded
    cp -r "$T/raw" "$T/raw-bad"
    v=$(ls "$T/raw-bad/validation" | LC_ALL=C sort | tail -1)
    printf 'not a jpeg' >"$T/raw-bad/validation/$v"
    expect "imagenet2tfrec failing mid-upload: exit 1" 1 "$v" \
        "$BIN/imagenet2tfrec" --raw_data_dir="$T/raw-bad" --gcs_output_path="$B/bad" \
        --train_shards=3 --validation_shards=1 --no_shuffle --quiet
    if ! "$BIN/tfrec" count "$B/bad/*/*" >/dev/null 2>&1; then
        pass "imagenet2tfrec failing mid-upload leaves no shard in the bucket"
    else
        fail "imagenet2tfrec failing mid-upload left" "$("$BIN/tfrec" count "$B/bad/*/*" 2>&1)"
    fi
    expect "imagenet2tfrec --gcs_upload without --gcs_output_path names --nogcs_upload" 2 \
        "pass --nogcs_upload" "$BIN/imagenet2tfrec" --raw_data_dir="$T/raw" --gcs_upload
    # A tree in a bucket is read in place (storage_imagenet.sh); an empty
    # prefix names what is missing; --labels_file stays local.
    expect "imagenet2tfrec --raw_data_dir=gs://...: an empty prefix is named" 3 \
        "$B/raw/synset_labels.txt: not found" "$BIN/imagenet2tfrec" --raw_data_dir="$B/raw" --output_dir="$T/o"
    expect "imagenet2tfrec --labels_file=gs://: a local file is needed" 2 \
        "must be a local path" "$BIN/imagenet2tfrec" --raw_data_dir="$T/raw" --labels_file="$B/l.txt" \
        --output_dir="$T/o"
else
    echo "imagenet2tfrec not built: its gs:// checks not run here"
fi

# ---------------------------------------------------------------- Bigtable
if [ -x "$BIN/tfrec2bt" ] && command -v cbt >/dev/null; then
    if it_try_bigtable_emulator "$T/bt.log"; then
        "$BIN/tfrec2bt" --project=p --bigtable_instance=i --bigtable_table=t --create_table \
            --source_glob="$B/data/train-*" --progress_file="$T/t2b.progress" --quiet 2>"$T/err"
        st=$?
        "$BIN/bt2tfrec" --project=p --bigtable_instance=i --bigtable_table=t \
            --output="$B/back.tfrecord" --quiet 2>>"$T/err"
        st2=$?
        "$BIN/tfrec" convert -q "$B/back.tfrecord" "$T/back.local" 2>>"$T/err"
        if [ "$st" -eq 0 ] && [ "$st2" -eq 0 ] && cmp -s "$T/back.local" "$T/all.local"; then
            pass "tfrec2bt --source_glob=gs://... then bt2tfrec --output=gs://...: the records, in order"
        else
            fail "tfrec2bt/bt2tfrec through the bucket" "exit $st/$st2: $(head -c 300 "$T/err")"
        fi
        # --split_keys_file read through the file system layer
        printf 'train-2\ntrain-a\n' >"$T/splits"
        gcs_put "$B/splits.txt" <"$T/splits"
        "$BIN/bt2tfrec" --project=p --bigtable_instance=i --bigtable_table=t \
            --output="$T/split.tfrecord" --split_keys_file="$B/splits.txt" --quiet 2>"$T/err"
        st=$?
        "$BIN/bt2tfrec" --project=p --bigtable_instance=i --bigtable_table=t \
            --output="$T/split-local.tfrecord" --split_keys_file="$T/splits" --quiet 2>>"$T/err"
        if [ "$st" -eq 0 ] && [ $? -eq 0 ] && cmp -s "$T/split.tfrecord" "$T/split-local.tfrecord" &&
            cmp -s "$T/split.tfrecord" "$T/all.local"; then
            pass "bt2tfrec --split_keys_file=gs://...: read through the layer, the records of the local file's split"
        else
            fail "bt2tfrec --split_keys_file=gs://" "exit $st: $(head -c 300 "$T/err")"
        fi
        expect "bt2tfrec --split_keys_file naming no object: exit 3" 3 "split_keys_file=$B/none.txt" \
            "$BIN/bt2tfrec" --project=p --bigtable_instance=i --bigtable_table=t \
            --output="$T/none.tfrecord" --split_keys_file="$B/none.txt" --quiet
        expect "tfrec2bt --source_glob matching no object: exit 3" 3 "$B/data/none-*" \
            "$BIN/tfrec2bt" --project=p --bigtable_instance=i --bigtable_table=t \
            --source_glob="$B/data/none-*" --progress_file="$T/t2b2.progress" --quiet
    else
        fail "Bigtable emulator start" "$(cat "$T/emu.err")"
    fi
else
    echo "tfrec2bt or cbt not available: the Bigtable checks not run here"
fi

# ---------------------------------------------------------------- no storage part
# The same tfrec built without the storage part (its objects without
# TFREC_CLI_HAVE_STORAGE, linked with the core library only): gs:// refused.
CC=${CC:-cc}
mkdir -p "$T/core"
# shellcheck disable=SC2086 # TFREC_EXTRA_CFLAGS: the sanitizer flags of an instrumented build
if $CC -std=c11 -D_GNU_SOURCE -Iinclude -Ilib ${TFREC_EXTRA_CFLAGS:-} -o "$T/core/tfrec" tools/tfrec/*.c \
    $(ls tools/common/*.c | grep -v _image) \
    "$BUILD/libtfrec.a" $(pkg-config --libs zlib libprotobuf-c) $(pkg-config --exists libisal && pkg-config --libs libisal) \
    -pthread -lm 2>"$T/cc.err"; then
    expect "without the storage part: tfrec count gs:// refused (exit 2)" 2 \
        "this build cannot open gs:// names" "$T/core/tfrec" count "$B/data/train-2"
    expect "without the storage part: tfrec convert to gs:// refused (exit 2)" 2 \
        "libtfrec-storage, which is not linked" "$T/core/tfrec" convert "$T/train-2" "$B/x"
else
    fail "building tfrec without the storage part" "$(head -c 300 "$T/cc.err")"
fi

it_finish storage_tools
