#!/usr/bin/env bash
# imagenet2tfrec reading its input tree from a bucket
# (--raw_data_dir=gs://...), against the Cloud Storage test server
# (tests/storage/with_emulator.sh). The tree (tests/fixtures/make_images.py:
# every special case, plus a class whose name sorts differently as a path
# prefix) is uploaded with plain HTTP requests from Python, not with the
# library. Checked: the shards from gs:// are byte-identical to those from
# the local tree (local and gs:// output); no image costs a metadata
# request; a 404 for one image mid-run fails the run naming the object; a
# connection cut mid-image resumes and changes no byte; a missing tree or
# labels object is a clear error; the storage-less checks of the library
# (list_input without open_input). Only loopback is contacted.
# needs: tfrec-image tfrec-storage
source "$(dirname "$0")/lib/common.sh"
it_storage_emulator "$@"
it_tmpdir storage-imagenet
# admin PATH [JSON]: GET (or POST JSON to) the test server's admin port
admin() {
    $PY - "$TFREC_TEST_GCS_ADMIN$1" "${2:-}" <<'EOF'
import sys, urllib.request
url, body = sys.argv[1], sys.argv[2]
req = urllib.request.Request(url, data=body.encode() if body else None,
                             headers={"Content-Type": "application/json"})
print(urllib.request.urlopen(req, timeout=30).read().decode())
EOF
}
# same_shards A B: the same shard files with the same bytes
same_shards() {
    local a=$1 b=$2 n=0 f
    for f in $(cd "$a" && find . -name '*-of-*' | sort); do
        cmp -s "$a/$f" "$b/$f" || { echo "differs: $f"; return 1; }
        n=$((n + 1))
    done
    [ "$n" -eq "$(cd "$b" && find . -name '*-of-*' | wc -l)" ] && [ "$n" -gt 0 ] ||
        { echo "shard counts differ ($n)"; return 1; }
}
[ -x "$BIN/imagenet2tfrec" ] || { echo "FAIL imagenet2tfrec is not built"; exit 1; }
BK=imnet-$$
B=gs://$BK
FLAGS=(--train_shards=3 --validation_shards=2 --num_threads=3 --manifest=)

# ---------------------------------------------------------------- fixtures
$PY tests/fixtures/make_images.py tree "$T/raw" >/dev/null || { echo "FAIL fixture generation"; exit 1; }
# "n01484850-b" sorts before "n01484850/" as a path but after "n01484850"
# as a folder name: the listing must not change the order.
mkdir -p "$T/raw/train/n01484850-b"
cp "$T/raw/train/n01484850/n01484850_0.JPEG" "$T/raw/train/n01484850-b/n01484850-b_0.JPEG"
cp "$T/raw/train/n01484850/n01484850_1.JPEG" "$T/raw/train/n01484850-b/n01484850-b_1.JPEG"
# upload DIR PREFIX: every file below DIR as PREFIX/<relative path>
upload() {
    $PY - "$1" "$BK" "$2" <<'EOF'
import os, sys, urllib.parse, urllib.request
root, bucket, prefix = sys.argv[1:4]
ep = os.environ["STORAGE_EMULATOR_HOST"]
for d, _, files in os.walk(root):
    for f in files:
        p = os.path.join(d, f)
        name = prefix + "/" + os.path.relpath(p, root)
        url = "%s/upload/storage/v1/b/%s/o?uploadType=media&name=%s" % (
            ep, bucket, urllib.parse.quote(name, safe=""))
        with open(p, "rb") as fp:
            urllib.request.urlopen(urllib.request.Request(url, data=fp.read(), method="POST")).read()
EOF
}
upload "$T/raw" raw || { echo "FAIL upload of the tree"; exit 1; }

"$BIN/imagenet2tfrec" --raw_data_dir="$T/raw" --output_dir="$T/local" "${FLAGS[@]}" --quiet ||
    { echo "FAIL the local conversion"; exit 1; }

