#!/usr/bin/env bash
# tfrec2bt / bt2tfrec as a user meets them, against the official Bigtable
# emulator: interruption (bounded wait, the printed resume command, every
# row once after resuming), progress files (per prefix, checked before
# loading, --resume without one), the count of rows not written after the
# server stops answering, --num_records stopping early, standard input,
# emulator addresses without a port, credential errors without gRPC's log
# lines, and bt2tfrec's checks, compression, summary and interruption.
# Only loopback is ever contacted: the credential cases run in a network
# namespace of their own (unshare -rn) and are skipped where that is
# unavailable.
# needs: tfrec-bigtable
source "$(dirname "$0")/lib/common.sh"
it_tmpdir bt-tools
cd "$T"

it_need_cbt
it_bigtable_emulator "$T/emulator.log"

bt() { cbt -project p -instance i "$@" 2>"$T/cbt.err"; }
t2b() { "$BIN/tfrec2bt" --project=p --bigtable_instance=i --quiet "$@"; }
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
grpc_log_lines() { grep -cE '^[EWID][0-9]{4} ' "$1"; }

# 2000 records (up to 12 KB) in 2 files
$CHECK gen "$T/small" 2 2000 12 0 12000 >/dev/null || { echo "FAIL setup: gen"; exit 1; }
bt createtable t1 && bt createfamily t1 tfexample || { echo "FAIL setup: table"; exit 1; }

# ------------------------------------------------------------ interruption
# SIGINT while the server is frozen: the calls in flight never answer, so
# only --stop_timeout bounds the wait (the RPC deadline is 60 s). Exit 130,
# the progress file saved, the exact command to continue printed; that
# command, run as printed, completes the load with every row once.
env --default-signal=INT "$BIN/tfrec2bt" --project=p --bigtable_instance=i --quiet \
    --source_glob="$T/small/data-*" --bigtable_table=t1 --num_records=2000 --max_rows_per_sec=800 \
    --batch_rows=50 --rpc_timeout=60 --stop_timeout=2 >"$T/out" 2>"$T/intr.err" &
LOADER=$!
PROG1="$T/tfrec2bt-i-t1-train_.progress"
wait_for_index "$PROG1" 200 || fail interrupt_setup "no progress: $(head -c 300 "$T/intr.err")"
kill -STOP "$EMU"
sleep 0.5
t0=$(date +%s.%N)
kill -INT $LOADER
wait_exit $LOADER 20
took=$($PY -c "print(round($(date +%s.%N) - $t0, 1))")
kill -CONT "$EMU"
N=$(next_index "$PROG1")
cmd=$(resume_command "$T/intr.err")
if [ $st -eq 130 ] && $PY -c "import sys; sys.exit(not $took < 8)" && [ -n "$N" ] && [ "$N" -lt 2000 ] &&
   grep -q "interrupted; every record below $N is acknowledged (saved in tfrec2bt-i-t1-train_.progress)" "$T/intr.err" &&
   [[ "$cmd" == *" --resume --progress_file=$PROG1" ]]; then
    pass interrupt_frozen_server_bounded_exit_130_with_command
else fail interrupt_frozen_server_bounded_exit_130_with_command "exit $st after ${took}s N=$N cmd='$cmd': $(head -c 600 "$T/intr.err")"; fi
(cd / && eval "$cmd") >"$T/out" 2>"$T/resume.err"
st=$?
bt read t1 prefix=train_ >"$T/t1.dump"
if [ $st -eq 0 ] && [ ! -e "$PROG1" ] &&
   $CHECK verify "$T/t1.dump" "$T/small/manifest.txt" train_ 2000 0 2000 >"$T/v"; then
    pass printed_resume_command_completes_every_row_once
else fail printed_resume_command_completes_every_row_once "exit $st: $(cat "$T/resume.err" "$T/v" | head -c 600)"; fi

