#!/usr/bin/env bash
# Start or stop the official Cloud Bigtable emulator on a free loopback port.
#
#   scripts/emulator.sh start [LOGFILE]   prints "host:port pid" once it listens
#   scripts/emulator.sh stop PID          stops that emulator (and only it)
#
# Uses cbtemulator from the Google Cloud CLI ($CBTEMULATOR overrides the path);
# without the Cloud CLI, builds the same emulator from Debian's
# golang-google-cloud-dev source (scripts/go/btemulator, cached in
# ${XDG_CACHE_HOME:-~/.cache}/tfrec/, Go's build cache there unless GOCACHE
# is set; EMULATOR_FROM_SOURCE=1 forces it),
# which accepts only 4 MiB requests.
# Every table lives in memory: a restarted emulator is empty.
set -u

find_emulator() {
    if [ -n "${CBTEMULATOR:-}" ]; then echo "$CBTEMULATOR"; return; fi
    # EMULATOR_FROM_SOURCE=1: use the Debian-source build even if the CLI is there
    if [ "${EMULATOR_FROM_SOURCE:-0}" = 1 ]; then build_from_debian_source; return; fi
    local root
    if command -v gcloud >/dev/null 2>&1; then
        root=$(gcloud info --format='value(installation.sdk_root)' 2>/dev/null)
        if [ -x "$root/platform/bigtable-emulator/cbtemulator" ]; then
            echo "$root/platform/bigtable-emulator/cbtemulator"; return
        fi
    fi
    for root in /usr/lib/google-cloud-sdk /usr/share/google-cloud-sdk /opt/google-cloud-sdk; do
        if [ -x "$root/platform/bigtable-emulator/cbtemulator" ]; then
            echo "$root/platform/bigtable-emulator/cbtemulator"; return
        fi
    done
    build_from_debian_source
}

build_from_debian_source() {
    local here cache src=/usr/share/gocode/src/cloud.google.com/go/bigtable/bttest
    here=$(cd "$(dirname "$0")" && pwd)
    cache=${XDG_CACHE_HOME:-$HOME/.cache}/tfrec
    echo "emulator.sh: using the emulator built from Debian's source (4 MiB request limit)" >&2
    if [ -x "$cache/btemulator" ] && [ "$cache/btemulator" -nt "$here/go/btemulator/main.go" ]; then
        echo "$cache/btemulator"; return
    fi
    if ! command -v go >/dev/null 2>&1 || [ ! -d "$src" ]; then
        echo "emulator.sh: no cbtemulator (Google Cloud CLI) and no golang-go + golang-google-cloud-dev to build one" >&2
        return 1
    fi
    mkdir -p "$cache"
    (cd "$here/go/btemulator" && GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS= \
        GOCACHE="${GOCACHE:-$cache/gocache}" go build -o "$cache/btemulator" .) >&2 || return 1
    echo "$cache/btemulator"
}

case "${1:-}" in
start)
    emu=$(find_emulator) || exit 1
    log=${2:-$(mktemp /tmp/cbtemulator.XXXXXX)}
    # -port 0 lets the kernel pick a free port; the emulator prints it.
    "$emu" -host 127.0.0.1 -port 0 >"$log" 2>&1 &
    pid=$!
    for _ in $(seq 1 100); do
        addr=$(sed -n 's/.*running on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$log" | head -1)
        if [ -n "$addr" ]; then echo "$addr $pid"; exit 0; fi
        if ! kill -0 "$pid" 2>/dev/null; then break; fi
        sleep 0.1
    done
    echo "emulator.sh: cbtemulator did not start:" >&2
    cat "$log" >&2
    kill "$pid" 2>/dev/null
    exit 1
    ;;
stop)
    pid=${2:?usage: emulator.sh stop PID}
    kill "$pid" 2>/dev/null || exit 0
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
    ;;
*)
    echo "usage: $0 start [LOGFILE] | stop PID" >&2
    exit 2
    ;;
esac
