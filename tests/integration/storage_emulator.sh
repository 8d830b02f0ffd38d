#!/usr/bin/env bash
# Self-test of the Cloud Storage test server (tests/storage/gcs_emulator.js)
# with curl: the compatibility layer behaves like Cloud Storage (chunked
# resumable uploads with 308 + Range, status queries, cancel, 416, hashes
# checked at finalize, generations) and every test control works.
# needs: tfrec-storage
set -u
cd "$(dirname "$0")/../.."
if [ "${1:-}" != --inside ]; then
    exec tests/storage/with_emulator.sh bash "$0" --inside
fi
E=$STORAGE_EMULATOR_HOST
A=$TFREC_TEST_GCS_ADMIN
PY=/usr/bin/python3
T=$(mktemp -d /tmp/tfrec-gcs-selftest.XXXXXX)
trap 'rm -rf "$T"' EXIT
failures=0
pass() { echo "PASS $1"; }
fail() {
    echo "FAIL $1: $2"
    failures=$((failures + 1))
}
check() { # name condition-description actual expected
    if [ "$3" = "$4" ]; then pass "$1"; else fail "$1" "$2: got '$3', want '$4'"; fi
}

# code METHOD URL [curl args...]: prints the HTTP status; headers in $T/h, body in $T/b
code() {
    local m=$1 u=$2
    shift 2
    curl -s -o "$T/b" -D "$T/h" -w '%{http_code}' -X "$m" "$@" "$u"
}
header() { grep -i "^$1:" "$T/h" | head -1 | cut -d' ' -f2- | tr -d '\r'; }
admin() { curl -s -X POST -H 'Content-Type: application/json' --data "$2" "$A/$1" >/dev/null; }
crc_b64() { $PY -c 'import base64,crc32c,sys; print(base64.b64encode(crc32c.crc32c(open(sys.argv[1],"rb").read()).to_bytes(4,"big")).decode())' "$1"; }
md5_b64() { $PY -c 'import base64,hashlib,sys; print(base64.b64encode(hashlib.md5(open(sys.argv[1],"rb").read()).digest()).decode())' "$1"; }
json() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"d": d}))' "$T/b" "$1"; }
start_session() { # name [metadata-json]: prints the session URL
    curl -s -D - -o /dev/null -X POST -H 'Content-Type: application/json' --data "${2:-{\}}" \
        "$E/upload/storage/v1/b/bkt/o?uploadType=resumable&name=$1" | grep -i '^location:' | cut -d' ' -f2 | tr -d '\r'
}
put_range() { # url file offset length content-range
    dd if="$2" bs=4096 skip="$3" count="$4" iflag=skip_bytes,count_bytes status=none >"$T/chunk"
    code PUT "$1" -H "Content-Range: $5" --data-binary @"$T/chunk"
}