# SIGTERM in a validation_ load into the same table: its default progress
# file is its own (the completed train_ load's, removed, is not made again),
# and its resume command too.
"$BIN/tfrec2bt" --project=p --bigtable_instance=i --quiet --source_glob="$T/small/data-*" \
    --bigtable_table=t1 --row_prefix=validation_ --num_records=2000 --max_rows_per_sec=800 \
    --batch_rows=50 >"$T/out" 2>"$T/term.err" &
LOADER=$!
PROG2="$T/tfrec2bt-i-t1-validation_.progress"
wait_for_index "$PROG2" 200
kill -TERM $LOADER
wait_exit $LOADER 20
cmd=$(resume_command "$T/term.err")
if [ $st -eq 130 ] && [ ! -e "$PROG1" ] && [ "$(next_index "$PROG2")" -ge 200 ] && [ -n "$cmd" ]; then
    pass sigterm_prefix_has_its_own_progress_file
else fail sigterm_prefix_has_its_own_progress_file "exit $st validation_=$(next_index "$PROG2"): $(ls "$T"; head -c 400 "$T/term.err")"; fi
eval "$cmd" >"$T/out" 2>"$T/resume2.err"
st=$?
bt read t1 prefix=validation_ >"$T/v1.dump"
if [ $st -eq 0 ] && $CHECK verify "$T/v1.dump" "$T/small/manifest.txt" validation_ 2000 0 2000 >"$T/v"; then
    pass sigterm_resume_every_row_once
else fail sigterm_resume_every_row_once "exit $st: $(cat "$T/resume2.err" "$T/v" | head -c 400)"; fi

# ------------------------------------------------------------ progress files
# A train_ load, then --resume of a validation_ load into the same table
# with default progress files: nothing to resume yet, so it starts at 0.
# Both complete, so neither leaves its progress file behind.
mkdir -p "$T/pp" && cd "$T/pp"
t2b --source_glob="$T/small/data-00000-*" --bigtable_table=pp --create_table >"$T/out" 2>"$T/err"
t2b --source_glob="$T/small/data-00000-*" --bigtable_table=pp --row_prefix=validation_ --resume \
    >"$T/out" 2>"$T/err"
st=$?
n=$(bt count pp | tr -dc 0-9)
if [ $st -eq 0 ] && grep -q "no progress file tfrec2bt-i-pp-validation_.progress yet; starting at record 0" "$T/err" &&
   [ "$n" = 2000 ] && [ -z "$(ls -A)" ]; then
    pass resume_without_progress_file_starts_at_0_per_prefix
else fail resume_without_progress_file_starts_at_0_per_prefix "exit $st rows=$n: $(ls; head -c 400 "$T/err")"; fi
cd "$T"

t2b --source_glob="$T/small/data-*" --bigtable_table=neverloaded --create_table --progress_file="$T/pp" \
    >"$T/out" 2>"$T/err"
st=$?
if [ $st -eq 3 ] && grep -q "progress file $T/pp is a directory" "$T/err" &&
   ! bt ls | grep -qx neverloaded; then
    pass progress_file_directory_refused_before_loading
else fail progress_file_directory_refused_before_loading "exit $st: $(head -c 300 "$T/err")"; fi
t2b --source_glob="$T/small/data-*" --bigtable_table=neverloaded --create_table \
    --progress_file="$T/no/such/dir/x.progress" >"$T/out" 2>"$T/err"
st=$?
if [ $st -eq 3 ] && grep -q "cannot write the progress file $T/no/such/dir/x.progress" "$T/err" &&
   ! bt ls | grep -qx neverloaded; then
    pass progress_file_unwritable_refused_before_loading
else fail progress_file_unwritable_refused_before_loading "exit $st: $(head -c 300 "$T/err")"; fi

"$BIN/tfrec2bt" --help >"$T/help" 2>&1
if grep -q "tfrec2bt-<instance>-<table>-<row_prefix>.progress" "$T/help" &&
   grep -q "in the working directory" "$T/help" && grep -q -- "--stop_timeout" "$T/help"; then
    pass help_states_progress_file_default_and_location
else fail help_states_progress_file_default_and_location "$(grep -i progress "$T/help")"; fi