# ---------------------------------------------------------------- the same bytes
admin /reset '{"objects": false}' >/dev/null
if "$BIN/imagenet2tfrec" --raw_data_dir="$B/raw" --output_dir="$T/from-gs" "${FLAGS[@]}" --quiet \
    2>"$T/err" && r=$(same_shards "$T/local" "$T/from-gs"); then
    pass "gs:// input: shards byte-identical to the local tree's"
else
    fail "gs:// input vs local" "${r:-} $(head -c 400 "$T/err")"
fi
# Every image read with media GETs only: no metadata request per object.
admin /log >"$T/log.json"
if $PY - "$T/log.json" <<'EOF'; then
import json, sys
entries = json.load(open(sys.argv[1]))["requests"]
images = [e for e in entries if e["method"] == "GET" and "/o/raw%2F" in e["url"] and
          e["url"].split("?")[0].lower().endswith(("jpeg", "jpg"))]
media = [e for e in images if "alt=media" in e["url"]]
meta = [e for e in images if "alt=media" not in e["url"]]
sys.exit(0 if len(media) >= 30 and not meta else "media %d, metadata %s" % (len(media), meta[:3]))
EOF
    pass "gs:// input: one media GET per image, no metadata requests"
else
    fail "requests of the gs:// run"
fi
r=
if "$BIN/imagenet2tfrec" --raw_data_dir="$B/raw" --output_dir="$B/out" "${FLAGS[@]}" --quiet 2>"$T/err"; then
    mkdir -p "$T/back"
    for s in train/train-00000-of-00003 train/train-00001-of-00003 train/train-00002-of-00003 \
        validation/validation-00000-of-00002 validation/validation-00001-of-00002; do
        mkdir -p "$T/back/$(dirname $s)"
        "$BIN/tfrec" convert -q "$B/out/$s" "$T/back/$s" 2>>"$T/err" || r="$s not readable"
    done
    [ -z "$r" ] && r=$(same_shards "$T/local" "$T/back") && pass "gs:// input and output: the local run's bytes" ||
        fail "gs:// in and out" "$r $(head -c 300 "$T/err")"
else
    fail "gs:// in and out" "$(head -c 400 "$T/err")"
fi

# A local tree with its labels in the bucket: everything read through the
# storage part (local files too), the same bytes.
if "$BIN/imagenet2tfrec" --raw_data_dir="$T/raw" --validation_labels_file="$B/raw/synset_labels.txt" \
    --output_dir="$T/gs-labels" "${FLAGS[@]}" --quiet 2>"$T/err" && r=$(same_shards "$T/local" "$T/gs-labels"); then
    pass "local tree, gs:// --validation_labels_file: the same shards"
else
    fail "gs:// labels with a local tree" "${r:-} $(head -c 400 "$T/err")"
fi

# ---------------------------------------------------------------- tarballs
$PY tests/fixtures/make_tars.py official "$T/raw" "$T/tars" >/dev/null || fail "make_tars.py"
upload "$T/tars" tars || fail "upload of the tarballs"
TARS=(--train_tar="$B/tars/ILSVRC2012_img_train.tar" --validation_tar="$B/tars/ILSVRC2012_img_val.tar"
    --validation_labels="$B/tars/synset_labels.txt")
admin /reset '{"objects": false}' >/dev/null
r=
if "$BIN/imagenet2tfrec" "${TARS[@]}" --output_dir="$T/from-tars" "${FLAGS[@]}" --quiet 2>"$T/err" &&
    r=$(same_shards "$T/local" "$T/from-tars"); then
    pass "gs:// tarballs: shards byte-identical to the local tree's"
else
    fail "gs:// tarballs" "${r:-} $(head -c 400 "$T/err")"
fi
# Each image is one ranged request for exactly its bytes.
admin /log >"$T/log.json"
if $PY - "$T/log.json" "$(ls "$T"/raw/train/*/* "$T"/raw/validation/* | grep -ciE '\.jpe?g$')" <<'EOF'; then
import json, sys
entries = json.load(open(sys.argv[1]))["requests"]
want = int(sys.argv[2])
tars = [e for e in entries if "ILSVRC2012_img_" in e["url"] and e["method"] == "GET"]
# the images, plus a few 2 MiB blocks of the two listing passes
ok = want <= len(tars) <= want + 8 and all(e.get("range") for e in tars)
print("%d requests of the tarballs for %d images" % (len(tars), want))
sys.exit(0 if ok else "not one ranged request per image")
EOF
    pass "gs:// tarballs: one ranged request per image"
