#!/usr/bin/env bash
# The tfrec tool's command-line behaviour: exit statuses, --help, globs,
# verify's offsets on corrupt files, head -n, stats, convert.
# Input files come from the independent Python writer (tests/python/tfrecord_ref.py).
# Usage: tests/integration/tfrec_cli.sh [BUILD_DIR]   (or TFREC_BUILD=...)
set -u
cd "$(dirname "$0")/../.."
BUILD=${1:-${TFREC_BUILD:-build}}
TFREC=$(cd "$BUILD" && pwd)/bin/tfrec
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1${2:+: $2}"; fails=$((fails + 1)); }
# expect_status NAME STATUS CMD...: run CMD, check its exit status
expect_status() {
    local name=$1 want=$2
    shift 2
    "$@" >"$T/out" 2>"$T/err"
    local st=$?
    if [ "$st" -eq "$want" ]; then pass "$name"; else fail "$name" "exit $st, expected $want; $(head -c 300 "$T/err")"; fi
}
# expect_out NAME WANT CMD...: stdout must equal WANT exactly
expect_out() {
    local name=$1 want=$2
    shift 2
    local got
    got=$("$@" 2>"$T/err")
    if [ "$got" == "$want" ]; then pass "$name"; else fail "$name" "got '$got', expected '$want'"; fi
}
contains() { # NAME FILE TEXT
    if grep -qF -- "$3" "$2"; then pass "$1"; else fail "$1" "'$3' not in: $(head -c 400 "$2")"; fi
}
matches() { # NAME FILE EXTENDED-REGEX
    if grep -qE -- "$3" "$2"; then pass "$1"; else fail "$1" "/$3/ not in: $(head -c 400 "$2")"; fi
}

[ -x "$TFREC" ] || { echo "FAIL tfrec binary missing at $TFREC"; exit 1; }

# ---------------------------------------------------------------- fixtures
# part-0..2: 10, 20, 30 records of 5..14 bytes, NONE / ZLIB / GZIP.
# examples: 5 tf.Examples. corrupt: 10 records, #3 data flipped, #7 header flipped.
# The Python side prints the offsets it computed.
$PY - "$T" <<'EOF' >"$T/offsets" || { echo "FAIL fixture generation"; exit 1; }
import sys
sys.path.insert(0, "tests/python")
import tfrecord_ref as ref
d = sys.argv[1]
for i, (n, comp) in enumerate([(10, "NONE"), (20, "ZLIB"), (30, "GZIP")]):
    ref.write_records("%s/part-%d" % (d, i), [b"rec-%d-%05d" % (i, j) for j in range(n)], comp)
recs = [b"record %d " % j * (j + 1) for j in range(10)]
data = bytearray(ref.encode_records(recs))
offs, pos = [], 0
for r in recs:
    offs.append(pos)
    pos += 16 + len(r)
data[offs[3] + 12] ^= 1          # data CRC mismatch in record 3
data[offs[7] + 2] ^= 1           # length field of record 7: header CRC mismatch
open(d + "/corrupt", "wb").write(data)
open(d + "/truncated", "wb").write(ref.encode_records(recs)[:-5])
open(d + "/garbage", "wb").write(ref.encode_records(recs[:2]) + b"junk")
# A varint-encoded tf.Example by hand: {"label": int64 [7], "name": bytes ["cat"]}
label = b"\x0a\x05label\x12\x05\x1a\x03\x0a\x01\x07"
name = b"\x0a\x04name\x12\x07\x0a\x05\x0a\x03cat"
feats = b"\x0a" + bytes([len(label)]) + label + b"\x0a" + bytes([len(name)]) + name
ex = b"\x0a" + bytes([len(feats)]) + feats
ref.write_records(d + "/examples", [ex] * 5, "NONE")
print(offs[3], 16 + len(recs[3]), offs[7], len(ref.encode_records(recs)) - 16 - len(recs[9]))
EOF
read -r OFF3 LEN3 OFF7 OFF9 <"$T/offsets"

# ---------------------------------------------------------------- help and usage
expect_status "help exits 0" 0 "$TFREC" --help
for c in count verify cat head dump stats convert; do
    contains "help lists $c" "$T/out" "  $c "
done
contains "help documents exit status 3" "$T/out" "3 I/O or network error"
for c in count verify cat head dump stats convert; do
    expect_status "$c --help exits 0" 0 "$TFREC" "$c" --help
    contains "$c --help shows usage" "$T/out" "Usage: tfrec $c"
