#!/usr/bin/env bash
# What every tool shares (tools/common): gs:// paths refused by every tool
# when the storage part is not built (and by local-only flags always); tfrec's -c/-C compression flags
# read the same in every subcommand; tfrec dump's floats in the shortest
# form that round-trips, cross-checked against Python's struct module.
# Tools of parts this build has not got are left out (and said so).
# Usage: tests/integration/tools_cli.sh [BUILD_DIR]   (or TFREC_BUILD=...)
set -u
cd "$(dirname "$0")/../.."
BUILD=${1:-${TFREC_BUILD:-build}}
BIN=$(cd "$BUILD" && pwd)/bin
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1${2:+: $2}"; fails=$((fails + 1)); }

[ -x "$BIN/tfrec" ] || { echo "FAIL tfrec binary missing at $BIN/tfrec"; exit 1; }

# ---------------------------------------------------------------- gs:// paths
# gs_refused NAME CMD...: exit 2, the message, and no local "gs:" directory
gs_refused() {
    local name=$1
    shift
    (cd "$T/cwd" && "$@") >"$T/out" 2>"$T/err"
    local st=$?
    if [ "$st" -eq 2 ] && grep -qiF "cannot open gs:// names (gs:// names need libtfrec-storage" "$T/err" &&
        [ ! -e "$T/cwd/gs:" ]; then
        pass "gs:// refused: $name"
    else
        fail "gs:// refused: $name" "exit $st, $(head -c 300 "$T/err"); $(ls -A "$T/cwd")"
    fi
}
mkdir -p "$T/cwd" "$T/raw/train/n1" "$T/raw/validation"
$PY - "$T" <<'EOF' || { echo "FAIL fixture generation"; exit 1; }
import sys
sys.path.insert(0, "tests/python")
import tfrecord_ref as ref
ref.write_records(sys.argv[1] + "/recs", [b"abc"] * 3, "NONE")
EOF
# With the storage part the tools take gs:// (tests/integration/storage_tools.sh);
# without it every gs:// name is refused. Either way the flags that need a
# local file refuse it.
if grep -qw tfrec-storage "$BUILD/parts"; then
    echo "storage part built: the tools take gs:// (storage_tools.sh); local-only flags here"
    # local_refused NAME CMD...: exit 2, naming the flag, no local "gs:" directory
    local_refused() {
        local name=$1
        shift
        (cd "$T/cwd" && "$@") >"$T/out" 2>"$T/err"
        local st=$?
        if [ "$st" -eq 2 ] && grep -qF "must be a local path (gs:// is not accepted here)" "$T/err" &&
            [ ! -e "$T/cwd/gs:" ]; then
            pass "gs:// refused for a local-only flag: $name"
        else
            fail "gs:// refused for a local-only flag: $name" "exit $st, $(head -c 300 "$T/err")"
        fi
    }
    if [ -x "$BIN/imagenet2tfrec" ]; then
        local_refused "imagenet2tfrec --csv" "$BIN/imagenet2tfrec" \
            --layout=csv --csv=gs://b/list.csv --output_dir="$T/o"
        local_refused "imagenet2tfrec --labels_file" "$BIN/imagenet2tfrec" \
            --raw_data_dir="$T/raw" --output_dir="$T/o" --labels_file=gs://b/l.txt
    fi
    if [ -x "$BIN/tfrec2bt" ]; then
        local_refused "tfrec2bt --progress_file" "$BIN/tfrec2bt" --project=p --bigtable_instance=i \
            --bigtable_table=t --source_glob="$T/recs" --progress_file=gs://b/p
        local_refused "bt2tfrec --keys_file" "$BIN/bt2tfrec" --project=p --bigtable_instance=i \
            --bigtable_table=t --output="$T/o.tfrecord" --keys_file=gs://b/k
    fi