else
    fail "requests of the tarball run"
fi
admin /cut '{"direction": "download", "after": 30000, "count": 3, "path": "ILSVRC2012_img_train\\.tar"}' >/dev/null
if "$BIN/imagenet2tfrec" "${TARS[@]}" --output_dir="$T/tars-cut" "${FLAGS[@]}" --quiet 2>"$T/err" &&
    r=$(same_shards "$T/local" "$T/tars-cut") && admin /pending | grep -q '"pending":\[\]'; then
    pass "gs:// tarballs: three connections cut mid-read resume; the shards are unchanged"
else
    fail "gs:// tarballs with cuts" "${r:-} $(head -c 400 "$T/err") $(admin /pending)"
fi
"$BIN/imagenet2tfrec" --train_tar="$B/tars/none.tar" --validation_tar="$B/tars/ILSVRC2012_img_val.tar" \
    --validation_labels="$B/tars/synset_labels.txt" --output_dir="$T/none" "${FLAGS[@]}" --quiet 2>"$T/err"
st=$?
if [ "$st" -eq 3 ] && grep -q "$B/tars/none.tar: not found" "$T/err"; then
    pass "a missing gs:// tarball: exit 3 naming it"
else
    fail "missing gs:// tarball" "exit $st, $(head -c 300 "$T/err")"
fi

# --raw_data_dir=gs://... holding the official tarballs (and the labels),
# as a local directory holding them converts.
r=
if "$BIN/imagenet2tfrec" --raw_data_dir="$B/tars" --output_dir="$T/raw-tars" "${FLAGS[@]}" --quiet \
    2>"$T/err" && r=$(same_shards "$T/local" "$T/raw-tars"); then
    pass "--raw_data_dir=gs:// holding the tarballs: the local tree's shards"
else
    fail "--raw_data_dir=gs:// with tarballs" "${r:-} $(head -c 400 "$T/err")"
fi
# One tarball alone converts its split and says which one was skipped.
mkdir -p "$T/train-only" && cp "$T/tars/ILSVRC2012_img_train.tar" "$T/train-only/"
upload "$T/train-only" train-only || fail "upload of the train tarball"
same_train() {
    local f
    for f in train-00000-of-00003 train-00001-of-00003 train-00002-of-00003; do
        cmp -s "$T/local/train/$f" "$1/train/$f" || return 1
    done
}
if "$BIN/imagenet2tfrec" --raw_data_dir="$B/train-only" --output_dir="$T/train-out" "${FLAGS[@]}" \
    2>"$T/err" && [ ! -e "$T/train-out/validation" ] && same_train "$T/train-out" &&
    grep -q "validation split is skipped: no --validation_tar and no ILSVRC2012_img_val.tar in $B/train-only" "$T/err"; then
    pass "--raw_data_dir=gs:// with the train tarball alone: the train split, the validation split named as skipped"
else
    fail "train tarball alone" "$(head -c 400 "$T/err")"
fi
if "$BIN/imagenet2tfrec" --validation_tar="$B/tars/ILSVRC2012_img_val.tar" \
    --validation_labels="$B/tars/synset_labels.txt" --output_dir="$T/val-only" "${FLAGS[@]}" 2>"$T/err" &&
    [ ! -e "$T/val-only/train" ] && [ -s "$T/val-only/validation/validation-00001-of-00002" ] &&
    grep -q "train split is skipped: no --train_tar given" "$T/err"; then
    pass "--validation_tar alone: the validation split, the train split named as skipped"
else
    fail "validation tarball alone" "$(head -c 400 "$T/err")"
fi