# A corrupt record: the advice is to repair the file, not a bare rerun.
mkdir -p "$T/bad"
cp "$T/small/data-00000-of-00002" "$T/bad/a-0"
cp "$T/small/data-00001-of-00002" "$T/bad/a-1"
size=$(stat -c %s "$T/bad/a-1")
printf '\xff' | dd of="$T/bad/a-1" bs=1 seek=$((size / 2)) conv=notrunc status=none
t2b --source_glob="$T/bad/a-*" --bigtable_table=t1 --row_prefix=bad_ >"$T/out" 2>"$T/err"
st=$?
if [ $st -eq 1 ] && grep -q "$T/bad/a-1" "$T/err" && grep -q "repair or regenerate that file" "$T/err" &&
   grep -q "tfrec verify FILE" "$T/err" && ! grep -q "rerun with --resume" "$T/err"; then
    pass corrupt_record_advice_is_to_repair
else fail corrupt_record_advice_is_to_repair "exit $st: $(head -c 800 "$T/err")"; fi

# ------------------------------------------------------------ rows not written
# The server stops answering mid-load (frozen): calls run into their 1 s
# deadline, retries give up after 2 s, the writer stops. Every row not
# acknowledged must be counted and listed: acknowledged + listed = 2000,
# the summary says the same, and every row missing from the table (once
# the server is back) is in the list.
PROG3="$T/down.progress"
"$BIN/tfrec2bt" --project=p --bigtable_instance=i --quiet --source_glob="$T/small/data-*" \
    --bigtable_table=t1 --row_prefix=down_ --num_records=2000 --batch_rows=20 --max_inflight=1 \
    --rpc_timeout=1 --retry_timeout=2 --max_rows_per_sec=1000 --progress_file="$PROG3" \
    >"$T/out" 2>"$T/down.err" &
LOADER=$!
wait_for_index "$PROG3" 300
kill -STOP "$EMU"
wait_exit $LOADER 60
kill -CONT "$EMU"
acked=$(sed -n 's/^[0-9T:Z-]* \{0,1\}tfrec2bt: \([0-9]*\) rows (.*written to.*/\1/p' "$T/down.err")
X=$(sed -n 's/^[0-9T:Z-]* \{0,1\}tfrec2bt: \([0-9]*\) of \([0-9]*\) rows not written:.*/\1/p' "$T/down.err")
Y=$(sed -n 's/^[0-9T:Z-]* \{0,1\}tfrec2bt: \([0-9]*\) of \([0-9]*\) rows not written:.*/\2/p' "$T/down.err")
listed=$(wc -l <"$PROG3.failed" 2>/dev/null || echo 0)
bt read t1 prefix=down_ >"$T/down.dump"
$CHECK keys "$T/down.dump" | sort >"$T/present"
seq 0 1999 | awk '{printf "down_%04d\n", $1}' | sort >"$T/all"
comm -23 "$T/all" "$T/present" >"$T/missing"
cut -f1 "$PROG3.failed" 2>/dev/null | sort >"$T/listed"
unlisted=$(comm -23 "$T/missing" "$T/listed" | wc -l)
if [ $st -eq 3 ] && [ -n "$acked" ] && [ "$Y" = 2000 ] && [ "$X" = "$listed" ] &&
   [ $((acked + X)) = 2000 ] && [ -s "$T/missing" ] && [ "$unlisted" = 0 ] &&
   grep -q "all $X rows not written are listed in $PROG3.failed" "$T/down.err"; then
    pass failure_report_counts_every_row_not_written
else fail failure_report_counts_every_row_not_written "exit $st acked=$acked X=$X Y=$Y listed=$listed missing=$(wc -l <"$T/missing") unlisted=$unlisted: $(grep -v '^  not written' "$T/down.err" | head -c 700)"; fi

# ------------------------------------------------------------ input
t2b --source_glob="$T/small/data-*" --bigtable_table=t1 --row_prefix=nr_ --num_records=500 \
    >"$T/out" 2>"$T/err"
