#!/usr/bin/env bash
# Run CMD with a Cloud Storage test server (gcs_emulator.js) on a free
# loopback port, then stop the server by its PID and return CMD's status.
# Usage: tests/storage/with_emulator.sh CMD [ARGS...]
# CMD sees:
#   STORAGE_EMULATOR_HOST=http://127.0.0.1:PORT   the storage endpoint
#   TFREC_TEST_GCS_ADMIN=http://127.0.0.1:APORT    the test controls
#   TFREC_TEST_GCS_PID, TFREC_TEST_GCS_LOG         the server's PID and log
#   TFREC_NPM_DIR                                  where the npm packages are
# Installs the npm packages first if they are missing (needs the network
# only the first time; see scripts/install-npm-deps.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -gt 0 ] || { echo "usage: $0 CMD [ARGS...]" >&2; exit 2; }

TFREC_NPM_DIR=$("$root/scripts/install-npm-deps.sh") || {
    echo "with_emulator: the npm packages could not be installed" >&2
    exit 3
}
export TFREC_NPM_DIR
log=$(mktemp "${TMPDIR:-/tmp}/tfrec-gcs-emulator.XXXXXX")
node "$here/gcs_emulator.js" >"$log" 2>&1 &
pid=$!
stop() {
    kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -f "$log"
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

line=
for _ in $(seq 1 600); do # up to 60 s on a busy machine; usually about 1 s
    line=$(grep -m1 '^gcs_emulator port=' "$log") && break
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "with_emulator: the server exited:" >&2
        cat "$log" >&2
        exit 3
    fi
    sleep 0.1
done
if [ -z "$line" ]; then
    echo "with_emulator: the server did not start within 60 s:" >&2
    cat "$log" >&2
    exit 3
fi
port=${line#*port=}
port=${port%% *}
admin=${line#*admin=}
export STORAGE_EMULATOR_HOST=http://127.0.0.1:$port
export TFREC_TEST_GCS_ADMIN=http://127.0.0.1:$admin
export TFREC_TEST_GCS_PID=$pid
export TFREC_TEST_GCS_LOG=$log

"$@"
status=$?
# What the server complained about helps explain a failure.
if [ "$status" -ne 0 ] && [ "$(wc -l <"$log")" -gt 1 ]; then
    echo "with_emulator: server log:" >&2
    tail -n 40 "$log" >&2
fi
exit "$status"