else
    gs_refused "tfrec count input" "$BIN/tfrec" count gs://b/x
    gs_refused "tfrec verify input (upper case)" "$BIN/tfrec" verify GS://b/x
    gs_refused "tfrec convert output" "$BIN/tfrec" convert "$T/recs" gs://b/out
    gs_refused "tfrec convert -o" "$BIN/tfrec" convert -o gs://b/out "$T/recs"
    gs_refused "tfrec convert input" "$BIN/tfrec" convert gs://b/in "$T/out.tfrecord"
    if [ -x "$BIN/imagenet2tfrec" ]; then
        gs_refused "imagenet2tfrec --local_scratch_dir" "$BIN/imagenet2tfrec" \
            --raw_data_dir="$T/raw" --local_scratch_dir=gs://b/out --nogcs_upload
        gs_refused "imagenet2tfrec --output_dir" "$BIN/imagenet2tfrec" \
            --raw_data_dir="$T/raw" --output_dir=gs://b/out
        gs_refused "imagenet2tfrec --raw_data_dir" "$BIN/imagenet2tfrec" \
            --raw_data_dir=gs://b/raw --output_dir="$T/o"
        gs_refused "imagenet2tfrec --data_dir form" "$BIN/imagenet2tfrec" \
            -raw_data_dir gs://b/raw -local_scratch_dir "$T/o"
        gs_refused "imagenet2tfrec --manifest" "$BIN/imagenet2tfrec" \
            --raw_data_dir="$T/raw" --output_dir="$T/o" --manifest=gs://b/m.json
    else
        echo "imagenet2tfrec not built: its gs:// checks not run here"
    fi
    if [ -x "$BIN/tfrec2bt" ]; then
        gs_refused "tfrec2bt --source_glob" "$BIN/tfrec2bt" --project=p --bigtable_instance=i \
            --bigtable_table=t --source_glob='gs://b/train-*'
        gs_refused "bt2tfrec --output" "$BIN/bt2tfrec" --project=p --bigtable_instance=i \
            --bigtable_table=t --output=gs://b/back.tfrecord
    else
        echo "tfrec2bt/bt2tfrec not built: their gs:// checks not run here"
    fi

fi

# ---------------------------------------------------------------- -c / -C
# Every subcommand that reads: the same -c line in --help, the same values.
want=$("$BIN/tfrec" count --help | grep -A1 -- '-c, --input-compression')
for c in count verify cat head dump stats convert; do
    got=$("$BIN/tfrec" "$c" --help | grep -A1 -- '-c, --input-compression')
    if [ -n "$want" ] && [ "$got" == "$want" ]; then pass "-c reads the same in $c --help"; else fail "-c in $c --help" "'$got'"; fi
    for v in AUTO none Gzip; do
        args=(-c "$v" "$T/recs")
        [ "$c" = convert ] && args+=("$T/conv-$c")
        if [ "$v" = Gzip ]; then w=1; else w=0; fi  # forced GZIP on an uncompressed file: bad data
        "$BIN/tfrec" "$c" "${args[@]}" >/dev/null 2>"$T/err"
        st=$?
        if [ "$st" -eq "$w" ]; then pass "$c -c $v"; else fail "$c -c $v" "exit $st, expected $w: $(head -c 200 "$T/err")"; fi
    done
    "$BIN/tfrec" "$c" --input-compression=LZ4 "$T/recs" "$T/x" >/dev/null 2>"$T/err"
    st=$?
    if [ "$st" -eq 2 ] && grep -qF "unknown compression 'LZ4' (AUTO, NONE, ZLIB or GZIP)" "$T/err"; then
        pass "$c --input-compression=LZ4: the same usage error"
    else
        fail "$c --input-compression=LZ4" "exit $st: $(head -c 200 "$T/err")"
    fi
    # --compression meant the input in some subcommands, the output in
    # convert: refused everywhere with the same message naming both.
    "$BIN/tfrec" "$c" --compression=GZIP "$T/recs" "$T/x" >/dev/null 2>"$T/err"
    st=$?
    if [ "$st" -eq 2 ] && grep -qF -- "-c/--input-compression" "$T/err" &&
        grep -qF -- "-C/--output-compression" "$T/err"; then
        pass "$c --compression is refused as ambiguous"
    else
        fail "$c --compression" "exit $st: $(head -c 200 "$T/err")"
    fi
