#!/usr/bin/env bash
# The bulk writer spreads its calls over one connection per call in flight
# (an emulator reads each HTTP/2 connection with a single reader): while a
# throttled tfrec2bt load runs with --max_inflight=4, the emulator must see at
# least 4 established connections from it, and the load must be complete.
# needs: tfrec-bigtable
set -u
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
BUILD=$(cd "${TFREC_BUILD:-$ROOT/build}" && pwd)
T=$(mktemp -d /tmp/tfrec-bt-conn.XXXXXX)
EMU=
cleanup() {
    [ -n "$EMU" ] && "$ROOT/scripts/emulator.sh" stop "$EMU"
    rm -rf "$T"
}
trap cleanup EXIT
command -v ss >/dev/null || { echo "SKIP connections: no ss (iproute2)"; exit 0; }
read -r addr EMU < <("$ROOT/scripts/emulator.sh" start "$T/emu.log") || { echo "FAIL setup: emulator"; exit 1; }
export BIGTABLE_EMULATOR_HOST=$addr
port=${addr##*:}
/usr/bin/python3 - "$T/in.tfrecord" <<'PY'
import struct, sys, crc32c
def m(d):
    c = crc32c.crc32c(d); return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF
with open(sys.argv[1], "wb") as f:
    for i in range(400):
        rec = b"%05d" % i * 20
        h = struct.pack("<Q", len(rec))
        f.write(h + struct.pack("<I", m(h)) + rec + struct.pack("<I", m(rec)))
PY
# 400 rows at 200 rows/s in 20-row calls: about 2 s with calls in flight.
"$BUILD/bin/tfrec2bt" --project=p --bigtable_instance=i --bigtable_table=t --create_table \
    --source_glob="$T/in.tfrecord" --batch_rows=20 --max_inflight=4 --max_rows_per_sec=200 \
    --quiet --progress_file="$T/progress" >"$T/out" 2>&1 &
pid=$!
most=0
while kill -0 "$pid" 2>/dev/null; do
    n=$(ss -Htn state established "( dport = :$port )" 2>/dev/null | wc -l)
    [ "$n" -gt "$most" ] && most=$n
    sleep 0.1
done
wait "$pid"; rc=$?
failures=0
if [ "$rc" = 0 ] && [ "$(cbt -project p -instance i count t 2>/dev/null)" = 400 ]; then
    echo "PASS load_over_several_connections_complete"
else
    echo "FAIL load_over_several_connections_complete: rc $rc: $(tail -3 "$T/out")"; failures=1
fi
if [ "$most" -ge 4 ]; then
    echo "PASS calls_spread_over_connections ($most connections seen)"
else
    echo "FAIL calls_spread_over_connections: at most $most connection(s) to the emulator during the load, expected >= 4"
    failures=1
fi
exit $failures