st=$?
t2b --source_glob="$T/small/data-*" --bigtable_table=t1 --row_prefix=nr2_ --num_records=2000 \
    >"$T/out" 2>"$T/err2"
st2=$?
if [ $st -eq 0 ] && grep -q "warning: --num_records=500 stopped the load before the end of the input" "$T/err" &&
   [ $st2 -eq 0 ] && ! grep -q "warning" "$T/err2"; then
    pass num_records_before_end_warns
else fail num_records_before_end_warns "exit $st/$st2: $(cat "$T/err" "$T/err2" | head -c 400)"; fi

cat "$T"/small/data-* | t2b --source_glob=- --bigtable_table=t1 --row_prefix=stdin_ --num_records=2000 \
    >"$T/out" 2>"$T/err"
st=$?
bt read t1 prefix=stdin_ >"$T/stdin.dump"
if [ $st -eq 0 ] && $CHECK verify "$T/stdin.dump" "$T/small/manifest.txt" stdin_ 2000 0 2000 >"$T/v"; then
    pass source_glob_dash_reads_stdin
else fail source_glob_dash_reads_stdin "exit $st: $(cat "$T/err" "$T/v" | head -c 400)"; fi

# ------------------------------------------------------------ addresses, credentials
BIGTABLE_EMULATOR_HOST=localhost timeout 20 "$BIN/tfrec2bt" --project=p --bigtable_instance=i \
    --bigtable_table=t1 --source_glob="$T/small/data-*" --quiet >"$T/out" 2>"$T/err"
st=$?
BIGTABLE_EMULATOR_HOST=localhost timeout 20 "$BIN/bt2tfrec" --project=p --bigtable_instance=i \
    --bigtable_table=t1 --output="$T/x.tfrecord" --quiet >"$T/out" 2>"$T/err2"
st2=$?
want="BIGTABLE_EMULATOR_HOST=localhost does not end in :PORT"
if [ $st -eq 2 ] && grep -q "$want" "$T/err" && [ $st2 -eq 2 ] && grep -q "$want" "$T/err2"; then
    pass emulator_host_without_port_refused
else fail emulator_host_without_port_refused "exit $st/$st2: $(cat "$T/err" "$T/err2" | head -c 300)"; fi

DEAD_PORT=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$T/emptyhome"
# creds CASE EXPECTED-MESSAGE [ENV...]: production endpoint, no network at all
creds() {
    local name=$1 want=$2
    shift 2
    unshare -rn env -u BIGTABLE_EMULATOR_HOST -u GOOGLE_APPLICATION_CREDENTIALS -u GRPC_VERBOSITY \
        -u GRPC_TRACE HOME="$T/emptyhome" GCE_METADATA_HOST="127.0.0.1:$DEAD_PORT" "$@" \
        timeout 60 "$BIN/tfrec2bt" --project=p --bigtable_instance=i --bigtable_table=t \
        --source_glob="$T/small/data-00000-*" --quiet --progress_file="$T/creds.progress" \
        >"$T/out" 2>"$T/err"
    st=$?
    if [ $st -ne 0 ] && [ $st -ne 124 ] && head -1 "$T/err" | grep -q "^[0-9T:Z-]* \{0,1\}tfrec2bt: $want" &&
       [ "$(grpc_log_lines "$T/err")" = 0 ]; then
        pass "$name"
    else fail "$name" "exit $st: $(head -c 500 "$T/err")"; fi
}
if unshare -rn true 2>/dev/null; then
    # The shared Google auth module (lib/gauth) checks the sources itself:
    # each message names the variable, the file and what is wrong with it.
    creds credentials_file_missing \
        "Bigtable credentials: GOOGLE_APPLICATION_CREDENTIALS: $T/missing.json: cannot open the credentials file" \
        GOOGLE_APPLICATION_CREDENTIALS="$T/missing.json"
    echo "not json" >"$T/garbage.json"
    creds credentials_file_invalid \
        "Bigtable credentials: GOOGLE_APPLICATION_CREDENTIALS: $T/garbage.json: not a JSON credentials file" \
        GOOGLE_APPLICATION_CREDENTIALS="$T/garbage.json"
    creds credentials_none_found \
        "Bigtable credentials: no Google credentials found: no credentials file was given, GOOGLE_APPLICATION_CREDENTIALS is not set"
    # A key file whose key cannot be read: named in our message, and gRPC
    # prints no line of its own on stderr.
    echo '{"type": "service_account", "private_key": "garbage", "client_email": "a@b.c", "client_id": "1", "private_key_id": "k"}' >"$T/badkey.json"
    creds credentials_bad_key_named \
        "Bigtable credentials: GOOGLE_APPLICATION_CREDENTIALS: $T/badkey.json: field \"private_key\": not a PEM private key" \
        GOOGLE_APPLICATION_CREDENTIALS="$T/badkey.json"