done
"$BIN/tfrec" convert --help >"$T/out"
if grep -q -- '-C, --output-compression=C *output compression: NONE (default), ZLIB or GZIP' "$T/out"; then
    pass "convert documents -C/--output-compression"
else
    fail "convert -C help" "$(grep -- -C "$T/out")"
fi
if "$BIN/tfrec" convert -q -C GZIP "$T/recs" "$T/c.gz" && "$BIN/tfrec" convert -q -c GZIP -C NONE "$T/c.gz" "$T/c.none" &&
    cmp -s "$T/recs" "$T/c.none"; then
    pass "convert -C GZIP then -c GZIP -C NONE gives the input back"
else
    fail "convert -c/-C round trip"
fi

# ---------------------------------------------------------------- dump floats
# A tf.Example with one float list, encoded by hand; the expected text is
# the shortest of the %.Ng (N = 1..9) whose value read back as a float32
# (struct.pack('f')) is the stored float, computed here in Python.
$PY - "$T" <<'EOF' >"$T/floats.expected" || { echo "FAIL float fixture"; exit 1; }
import struct, sys
sys.path.insert(0, "tests/python")
import tfrecord_ref as ref
vals = [1e-45, 0.1, 1 / 3, 3.4028234663852886e38, 1.1754943508222875e-38, -2.5, 1e10,
        123456.789, 16777216.0, 7e-39, 0.3, 100.0, -0.0]
f32 = [struct.unpack("<f", struct.pack("<f", v))[0] for v in vals]
def shortest(x):
    best = None
    for p in range(1, 10):
        s = "%.*g" % (p, x)
        try:
            if struct.unpack("<f", struct.pack("<f", float(s)))[0] == x and (
                    best is None or len(s) < len(best)):
                best = s
        except OverflowError:  # rounded above the largest float32
            pass
    return best
packed = b"".join(struct.pack("<f", v) for v in f32)
def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out
flist = b"\x0a" + varint(len(packed)) + packed                   # FloatList.value, packed
feature = b"\x12" + varint(len(flist)) + flist                   # Feature.float_list
entry = b"\x0a\x01f" + b"\x12" + varint(len(feature)) + feature  # map entry "f"
feats = b"\x0a" + varint(len(entry)) + entry
ex = b"\x0a" + varint(len(feats)) + feats
ref.write_records(sys.argv[1] + "/floats", [ex], "NONE")
print(",".join(shortest(x) for x in f32))
EOF
"$BIN/tfrec" dump "$T/floats" >"$T/dump" 2>"$T/err"
got=$(sed -n 's/.*"float":\[\([^]]*\)\].*/\1/p' "$T/dump")
want=$(cat "$T/floats.expected")
if [ "$got" == "$want" ]; then pass "dump floats: shortest round-trip form ($got)"; else fail "dump floats" "got '$got', expected '$want'"; fi
case ",$got," in *",1e-45,0.1,"*",100,"*) pass "dump prints 1e-45, 0.1 and 100 as such" ;; *) fail "dump 1e-45 / 0.1 / 100" "$got" ;; esac
if $PY -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/dump"; then pass "dump floats stay valid JSON"; else fail "dump JSON"; fi

# ---------------------------------------------------------------- ulimit -f
# Past the file-size limit a write fails with EFBIG: the tool cleans up and
# says so instead of dying of SIGXFSZ (exit 153) with its temporary file.
$PY -c '
import sys
sys.path.insert(0, "tests/python")
import tfrecord_ref as ref
ref.write_records(sys.argv[1], [bytes(1000)] * 600, "NONE")' "$T/big"
mkdir -p "$T/fsz"
(ulimit -f 64; exec "$BIN/tfrec" convert "$T/big" "$T/fsz/out") >/dev/null 2>"$T/err"
st=$?
if [ "$st" -ne 153 ] && [ "$st" -ne 0 ] && [ -z "$(ls -A "$T/fsz")" ] && grep -qi "too large" "$T/err"; then
    pass "tfrec convert past ulimit -f: exit $st, a message, no file left"
else
    fail "tfrec convert past ulimit -f" "exit $st, $(head -c 300 "$T/err"); $(ls -A "$T/fsz")"