done
expect_status "help CMD" 0 "$TFREC" help verify
contains "help CMD shows the command's help" "$T/out" "Usage: tfrec verify"
expect_status "version" 0 "$TFREC" --version
expect_status "no arguments is a usage error" 2 "$TFREC"
expect_status "unknown command is a usage error" 2 "$TFREC" frobnicate
expect_status "unknown option is a usage error" 2 "$TFREC" count --bogus "$T/part-0"
expect_status "no input files is a usage error" 2 "$TFREC" count
expect_status "bad compression name is a usage error" 2 "$TFREC" count -c LZ4 "$T/part-0"
expect_status "bad head -n is a usage error" 2 "$TFREC" head -n ten "$T/part-0"
expect_status "bad level is a usage error" 2 "$TFREC" convert -C GZIP -l 10 "$T/part-0" "$T/x"
expect_status "AUTO output compression is a usage error" 2 "$TFREC" convert -C AUTO "$T/part-0" "$T/x"
expect_status "convert without output is a usage error" 2 "$TFREC" convert "$T/part-0"

# ---------------------------------------------------------------- I/O errors
expect_status "missing file is an I/O error" 3 "$TFREC" count "$T/nope"
contains "missing file is named" "$T/err" "$T/nope"
expect_status "glob without match is an I/O error" 3 "$TFREC" count "$T/none-*"
contains "glob without match is named" "$T/err" "no files match"
expect_status "unwritable output is an I/O error" 3 "$TFREC" convert -q "$T/part-0" "$T/no/such/dir/out"

# ---------------------------------------------------------------- count and globs
expect_out "count one file" "10" "$TFREC" count "$T/part-0"
expect_out "count ZLIB detected" "20" "$TFREC" count "$T/part-1"
expect_out "count GZIP forced" "30" "$TFREC" count --input-compression GZIP "$T/part-2"
expect_out "count glob expanded by tfrec" "$(printf '10\t%s\n20\t%s\n30\t%s\n60\ttotal' "$T/part-0" "$T/part-1" "$T/part-2")" \
    "$TFREC" count "$T/part-*"
expect_out "count bracket glob" "$(printf '10\t%s\n30\t%s\n40\ttotal' "$T/part-0" "$T/part-2")" \
    "$TFREC" count "$T/part-[02]"
expect_out "count stdin" "20" sh -c "'$TFREC' cat --framed '$T/part-1' | '$TFREC' count -"
expect_out "count GZIP detected on stdin" "30" sh -c "'$TFREC' count - < '$T/part-2'"
expect_status "wrong forced compression is a data error" 1 "$TFREC" count -c GZIP "$T/part-0"

# ---------------------------------------------------------------- verify
expect_status "verify clean files" 0 "$TFREC" verify "$T/part-*"
contains "verify says OK" "$T/out" "OK $T/part-2: 30 records, GZIP"
contains "verify summary" "$T/out" "3 files: 3 ok, 0 bad"
expect_status "verify corrupt file exits 1" 1 "$TFREC" verify "$T/corrupt"
contains "verify reports the data CRC region with its offset" "$T/out" \
    "$T/corrupt: bad region at offset $OFF3 ($LEN3 bytes)"
contains "verify reports the header CRC region with its offset" "$T/out" \
    "$T/corrupt: bad region at offset $OFF7"
contains "verify counts both regions" "$T/out" "BAD $T/corrupt: 8 good records, 2 bad regions"
expect_status "verify truncated file exits 1" 1 "$TFREC" verify "$T/truncated"
contains "verify names the truncated record's offset" "$T/out" "$T/truncated: bad region at offset $OFF9"
expect_status "verify trailing garbage exits 1" 1 "$TFREC" verify -q "$T/garbage"
contains "verify trailing garbage" "$T/out" "BAD $T/garbage: 2 good records"
expect_status "verify mix of good and bad exits 1" 1 "$TFREC" verify "$T/part-0" "$T/corrupt"
contains "verify mix summary" "$T/out" "2 files: 1 ok, 1 bad"
expect_status "verify missing and corrupt exits 3" 3 "$TFREC" verify "$T/corrupt" "$T/nope"

# ---------------------------------------------------------------- skip-corrupt
expect_status "count corrupt exits 1" 1 "$TFREC" count "$T/corrupt"
contains "count corrupt names the offset" "$T/err" "$OFF3"
expect_out "count --skip-corrupt" "8" "$TFREC" count --skip-corrupt "$T/corrupt"
contains "skip warning on stderr" "$T/err" "skipped corrupt region at offset $OFF3"