else
    echo "NOTE credential cases not run: no network namespace (unshare -rn) to keep them off the network"
fi

# ------------------------------------------------------------ bt2tfrec
b2t() { "$BIN/bt2tfrec" --project=p --bigtable_instance=i --bigtable_table=t1 "$@"; }
b2t --row_prefix=nothing_ --output="$T/none.tfrecord" --quiet >"$T/out" 2>"$T/err"
st=$?
if [ $st -eq 0 ] && grep -q "warning: no row of table t1 has a key starting with 'nothing_'" "$T/err"; then
    pass bt2tfrec_warns_no_row_matched
else fail bt2tfrec_warns_no_row_matched "exit $st: $(head -c 300 "$T/err")"; fi

b2t --output="$T/bad" --quiet >"$T/out" 2>"$T/err"
st=$?
if [ $st -eq 3 ] && grep -q "output=$T/bad is a directory" "$T/err" && ! ls "$T"/bad.tmp-* >/dev/null 2>&1; then
    pass bt2tfrec_output_directory_refused
else fail bt2tfrec_output_directory_refused "exit $st: $(head -c 300 "$T/err")"; fi

b2t --output="$T/back.gz" --compression=gzip >"$T/out" 2>"$T/err"
st=$?
"$BUILD/bin/tfrec" cat --framed "$T/back.gz" >"$T/back.tfrecord" 2>/dev/null
if [ $st -eq 0 ] && [ "$(head -c 2 "$T/back.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] &&
   $CHECK verify-tfrecord "$T/back.tfrecord" "$T/small/manifest.txt" 0 2000 >"$T/v" &&
   grep -qE "^([0-9T:Z-]+ )?bt2tfrec: 2000 rows \([0-9.]+ MB\) read from t1 into $T/back.gz in [0-9.]+ s: [0-9]+ rows/s, [0-9.]+ MB/s$" "$T/err"; then
    pass bt2tfrec_gzip_output_and_summary_units
else fail bt2tfrec_gzip_output_and_summary_units "exit $st: $(cat "$T/err" "$T/v" | head -c 400)"; fi
b2t --output="$T/back.z" --compression=ZLIB --quiet >"$T/out" 2>"$T/err"
st=$?
if [ $st -eq 0 ] && [ "$(head -c 1 "$T/back.z" | od -An -tx1 | tr -d ' ')" = 78 ]; then
    pass bt2tfrec_zlib_output
else fail bt2tfrec_zlib_output "exit $st: $(head -c 300 "$T/err")"; fi

# Interrupted while waiting for the (frozen) server: the partial output is
# removed, and it says so; exit 130.
kill -STOP "$EMU"
"$BIN/bt2tfrec" --project=p --bigtable_instance=i --bigtable_table=t1 --output="$T/part.tfrecord" \
    --quiet >"$T/out" 2>"$T/err" &