# ---------------------------------------------------------------- faults
# A connection cut inside the large image: resumed where it stopped.
admin /cut '{"direction": "download", "after": 20000, "path": "n02105855_large\\.JPEG\\?alt=media"}' >/dev/null
if "$BIN/imagenet2tfrec" --raw_data_dir="$B/raw" --output_dir="$T/cut" "${FLAGS[@]}" --quiet 2>"$T/err" &&
    r=$(same_shards "$T/local" "$T/cut") && admin /pending | grep -q '"pending":\[\]'; then
    pass "a connection cut mid-image resumes; the shards are unchanged"
else
    fail "cut mid-image" "${r:-} $(head -c 400 "$T/err") $(admin /pending)"
fi
# One image answered 404 after the listing saw it: the run fails naming it.
admin /inject '{"status": 404, "count": 1, "method": "GET", "path": "n01484850_3\\.JPEG\\?alt=media"}' >/dev/null
"$BIN/imagenet2tfrec" --raw_data_dir="$B/raw" --output_dir="$T/gone" "${FLAGS[@]}" --quiet 2>"$T/err"
st=$?
if [ "$st" -ne 0 ] && grep -q "$B/raw/train/n01484850/n01484850_3.JPEG" "$T/err" &&
    grep -qi "not found" "$T/err" && ! find "$T/gone" -name '*-of-*' 2>/dev/null | grep -q .; then
    pass "a 404 mid-run: exit $st, the object named, no shard in place"
else
    fail "404 mid-run" "exit $st, $(head -c 400 "$T/err")"
fi
# The same with --on_error=skip: the image is left out and listed.
admin /inject '{"status": 404, "count": 1, "method": "GET", "path": "n01484850_3\\.JPEG\\?alt=media"}' >/dev/null
if "$BIN/imagenet2tfrec" --raw_data_dir="$B/raw" --output_dir="$T/skip" "${FLAGS[@]}" --on_error=skip \
    2>"$T/err" && grep -q "rejected $B/raw/train/n01484850/n01484850_3.JPEG" "$T/err" &&
    [ "$("$BIN/tfrec" count "$T/skip/train/*" | awk '/total/{print $1}')" = \
        "$(( $("$BIN/tfrec" count "$T/local/train/*" | awk '/total/{print $1}') - 1 ))" ]; then
    pass "a 404 with --on_error=skip: one image fewer, reported"
else
    fail "404 with --on_error=skip" "$(head -c 400 "$T/err")"
fi

# ---------------------------------------------------------------- missing input
"$BIN/imagenet2tfrec" --raw_data_dir="$B/nothing-here" --output_dir="$T/none" "${FLAGS[@]}" --quiet 2>"$T/err"
st=$?
if [ "$st" -ne 0 ] && grep -q "$B/nothing-here/synset_labels.txt" "$T/err"; then
    pass "an empty prefix: exit $st naming what is missing"
else
    fail "empty prefix" "exit $st, $(head -c 300 "$T/err")"
fi
upload "$T/raw/validation" nolabels/validation && upload "$T/raw/train" nolabels/train
"$BIN/imagenet2tfrec" --raw_data_dir="$B/nolabels" --output_dir="$T/none" "${FLAGS[@]}" --quiet 2>"$T/err"
st=$?
if [ "$st" -ne 0 ] && grep -q "$B/nolabels/synset_labels.txt: not found" "$T/err"; then
    pass "no synset_labels.txt object: exit $st naming it"
else
    fail "missing labels object" "exit $st, $(head -c 300 "$T/err")"
fi
echo "$B/raw/validation/ILSVRC2012_val_00000001.JPEG,n01484850" >"$T/x.csv"
"$BIN/imagenet2tfrec" --raw_data_dir="$B/raw" --layout=csv --csv="$T/x.csv" --output_dir="$T/none" \
    "${FLAGS[@]}" --quiet 2>"$T/err"
st=$?
if [ "$st" -ne 0 ] && grep -q "not from a CSV list" "$T/err"; then
    pass "--layout=csv with a gs:// --raw_data_dir: refused (exit $st)"
else
    fail "csv with gs:// raw_data_dir" "exit $st, $(head -c 300 "$T/err")"
fi

it_finish storage_imagenet
