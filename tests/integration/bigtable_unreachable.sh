#!/usr/bin/env bash
# bt2tfrec against a Bigtable that is not there, as a user meets it with a
# wrong BIGTABLE_EMULATOR_HOST: a closed loopback port is reported within
# seconds, naming the endpoint and how long it was tried (not retried for
# the ten minutes of --retry_timeout); against a server that accepts the
# connection and never answers, the first SIGINT stops it within seconds,
# exit 130, with no output file left. No emulator needed: only loopback
# sockets of this script are contacted.
# needs: tfrec-bigtable
source "$(dirname "$0")/lib/common.sh"
it_tmpdir bt-unreachable
cd "$T"
it_need_bins bt2tfrec

SILENT=
cleanup_extra() { [ -z "$SILENT" ] || kill "$SILENT" 2>/dev/null; }
# wait_exit PID SECONDS: the exit status in $st (999: still running, killed)
wait_exit() {
    local i
    for i in $(seq 1 $(($2 * 10))); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$1" 2>/dev/null; then
        kill -9 "$1" 2>/dev/null
        wait "$1" 2>/dev/null
        st=999
    else
        wait "$1"
        st=$?
    fi
}
b2t() { "$BIN/bt2tfrec" --project=p --bigtable_instance=i --bigtable_table=x --quiet "$@"; }

# ------------------------------------------------------------ closed port
# A port nothing listens on: bound, then closed again.
PORT=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
t0=$(date +%s.%N)
BIGTABLE_EMULATOR_HOST=127.0.0.1:$PORT b2t --output="$T/x.tfrecord" >"$T/out" 2>"$T/err" &
READER=$!
wait_exit $READER 15
took=$($PY -c "print(round($(date +%s.%N) - $t0, 1))")
if [ $st -ne 0 ] && [ $st -ne 999 ] && grep -q "cannot reach Bigtable at 127.0.0.1:$PORT" "$T/err" &&
   grep -qE "tried for [0-9.]+ s" "$T/err" && ! ls "$T"/x.tfrecord* >/dev/null 2>&1; then
    pass "bt2tfrec_closed_port_reported_in_${took}s"
else fail bt2tfrec_closed_port_reported "exit $st after ${took}s: $(head -c 400 "$T/err")"; fi

# ------------------------------------------------------------ silent server
# Accepts every connection and never sends a byte: the gRPC handshake never
# completes, the call never ends on its own.
$PY -c '
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(16)
print(s.getsockname()[1], flush=True)
held = []
while True:
    c, _ = s.accept()
    held.append(c)
' >"$T/silent.port" &
SILENT=$!
for _ in $(seq 1 100); do [ -s "$T/silent.port" ] && break; sleep 0.05; done
SPORT=$(cat "$T/silent.port")
# A background job of a script starts with SIGINT ignored: restore it, as
# for a command run from a terminal.
BIGTABLE_EMULATOR_HOST=127.0.0.1:$SPORT env --default-signal=INT "$BIN/bt2tfrec" --project=p \
    --bigtable_instance=i --bigtable_table=x --quiet --output="$T/s.tfrecord" >"$T/out" 2>"$T/err" &
READER=$!
for _ in $(seq 1 200); do ls "$T"/s.tfrecord.tmp-* >/dev/null 2>&1 && break; sleep 0.02; done
ls "$T"/s.tfrecord.tmp-* >/dev/null 2>&1 || fail bt2tfrec_silent_setup "no temporary output appeared"
sleep 1
t0=$(date +%s.%N)
kill -INT $READER
wait_exit $READER 5
took=$($PY -c "print(round($(date +%s.%N) - $t0, 1))")
if [ $st -eq 130 ] && grep -q "interrupted" "$T/err" &&
   grep -q "removed the partial output; $T/s.tfrecord was not written" "$T/err" &&
   ! ls "$T"/s.tfrecord* >/dev/null 2>&1; then
    pass "bt2tfrec_first_sigint_on_silent_server_exits_in_${took}s"
else fail bt2tfrec_first_sigint_on_silent_server "exit $st after ${took}s: $(ls "$T" | grep s.tfrecord; head -c 400 "$T/err")"; fi

it_finish bigtable_unreachable