READER=$!
for _ in $(seq 1 200); do ls "$T"/part.tfrecord.tmp-* >/dev/null 2>&1 && break; sleep 0.02; done
ls "$T"/part.tfrecord.tmp-* >/dev/null 2>&1 || fail bt2tfrec_interrupt_setup "no temporary output appeared"
kill -TERM $READER
kill -CONT "$EMU"
wait_exit $READER 30
if [ $st -eq 130 ] && grep -q "removed the partial output; $T/part.tfrecord was not written" "$T/err" &&
   ! ls "$T"/part.tfrecord* >/dev/null 2>&1; then
    pass bt2tfrec_interrupt_removes_partial_output
else fail bt2tfrec_interrupt_removes_partial_output "exit $st: $(ls "$T" | grep part; head -c 300 "$T/err")"; fi

# ------------------------------------------------------------ throttled batches
# --max_rows_per_sec=20 without --batch_rows: a batch holds at most a
# second of the rate, so rows are acknowledged within seconds (with the
# writer's 5000-row batches nothing would be sent for 100 s).
bt createtable slow && bt createfamily slow tfexample
"$BIN/tfrec2bt" --project=p --bigtable_instance=i --quiet --source_glob="$T/small/data-*" \
    --bigtable_table=slow --max_rows_per_sec=20 --progress_file="$T/slow.progress" \
    >"$T/out" 2>"$T/slow.err" &
LOADER=$!
t0=$(date +%s.%N)
wait_for_index "$T/slow.progress" 1
took=$($PY -c "print(round($(date +%s.%N) - $t0, 1))")
acked=$(next_index "$T/slow.progress")
kill -TERM $LOADER
wait_exit $LOADER 20
if [ "${acked:-0}" -gt 0 ] && [ "${acked:-0}" -le 200 ] && $PY -c "import sys; sys.exit(not $took < 6)" &&
   [ $st -eq 130 ] && [ -e "$T/slow.progress" ] && grep -q "saved in $T/slow.progress" "$T/slow.err"; then
    pass throttled_load_sends_batches_of_a_second_within_seconds
else fail throttled_load_sends_batches_of_a_second_within_seconds "acked=$acked after ${took}s, exit $st: $(head -c 400 "$T/slow.err")"; fi

# ------------------------------------------------------------ progress line
# On a terminal the progress line gives the total and an ETA when the total
# is known: from --num_records, or from fresh FILE.idx indexes. A complete
# load leaves no progress file.
if command -v script >/dev/null; then
    mkdir -p "$T/pl" && cd "$T/pl"
    script -qec "'$BIN/tfrec2bt' --project=p --bigtable_instance=i --source_glob='$T/small/data-*' \
        --bigtable_table=slow --row_prefix=a_ --num_records=600 --max_rows_per_sec=300" /dev/null \
        >"$T/pl1.out" 2>&1
    st1=$?
    cp "$T"/small/data-* "$T/pl/" && "$BIN/tfrec" index "$T"/pl/data-* >/dev/null
    script -qec "'$BIN/tfrec2bt' --project=p --bigtable_instance=i --source_glob='$T/pl/data-?????-of-?????' \
        --bigtable_table=slow --row_prefix=b_ --max_rows_per_sec=1000" /dev/null \
        >"$T/pl2.out" 2>&1
    st2=$?
    cd "$T"
    if [ $st1 -eq 0 ] && [ $st2 -eq 0 ] && grep -aqE "[0-9]+/600 rows \([0-9.]+%\) .* ETA [0-9]+m[0-9]+s" "$T/pl1.out" &&
       grep -aqE "[0-9]+/2000 rows \([0-9.]+%\) .* ETA [0-9]+m[0-9]+s" "$T/pl2.out" &&
       [ -z "$(ls "$T/pl" | grep progress)" ]; then
        pass progress_line_total_and_eta_from_num_records_or_indexes
    else fail progress_line_total_and_eta_from_num_records_or_indexes "exits $st1 $st2: $(tr '\r' '\n' <"$T/pl1.out" | tail -3; tr '\r' '\n' <"$T/pl2.out" | tail -3; ls "$T/pl")"; fi
else
    fail progress_line_total_and_eta_from_num_records_or_indexes "script(1) (bsdutils) is not installed"
fi

it_finish bigtable_tools