# ---------------------------------------------------------------- head, cat, dump
"$TFREC" head -n 2 "$T/part-0" >"$T/out"
[ "$(wc -l <"$T/out")" -eq 2 ] && pass "head -n 2 prints 2 lines" || fail "head -n 2 prints 2 lines"
contains "head JSON names the record" "$T/out" '"index":1,"offset":27,"length":11'
expect_out "head -n 0 prints nothing" "" "$TFREC" head -n 0 "$T/part-0"
expect_out "head --raw across files" "rec-1-00000rec-1-00001rec-1-00002" \
    sh -c "'$TFREC' head -n 13 --raw '$T/part-0' '$T/part-1' | tail -c 33"
expect_out "head default is 10" "10" sh -c "'$TFREC' head '$T/part-2' | wc -l"
expect_out "head --framed makes a valid file" "4" sh -c "'$TFREC' head -n 4 --framed '$T/part-2' | '$TFREC' count -"
expect_out "cat raw" "rec-0-00000rec-0-00001" sh -c "'$TFREC' cat '$T/part-0' | head -c 22"
expect_out "dump decodes a tf.Example" \
    '{"file":"'"$T"'/examples","index":0,"offset":0,"length":35,"example":{"label":{"int64":[7]},"name":{"bytes":[{"len":3,"b64":"Y2F0","text":"cat"}]}}}' \
    sh -c "'$TFREC' dump '$T/examples' | head -1"
expect_out "dump non-Example as raw" \
    '{"file":"'"$T"'/part-0","index":0,"offset":0,"length":11,"raw":{"len":11,"b64":"cmVjLTAtMDAwMDA=","text":"rec-0-00000"}}' \
    sh -c "'$TFREC' dump --raw '$T/part-0' | head -1"
expect_status "dump stops at corruption with exit 1" 1 "$TFREC" dump "$T/corrupt"
[ "$(wc -l <"$T/out")" -eq 3 ] && pass "dump printed the 3 good records first" || fail "dump printed the 3 good records first"

# ---------------------------------------------------------------- stats
expect_status "stats" 0 "$TFREC" stats "$T/part-*"
contains "stats record count" "$T/out" "records:          60"
contains "stats sizes" "$T/out" "record size:      min 11, mean 11.0, p50 11, p90 11, p99 11, max 11"
contains "stats non-examples" "$T/out" "tf.Example:       0 records (60 not tf.Example)"
expect_status "stats of examples" 0 "$TFREC" stats "$T/examples"
matches "stats feature line int64" "$T/out" "^  label +int64 +5 +1/1.00/1$"
matches "stats feature line bytes" "$T/out" "^  name +bytes +5 +1/1.00/1$"
expect_status "stats --json" 0 "$TFREC" stats --json "$T/examples"
if $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["records"]==5 and [f["key"] for f in d["features"]]==["label","name"]' "$T/out"; then
    pass "stats --json parses"; else fail "stats --json parses"; fi

# ---------------------------------------------------------------- convert
expect_status "convert to GZIP" 0 "$TFREC" convert -q -C GZIP "$T/part-*" "$T/all.gz"
[ "$(head -c 2 "$T/all.gz" | od -An -tx1 | tr -d ' ')" = "1f8b" ] && pass "convert wrote gzip" || fail "convert wrote gzip"
expect_out "converted file has every record" "60" "$TFREC" count "$T/all.gz"
expect_status "convert of a corrupt file exits 1" 1 "$TFREC" convert -q "$T/corrupt" "$T/bad.out"
[ ! -e "$T/bad.out" ] && pass "no partial output after an error" || fail "no partial output after an error"
[ -z "$(ls "$T" | grep 'bad.out')" ] && pass "no temporary file left" || fail "no temporary file left"
expect_status "convert --skip-corrupt" 0 "$TFREC" convert -q --skip-corrupt "$T/corrupt" "$T/salvaged"
expect_out "salvaged records" "8" "$TFREC" count "$T/salvaged"
expect_status "verify salvaged" 0 "$TFREC" verify "$T/salvaged"