# The server's own CRC32C (slicing-by-8 over aligned words) against the
# bit-by-bit definition, for every length up to 40 at every alignment.
out=$(node -e '
const c = require("./tests/storage/lib/crc32c.js");
const ref = (b) => { let r = ~0; for (const x of b) { r ^= x; for (let k = 0; k < 8; k++) r = r & 1 ? (r >>> 1) ^ 0x82f63b78 : r >>> 1; } return ~r >>> 0; };
const big = Buffer.alloc(64); for (let i = 0; i < 64; i++) big[i] = i * 37 + 11;
let bad = 0;
for (let off = 0; off < 8; off++) for (let n = 0; n <= 40; n++) {
  const b = big.subarray(off, off + n);
  if (c.update(0, b) !== ref(b)) bad++;
  if (n > 3 && c.update(c.update(0, b.subarray(0, 3)), b.subarray(3)) !== ref(b)) bad++;
}
console.log(bad, c.update(0, Buffer.from("123456789")).toString(16));' 2>&1)
check "server CRC32C at every length and alignment" "mismatches, check value" "$out" "0 e3069283"

KI=262144
head -c $((3 * KI + 1000)) /dev/urandom >"$T/big"
size=$(stat -c %s "$T/big")

# --- a chunked resumable upload: 308 + Range until the last chunk
url=$(start_session chunked.bin)
[ -n "$url" ] || fail "resumable start" "no Location header"
st=$(put_range "$url" "$T/big" 0 $KI "bytes 0-$((KI - 1))/*")
check "first chunk gets 308" status "$st" 308
check "first chunk Range" Range "$(header Range)" "bytes=0-$((KI - 1))"
st=$(code GET "$E/storage/v1/b/bkt/o/chunked.bin")
check "no object before the last chunk" status "$st" 404
# An unaligned non-final chunk: only whole 256 KiB units are committed.
st=$(put_range "$url" "$T/big" $KI $((KI + 5000)) "bytes $KI-$((2 * KI + 4999))/*")
check "unaligned chunk commits whole units" "status Range" "$st $(header Range)" "308 bytes=0-$((2 * KI - 1))"
st=$(code PUT "$url" -H 'Content-Range: bytes */*')
check "status query" "status Range" "$st $(header Range)" "308 bytes=0-$((2 * KI - 1))"
# Resend from a byte already committed (overlap is skipped, like the service).
st=$(put_range "$url" "$T/big" $((KI + 100)) $((size - KI - 100)) "bytes $((KI + 100))-$((size - 1))/$size")
check "last chunk (overlapping) finalizes" status "$st" 200
check "final size" size "$(json 'd["size"]')" "$size"
check "final crc32c" crc32c "$(json 'd["crc32c"]')" "$(crc_b64 "$T/big")"
st=$(code PUT "$url" -H "Content-Range: bytes */$size")
check "status query after finalize" status "$st" 200
code GET "$E/download/storage/v1/b/bkt/o/chunked.bin?alt=media" >/dev/null
if cmp -s "$T/b" "$T/big"; then pass "chunked upload reads back"; else fail "chunked upload reads back" "bytes differ"; fi
check "x-goog-hash" x-goog-hash "$(header x-goog-hash)" "crc32c=$(crc_b64 "$T/big"),md5=$(md5_b64 "$T/big")"

# A gap (chunk after the committed bytes) is refused; a status query with the
# total finalizes a session that has all the bytes.
url=$(start_session gap.bin)
st=$(put_range "$url" "$T/big" $KI $KI "bytes $KI-$((2 * KI - 1))/*")
check "chunk past the committed bytes" status "$st" 400
st=$(put_range "$url" "$T/big" 0 $KI "bytes 0-$((KI - 1))/*")
st=$(code PUT "$url" -H "Content-Range: bytes */$KI")
check "status query with the total finalizes" "status size" "$st $(json 'd["size"]')" "200 $KI"

# --- cancel
url=$(start_session cancelled.bin)
put_range "$url" "$T/big" 0 $KI "bytes 0-$((KI - 1))/*" >/dev/null
st=$(code DELETE "$url")
check "DELETE cancels the session" status "$st" 499
st=$(put_range "$url" "$T/big" $KI 10 "bytes $KI-$((KI + 9))/$((KI + 10))")
check "a cancelled session takes no more chunks" status "$st" 499
st=$(code GET "$E/storage/v1/b/bkt/o/cancelled.bin")
check "a cancelled upload leaves no object" status "$st" 404
st=$(code PUT "$E/upload/storage/v1/b/bkt/o?uploadType=resumable&upload_id=nosuch" -H 'Content-Range: bytes */*')
check "unknown session" status "$st" 404

# --- ranges
st=$(code GET "$E/download/storage/v1/b/bkt/o/chunked.bin?alt=media" -H "Range: bytes=$size-")
check "Range at the end is 416" "status Content-Range" "$st $(header Content-Range)" "416 bytes */$size"
st=$(code GET "$E/storage/v1/b/bkt/o/chunked.bin?alt=media" -H "Range: bytes=$((size + 5))-$((size + 10))")
check "Range past the end is 416" status "$st" 416
st=$(code GET "$E/download/storage/v1/b/bkt/o/chunked.bin?alt=media" -H "Range: bytes=100-199")
dd if="$T/big" bs=1 skip=100 count=100 status=none >"$T/want"
if [ "$st" = 206 ] && cmp -s "$T/b" "$T/want" && [ "$(header Content-Range)" = "bytes 100-199/$size" ]; then
    pass "ranged read"
else fail "ranged read" "status $st, Content-Range $(header Content-Range)"; fi
st=$(code GET "$E/download/storage/v1/b/bkt/o/chunked.bin?alt=media" -H "Range: bytes=-10")
check "suffix range" "status length" "$st $(stat -c %s "$T/b")" "206 10"

# --- hashes checked at finalize
printf 'some bytes' >"$T/small"
url=$(start_session badcrc.bin '{"crc32c":"AAAAAA=="}')
st=$(code PUT "$url" -H 'Content-Range: bytes 0-9/10' --data-binary @"$T/small")
check "resumable crc32c mismatch rejected" status "$st" 400
st=$(code GET "$E/storage/v1/b/bkt/o/badcrc.bin")
check "no object after a crc32c mismatch" status "$st" 404
url=$(start_session goodcrc.bin "{\"crc32c\":\"$(crc_b64 "$T/small")\"}")
st=$(code PUT "$url" -H 'Content-Range: bytes 0-9/10' --data-binary @"$T/small")
check "resumable with the right crc32c" status "$st" 200
url=$(start_session badmd5.bin)
st=$(code PUT "$url" -H 'Content-Range: bytes 0-9/10' -H 'X-Goog-Hash: md5=AAAAAAAAAAAAAAAAAAAAAA==' --data-binary @"$T/small")
check "X-Goog-Hash md5 mismatch rejected" status "$st" 400
printf -- '--XX\r\nContent-Type: application/json\r\n\r\n{"name":"mp.bin","crc32c":"AAAAAA=="}\r\n--XX\r\nContent-Type: application/octet-stream\r\n\r\nsome bytes\r\n--XX--\r\n' >"$T/mp"
st=$(code POST "$E/upload/storage/v1/b/bkt/o?uploadType=multipart" -H 'Content-Type: multipart/related; boundary=XX' --data-binary @"$T/mp")
check "multipart crc32c mismatch rejected" status "$st" 400
sed -i "s|AAAAAA==|$(crc_b64 "$T/small")|" "$T/mp"
st=$(code POST "$E/upload/storage/v1/b/bkt/o?uploadType=multipart" -H 'Content-Type: multipart/related; boundary=XX' --data-binary @"$T/mp")
check "multipart upload" "status size" "$st $(json 'd["size"]')" "200 10"

# --- generations
st=$(code POST "$E/upload/storage/v1/b/bkt/o?uploadType=media&name=gen.bin" --data-binary @"$T/small")
gen1=$(json 'd["generation"]')
st=$(code POST "$E/upload/storage/v1/b/bkt/o?uploadType=media&name=gen.bin&ifGenerationMatch=0" --data-binary @"$T/small")
check "ifGenerationMatch=0 on an existing object" status "$st" 412
st=$(code POST "$E/upload/storage/v1/b/bkt/o?uploadType=media&name=gen.bin&ifGenerationMatch=$gen1" --data-binary @"$T/big")
gen2=$(json 'd["generation"]')
[ "$st" = 200 ] && [ "$gen2" -gt "$gen1" ] && pass "overwrite gets a newer generation" ||
    fail "overwrite gets a newer generation" "status $st, $gen1 -> $gen2"
st=$(code GET "$E/download/storage/v1/b/bkt/o/gen.bin?alt=media&generation=$gen1")
check "an old generation is gone" status "$st" 404
st=$(code GET "$E/download/storage/v1/b/bkt/o/gen.bin?alt=media&generation=$gen2")
check "the current generation reads" status "$st" 200

# --- fault injection
admin inject '{"status": 503, "count": 2, "method": "GET", "path": "/o/chunked\\.bin\\?alt=media", "retry_after": 1}'
s1=$(code GET "$E/download/storage/v1/b/bkt/o/chunked.bin?alt=media")
ra=$(header Retry-After)
s2=$(code GET "$E/download/storage/v1/b/bkt/o/chunked.bin?alt=media")
s3=$(code GET "$E/download/storage/v1/b/bkt/o/chunked.bin?alt=media")
check "injected 503 x2, then served" statuses "$s1 $s2 $s3 $ra" "503 503 200 1"
admin inject '{"status": 429, "method": "PUT"}'
st=$(code GET "$E/storage/v1/b/bkt/o/chunked.bin")
check "injection matches its method only" status "$st" 200
url=$(start_session injected.bin)
st=$(code PUT "$url" -H 'Content-Range: bytes 0-9/10' --data-binary @"$T/small")
check "injected 429 on PUT" status "$st" 429
check "all injections consumed" pending "$(curl -s "$A/pending")" '{"pending":[]}'

# --- connection cuts
admin cut '{"direction": "download", "after": 100000}'
curl -s -o "$T/cut" "$E/download/storage/v1/b/bkt/o/chunked.bin?alt=media"
rc=$?
check "download cut after 100000 bytes" "curl status, bytes" "$rc $(stat -c %s "$T/cut")" "18 100000"
url=$(start_session cutup.bin)
admin cut "{\"direction\": \"upload\", \"after\": $((KI + 1000)), \"path\": \"upload_id\"}"
put_range "$url" "$T/big" 0 $((3 * KI)) "bytes 0-$((3 * KI - 1))/*" >/dev/null
st=$(code PUT "$url" -H 'Content-Range: bytes */*')
check "upload cut keeps whole units" "status Range" "$st $(header Range)" "308 bytes=0-$((KI - 1))"
st=$(put_range "$url" "$T/big" $KI $((size - KI)) "bytes $KI-$((size - 1))/$size")
check "upload resumes after a cut" "status crc32c" "$st $(json 'd["crc32c"]')" "200 $(crc_b64 "$T/big")"

# --- corruption keeps the recorded crc32c
curl -s -X POST -H 'Content-Type: application/json' --data '{"bucket": "bkt", "object": "chunked.bin", "offset": 5}' "$A/corrupt" >"$T/c"
code GET "$E/download/storage/v1/b/bkt/o/chunked.bin?alt=media" >/dev/null
if ! cmp -s "$T/b" "$T/big" && [ "$(header x-goog-hash)" = "crc32c=$(crc_b64 "$T/big"),md5=$(md5_b64 "$T/big")" ] &&
    [ "$(cmp -l "$T/b" "$T/big" | wc -l)" = 1 ]; then
    pass "corrupt flips one byte, hashes unchanged"
else fail "corrupt flips one byte, hashes unchanged" "$(cat "$T/c")"; fi

# --- list pages
for i in 1 2 3 4 5; do
    curl -s -o /dev/null -X POST --data-binary @"$T/small" "$E/upload/storage/v1/b/lst/o?uploadType=media&name=p/s$i"
done
admin list-cap '{"max_results": 2}'
names=
token=
pages=0
while :; do
    code GET "$E/storage/v1/b/lst/o?prefix=p/${token:+&pageToken=$token}" >/dev/null
    pages=$((pages + 1))
    names="$names$(json '" ".join(i["name"] for i in d.get("items", []))') "
    token=$(json 'd.get("nextPageToken", "")')
    [ -n "$token" ] && [ $pages -lt 10 ] || break
done
check "list-cap forces pages" "pages, names" "$pages $(echo $names)" "3 p/s1 p/s2 p/s3 p/s4 p/s5"
admin list-cap '{"max_results": 0}'

# --- the TCP cut proxy (tests/tools/cut_proxy.py) in front of the server
$PY tests/tools/cut_proxy.py --target "${E#http://}" --cuts down:100000,up:5000,refuse,none,down:1000/fin \
    --max-seconds 120 >"$T/proxy.out" 2>&1 &
proxy_pid=$!
for _ in $(seq 100); do grep -q 'port=' "$T/proxy.out" && break; sleep 0.1; done
PP=$(sed -n 's/.*port=\([0-9]*\) .*/\1/p' "$T/proxy.out")
PC=$(sed -n 's/.*control=//p' "$T/proxy.out")
X=http://127.0.0.1:$PP
if [ -z "$PP" ]; then
    fail "cut proxy starts" "$(cat "$T/proxy.out")"
else
    curl -s -o /dev/null -X POST --data-binary @"$T/big" "$E/upload/storage/v1/b/px/o?uploadType=media&name=o"
    curl -s -o "$T/p1" "$X/download/storage/v1/b/px/o/o?alt=media"
    rc=$?
    # 100000 bytes in all: the response headers, then the body's start.
    got=$(stat -c %s "$T/p1")
    [ "$rc" -ne 0 ] && [ "$got" -gt 90000 ] && [ "$got" -lt 100000 ] && cmp -s "$T/p1" <(head -c "$got" "$T/big") &&
        pass "proxy cuts a download" || fail "proxy cuts a download" "curl $rc, $got bytes"
    curl -s -o /dev/null -X POST --data-binary @"$T/big" "$X/upload/storage/v1/b/px/o?uploadType=media&name=cut"
    rc=$?
    st=$(code GET "$E/storage/v1/b/px/o/cut")
    check "proxy cuts an upload; no object" "curl status, object" "$([ $rc -ne 0 ] && echo failed) $st" "failed 404"
    st=$(curl -s -o /dev/null -w '%{http_code}' "$X/download/storage/v1/b/px/o/o?alt=media")
    rc=$?
    # Reset right after the handshake: curl says 7, 52 or 56 as timing goes.
    check "proxy refuses a connection" "curl failed, no HTTP status" "$([ $rc -ne 0 ] && echo failed) $st" "failed 000"
    curl -s -o "$T/p2" "$X/download/storage/v1/b/px/o/o?alt=media"
    rc=$?
    cmp -s "$T/p2" "$T/big" && [ $rc = 0 ] && pass "proxy forwards untouched" || fail "proxy forwards untouched" "curl $rc"
    curl -s -o "$T/p3" "$X/download/storage/v1/b/px/o/o?alt=media"
    check "proxy closes with FIN after 1000 bytes" "curl status (partial file)" "$?" 18
    curl -s -o /dev/null -X POST --data 'down:10/stall' "http://127.0.0.1:$PC/cuts"
    curl -s -m 2 -o /dev/null "$X/download/storage/v1/b/px/o/o?alt=media"
    check "proxy stalls until the client times out" "curl status" "$?" 28
    n=$(curl -s "http://127.0.0.1:$PC/stats" | $PY -c 'import json,sys; d=json.load(sys.stdin); print(d["connections"], d["cuts"], d["refused"])')
    check "proxy stats" "connections cuts refused" "$n" "6 4 1"
    kill "$proxy_pid"
    wait "$proxy_pid" 2>/dev/null
fi

# --- required token, request log, reset
admin token '{"token": "t0k"}'
s1=$(code GET "$E/storage/v1/b/lst/o" -H 'Authorization: Bearer other')
s2=$(code GET "$E/storage/v1/b/lst/o" -H 'Authorization: Bearer t0k')
check "required token" statuses "$s1 $s2" "401 200"
admin token '{}'
n=$(curl -s "$A/log" | $PY -c 'import json,sys; print(sum(1 for r in json.load(sys.stdin)["requests"] if r["status"] == 416))')
check "request log records statuses" "416 entries" "$n" 2
admin reset '{}'
st=$(code GET "$E/storage/v1/b/bkt/o/chunked.bin")
check "reset drops the objects" status "$st" 404

echo "$failures failures"
[ "$failures" -eq 0 ]
