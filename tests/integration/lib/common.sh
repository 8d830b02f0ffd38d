# Set-up shared by the integration scripts. Sourced, never run: tests/run.sh
# runs only tests/integration/*.sh, and this file lives one directory below.
#
#   source "$(dirname "$0")/lib/common.sh"   # ROOT BUILD BIN PY CHECK; cwd = ROOT
#   it_storage_emulator "$@"                 # re-run under the Cloud Storage test server
#   it_tmpdir NAME                           # T=/tmp/tfrec-NAME.XXXXXX, removed on exit
#   pass NAME / fail NAME [WHY]              # one PASS / FAIL line; fail counts
#   it_bigtable_emulator LOG                 # start the emulator or exit with FAIL setup
#   it_finish NAME                           # summary line; exit 1 when anything failed
#   next_index / wait_for_index / resume_command   tfrec2bt progress and resume output
#
# A script that owns more to stop on exit (a proxy, ...) defines
# cleanup_extra; it runs before the emulators are stopped.
# The variables are for the scripts that source this file.
# shellcheck disable=SC2034
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../../.." || exit 2
ROOT=$(pwd)
BUILD=$(cd "${TFREC_BUILD:-$ROOT/build}" && pwd)
BIN=$BUILD/bin
PY=/usr/bin/python3
CHECK="$PY $ROOT/tests/integration/bigtable_check.py"
T=
EMU=
EMU_PIDS=()
failures=0

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1${2:+: $2}"; failures=$((failures + 1)); }

# Re-execute the calling script under tests/storage/with_emulator.sh unless
# a storage endpoint is already set; call it before anything is started.
it_storage_emulator() { # "$@" of the script
    if [ -z "${STORAGE_EMULATOR_HOST:-}" ]; then
        exec "$ROOT/tests/storage/with_emulator.sh" bash "$0" "$@"
    fi
}

it_cleanup() {
    if declare -F cleanup_extra >/dev/null; then cleanup_extra; fi
    local p
    for p in "${EMU_PIDS[@]}"; do
        # a test may have left it stopped (SIGSTOP); it must be able to exit
        kill -CONT "$p" 2>/dev/null
        "$ROOT/scripts/emulator.sh" stop "$p"
    done
    [ -z "$T" ] || rm -rf "$T"
}

it_tmpdir() { # name
    T=$(mktemp -d "/tmp/tfrec-$1.XXXXXX")
    trap it_cleanup EXIT
}

it_need_cbt() {
    command -v cbt >/dev/null || { echo "FAIL setup: cbt CLI not installed"; exit 1; }
}

it_need_bins() { # tool...
    local b
    for b in "$@"; do
        [ -x "$BIN/$b" ] || { echo "FAIL setup: $BIN/$b not built"; exit 1; }
    done
}

# Start a Bigtable emulator on a free loopback port: sets ADDR and EMU (its
# PID), exports BIGTABLE_EMULATOR_HOST, stops it on exit. Returns 1, with
# the reason in $T/emu.err, when it does not start.
it_try_bigtable_emulator() { # logfile
    local out
    out=$("$ROOT/scripts/emulator.sh" start "$1" 2>"$T/emu.err") && [ -n "$out" ] || return 1
    ADDR=${out% *}
    EMU=${out#* }
    EMU_PIDS+=("$EMU")
    export BIGTABLE_EMULATOR_HOST=$ADDR
}

it_bigtable_emulator() { # logfile
    it_try_bigtable_emulator "$1" ||
        { echo "FAIL setup: emulator did not start: $(cat "$T/emu.err")"; exit 1; }
}

# What the Bigtable tool scripts start with: a work directory that is also
# the working directory (tfrec2bt keeps its default progress files there),
# cbt and the tools, the shorthands bt (cbt) and t2b (tfrec2bt), an
# emulator ($EMU, $ADDR) and $T/small: 2 files of 2,000 records.
it_bigtable_tools_setup() { # name
    it_tmpdir "$1"
    cd "$T" || exit 1
    it_need_cbt
    it_need_bins tfrec2bt bt2tfrec
    bt() { cbt -project p -instance i "$@" 2>"$T/cbt.err"; }
    t2b() { "$BIN/tfrec2bt" --project=p --bigtable_instance=i --quiet "$@"; }
    it_bigtable_emulator "$T/emulator.log"
    $CHECK gen "$T/small" 2 2000 12 0 12000 >/dev/null || { echo "FAIL setup: gen small"; exit 1; }
}

# tfrec2bt progress files: the next record index a resumed run starts at
next_index() { sed -n 's/^next_index \([0-9]*\)/\1/p' "$1" 2>/dev/null; }

# Wait (at most about 20 s) until a progress file says MINIMUM or more.
wait_for_index() { # progress-file minimum
    local n
    for _ in $(seq 1 1000); do
        n=$(next_index "$1")
        [ "${n:-0}" -ge "$2" ] && return 0
        sleep 0.02
    done
    return 1
}

# The command line an interrupted tool printed to continue the load
# (the line after "to continue, run:", without the log prefix and indent)
resume_command() { sed -n '/to continue, run:/{n;s/^[0-9T:Z-]* \{0,1\}tfrec2bt:   //;p;q}' "$1"; }

it_finish() { # name
    if [ "$failures" -eq 0 ]; then echo "$1: all passed"; else echo "$1: $failures failed"; fi
    exit $((failures > 0))
}