# ---------------------------------------------------------------- flag forms
# absl's forms through the shared flag module (tools/common/flags.c)
printf -- '# count GZIP input\n\n--input-compression GZIP\n// and say nothing else\n' >"$T/gzip.flags"
expect_out "--flagfile with comments and '--name value' lines" "30" "$TFREC" count --flagfile="$T/gzip.flags" "$T/part-2"
printf -- '--flagfile=%s\n' "$T/gzip.flags" >"$T/outer.flags"
expect_out "nested --flagfile" "30" "$TFREC" count --flagfile "$T/outer.flags" "$T/part-2"
expect_out "a later flag overrides the flagfile" "10" "$TFREC" count --flagfile="$T/gzip.flags" -c AUTO "$T/part-0"
printf -- '--flagfile=%s\n' "$T/self.flags" >"$T/self.flags"
expect_status "a flagfile including itself is a usage error" 2 "$TFREC" count --flagfile="$T/self.flags" "$T/part-0"
contains "the nesting limit is explained" "$T/err" "nested more than 8 deep"
printf -- '--input-compression=GZIP\n--bogus\n' >"$T/bad.flags"
expect_status "unknown flag in a flagfile is a usage error" 2 "$TFREC" count --flagfile="$T/bad.flags" "$T/part-2"
contains "the flagfile error names file and line" "$T/err" "$T/bad.flags:2: unknown flag --bogus"
expect_status "missing flagfile is a usage error" 2 "$TFREC" count --flagfile="$T/none.flags" "$T/part-0"
expect_out "--flag value form" "2" sh -c "'$TFREC' head --records 2 '$T/part-0' | wc -l"
expect_out "single-dash long form" "3" sh -c "'$TFREC' head -records=3 '$T/part-0' | wc -l"
expect_out "flags after the files" "8" "$TFREC" count "$T/corrupt" --skip-corrupt
expect_out "--flag=yes" "8" "$TFREC" count --skip-corrupt=yes "$T/corrupt"
expect_status "--noflag negates" 1 "$TFREC" count --skip-corrupt --noskip-corrupt "$T/corrupt"
expect_status "bad boolean is a usage error" 2 "$TFREC" count --skip-corrupt=maybe "$T/corrupt"
contains "bad boolean is named" "$T/err" "--skip-corrupt: 'maybe' is not a boolean"
expect_status "unknown flag is a usage error" 2 "$TFREC" count --skip-corupt "$T/corrupt"
contains "unknown flag suggests the nearest" "$T/err" "unknown flag --skip-corupt (did you mean --skip-corrupt?)"
expect_status "size overflow is a usage error" 2 "$TFREC" count --max-record-size=20000000000G "$T/part-0"
contains "size overflow is named" "$T/err" "'20000000000G' is too large"
expect_status "missing value is a usage error" 2 "$TFREC" head "$T/part-0" -n
contains "missing value is named" "$T/err" "-n needs a value"
expect_out "-- ends the flags" "10" "$TFREC" count -- "$T/part-0"
expect_status "count --helpfull" 0 "$TFREC" count --helpfull
contains "helpfull lists --flagfile" "$T/out" "--flagfile=FILE"
contains "help lists the exit-code table" "$T/out" "130 interrupted"
expect_status "count --version" 0 "$TFREC" count --version

# ---------------------------------------------------------------- interrupted
# SIGTERM (a script's background jobs ignore SIGINT) while reading: 130; a
# convert interrupted half-way leaves no output and no temporary file.
sleep 5 | "$TFREC" count - >"$T/out" 2>"$T/err" &
pid=$!
sleep 0.3
kill -TERM $pid
wait $pid
st=$?
[ $st -eq 130 ] && pass "interrupted count exits 130" || fail "interrupted count exits 130" "exit $st"
mkdir "$T/intr"
(cat "$T/part-0"; sleep 2; cat "$T/part-0") | "$TFREC" convert -q - "$T/intr/out" >"$T/out" 2>"$T/err" &
pid=$!
sleep 0.5
kill -TERM $pid
wait $pid
st=$?
if [ $st -eq 130 ] && [ -z "$(ls "$T/intr")" ]; then pass "interrupted convert exits 130, no partial output"
else fail "interrupted convert exits 130, no partial output" "exit $st: $(ls "$T/intr") $(head -c 200 "$T/err")"; fi