fi
if [ -x "$BIN/imagenet2tfrec" ]; then
    $PY tests/fixtures/make_images.py tree "$T/fszraw" >/dev/null
    mkdir -p "$T/fszout"
    (ulimit -f 16; exec "$BIN/imagenet2tfrec" --raw_data_dir="$T/fszraw" --output_dir="$T/fszout" \
        --train_shards=1 --validation_shards=1 --manifest=) >/dev/null 2>"$T/err"
    st=$?
    if [ "$st" -ne 153 ] && [ "$st" -ne 0 ] && [ -z "$(ls -A "$T/fszout")" ] &&
        grep -qi "too large" "$T/err"; then
        pass "imagenet2tfrec past ulimit -f: exit $st, a message, no staging left"
    else
        fail "imagenet2tfrec past ulimit -f" "exit $st, $(head -c 300 "$T/err"); $(ls -A "$T/fszout")"
    fi
fi

# ---------------------------------------------------------------- log lines
# Every tool's stderr lines, when stderr is a file: "YYYY-MM-DDTHH:MM:SSZ TOOL: message"
# on every line (docs/tools.md, tools/common/log.h); on a terminal "TOOL: message" without the time.
STAMP='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z'
# log_format NAME TOOL CMD...: at least one line, every line stamped and named
log_format() {
    local name=$1 tool=$2
    shift 2
    "$@" >/dev/null 2>"$T/err"
    local lines bad
    lines=$(wc -l <"$T/err")
    bad=$(grep -cvE "$STAMP $tool: " "$T/err")
    if [ "$lines" -ge 1 ] && [ "$bad" -eq 0 ]; then
        pass "log lines to a file: $name ($lines lines, each stamped and named)"
    else
        fail "log lines to a file: $name" "$bad of $lines lines not '<UTC time> $tool: ': $(head -c 300 "$T/err")"
    fi
}
log_format "tfrec: a missing file" tfrec "$BIN/tfrec" count "$T/no-such-file"
log_format "tfrec: an unknown command and its hint" tfrec "$BIN/tfrec" cuont "$T/recs"
cp "$T/recs" "$T/corrupt" && printf 'X' | dd of="$T/corrupt" bs=1 seek=13 conv=notrunc 2>/dev/null
log_format "tfrec: a corrupt region skipped" tfrec "$BIN/tfrec" count --noindex -S "$T/corrupt"
log_format "tfrec count: a usage error" "tfrec count" "$BIN/tfrec" count --bogus "$T/recs"
for tool in tfrec2bt bt2tfrec imagenet2tfrec; do
    [ -x "$BIN/$tool" ] || { echo "($tool not built: its log lines not checked)"; continue; }
    log_format "$tool: a usage error and its hint" "$tool" "$BIN/$tool" --bogus_flag
done
if [ -x "$BIN/tfrec2bt" ]; then
    log_format "tfrec2bt: no matching files" tfrec2bt "$BIN/tfrec2bt" --bigtable_project=p \
        --bigtable_instance=i --bigtable_table=t --source_glob="$T/none-*" \
        --progress_file="$T/none.progress"
fi
if [ -x "$BIN/imagenet2tfrec" ]; then
    log_format "imagenet2tfrec: a missing input directory" imagenet2tfrec "$BIN/imagenet2tfrec" \
        --raw_data_dir="$T/no-raw" --output_dir="$T/no-out"
fi
# On a terminal (script(1) gives the tool one): "TOOL: message", no time.
if command -v script >/dev/null; then
    script -qec "'$BIN/tfrec' count '$T/no-such-file'" /dev/null >"$T/tty" 2>&1
    if grep -q "^tfrec: .*no-such-file" "$T/tty" && ! grep -qE "$STAMP" "$T/tty"; then
        pass "log lines on a terminal: 'tfrec: message', no time"
    else
        fail "log lines on a terminal" "$(head -c 300 "$T/tty")"
    fi
else
    fail "log lines on a terminal" "script(1) (bsdutils) is not installed"
fi

[ "$fails" -eq 0 ]