# ---------------------------------------------------------------- ls, cat --raw
# ls: sizes, counts from fresh indexes ('index') or read with --count
# ('counted'); a file that is not TFRecord data is 'error' with --count
# (reason on stderr) and '-' without; the total's count only when all known.
mkdir "$T/ls"
$PY - "$T/ls" <<'EOF'
import sys
sys.path.insert(0, "tests/python")
import tfrecord_ref as ref
ref.write_records(sys.argv[1] + "/a", [b"x" * 10] * 5, "NONE")
ref.write_records(sys.argv[1] + "/b", [b"y"] * 3, "GZIP")
EOF
printf '{"version": "1.0.0"}\n' >"$T/ls/manifest.json"
"$TFREC" index "$T/ls/a" >/dev/null 2>&1
sa=$(stat -c %s "$T/ls/a"); sb=$(stat -c %s "$T/ls/b"); si=$(stat -c %s "$T/ls/a.idx")
want=$(printf '%s\t5\tindex\t%s\n' "$sa" "$T/ls/a"
       printf '%s\t-\t-\t%s\n' "$si" "$T/ls/a.idx"
       printf '%s\t-\t-\t%s\n' "$sb" "$T/ls/b"
       printf '21\t-\t-\t%s\n' "$T/ls/manifest.json"
       printf '%s\t-\t-\ttotal\n' $((sa + si + sb + 21)))
expect_out "ls: sizes, the indexed count, the others not known" "$want" "$TFREC" ls "$T/ls/*"
want=$(printf '%s\t5\tindex\t%s\n' "$sa" "$T/ls/a"
       printf '%s\t3\tcounted\t%s\n' "$sb" "$T/ls/b"
       printf '%s\t8\t-\ttotal\n' $((sa + sb)))
expect_out "ls --count: counted where there is no index, the total count" "$want" "$TFREC" ls --count "$T/ls/?"
"$TFREC" ls --count "$T/ls/manifest.json" >"$T/out" 2>"$T/err"
st=$?
if [ $st -eq 0 ] && [ "$(cut -f2,3 "$T/out" | head -1)" = "$(printf -- '-\terror')" ] && grep -q "manifest.json" "$T/err"; then
    pass "ls --count of a non-TFRecord file: 'error', the reason on stderr"
else fail "ls --count of a non-TFRecord file" "exit $st: $(cat "$T/out" "$T/err" | head -c 300)"; fi
expect_status "ls: no match is exit 3" 3 "$TFREC" ls "$T/ls/nomatch*"
expect_status "ls: no pattern is exit 2" 2 "$TFREC" ls
expect_out "cat --raw: a non-TFRecord file's bytes" '{"version": "1.0.0"}' "$TFREC" cat --raw "$T/ls/manifest.json"
if "$TFREC" cat --raw "$T/ls/b" | cmp -s - "$T/ls/b"; then pass "cat --raw: a GZIP file's bytes, not decompressed"
else fail "cat --raw: a GZIP file's bytes"; fi
expect_status "cat --raw: a missing file is exit 3" 3 "$TFREC" cat --raw "$T/ls/nope"

# ---------------------------------------------------- files that are not TFRecord data
# A pattern that also matches manifest.json (or an image, a tarball, notes)
# says what the file is instead of a length CRC with an absurd length.
mkdir -p "$T/other"
printf '{"version": "1.0.0", "shards": []}\n' >"$T/other/manifest.json"
printf '\377\330\377\340\000\020JFIF\000\001\001\000' >"$T/other/img.jpg"
printf 'train-00000-of-00002 1234\n' >"$T/other/notes.txt"
(cd "$T/other" && tar cf "$T/other/pack.tar" manifest.json notes.txt)
head -c 64 /dev/zero | tr '\000' '\252' >"$T/other/damaged"
for k in "manifest.json:JSON" "img.jpg:a JPEG image" "notes.txt:text" "pack.tar:a tar archive"; do
    f=${k%%:*} what=${k#*:}
    "$TFREC" count "$T/other/$f" >/dev/null 2>"$T/err"
    st=$?
    if [ $st -eq 1 ] && grep -q "$f: not a TFRecord file: it starts like $what" "$T/err"; then
        pass "count of $f: not a TFRecord file, starts like $what"
    else fail "count of $f" "exit $st: $(head -c 300 "$T/err")"; fi
done
"$TFREC" count "$T/other/damaged" >/dev/null 2>"$T/err"
st=$?
if [ $st -eq 1 ] && grep -q "bad length CRC in record header at offset 0" "$T/err" &&
   ! grep -q "not a TFRecord file" "$T/err"; then
    pass "count of a damaged record file: the bad length CRC, no guess"
else fail "count of a damaged record file" "exit $st: $(head -c 300 "$T/err")"; fi

echo "tfrec_cli: $fails failed"
[ "$fails" -eq 0 ]
