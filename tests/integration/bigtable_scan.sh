#!/usr/bin/env bash
# bt2tfrec's parallel scans against the official Bigtable emulator: N
# streams give the same file as one; --output_shards files concatenate to
# it; workers with --shard_index/--num_shards read disjoint shares covering
# every row; and streams cut mid-scan by a TCP proxy (the emulator stays up
# and keeps its rows) are resumed so that every row arrives exactly once.
# Records are checked against the generator's manifest (SHA-256 of each
# source record, tests/integration/bigtable_check.py), not against our code.
# needs: tfrec-bigtable
source "$(dirname "$0")/lib/common.sh"
PROXY=
# shellcheck disable=SC2317 # called by lib/common.sh's exit trap
cleanup_extra() { [ -z "$PROXY" ] || { kill "$PROXY" 2>/dev/null && wait "$PROXY" 2>/dev/null; }; }
it_tmpdir bt-scan
cd "$T"

it_need_bins tfrec2bt bt2tfrec
it_bigtable_emulator "$T/emu.log"
b2t() { "$BIN/bt2tfrec" --project=p --bigtable_instance=i --bigtable_table=t "$@"; }

# 3000 records of 1 B .. 12 KB (about 20 MB), keys train_0000 .. train_2999,
# and 50 rows of another prefix that no scan of train_ may return.
$CHECK gen "$T/d" 2 3000 21 0 12000 >/dev/null || { echo "FAIL setup: gen"; exit 1; }
"$BIN/tfrec2bt" --project=p --bigtable_instance=i --bigtable_table=t --quiet --create_table \
    --source_glob="$T/d/data-*" --num_records=3000 >"$T/out" 2>"$T/err" &&
"$BIN/tfrec2bt" --project=p --bigtable_instance=i --bigtable_table=t --quiet \
    --source_glob="$T/d/data-00000-*" --num_records=50 --row_prefix=validation_ >"$T/out" 2>>"$T/err" ||
    { echo "FAIL setup: load: $(head -c 400 "$T/err")"; exit 1; }
verify() { $CHECK verify-tfrecord "$1" "$T/d/manifest.txt" 0 3000 >"$T/v"; }

b2t --output="$T/one.tfrecord" --quiet 2>"$T/err"
st=$?
if [ $st -eq 0 ] && verify "$T/one.tfrecord"; then pass one_stream_reads_every_row
else fail one_stream_reads_every_row "exit $st: $(cat "$T/err" "$T/v" | head -c 400)"; fi

b2t --output="$T/par.tfrecord" --parallel_scans=4 2>"$T/err"
st=$?
# The summary line says what --help says: ranges, read concurrently, and
# ReadRows calls (not "streams", which --help promised N of).
if [ $st -eq 0 ] && verify "$T/par.tfrecord" &&
    grep -qE "4 ranges \(task 0 of 1\) read concurrently, [0-9]+ ReadRows calls, [0-9]+ resumed" "$T/err" &&
    "$BIN/bt2tfrec" --help 2>&1 | grep -A3 -- "--parallel_scans" | grep -q "ReadRows" &&
    ! grep -q "streams" "$T/err"; then
    pass parallel_scans_one_file_in_key_order
else fail parallel_scans_one_file_in_key_order "exit $st: $(cat "$T/err" "$T/v" | head -c 400)"; fi

b2t --output="$T/sh" --parallel_scans=3 --output_shards --quiet --keys_file="$T/keys" 2>"$T/err"
st=$?
cat "$T/sh-00000-of-00003" "$T/sh-00001-of-00003" "$T/sh-00002-of-00003" >"$T/cat.tfrecord" 2>/dev/null
if [ $st -eq 0 ] && verify "$T/cat.tfrecord" && [ "$(sort -u "$T/keys" | wc -l)" = 3000 ]; then
    pass output_shards_concatenate_to_every_row
else fail output_shards_concatenate_to_every_row "exit $st: $(cat "$T/err" "$T/v" | head -c 400)"; fi

# Workers 0..2 of 3, two scans each, cutting at the same split points.
printf 'train_0400\ntrain_0999\ntrain_1000\ntrain_1733\ntrain_2500\nzzz\n' >"$T/splits"
st=0
for w in 0 1 2; do
    b2t --output="$T/w" --parallel_scans=2 --output_shards --num_shards=3 --shard_index=$w \
        --split_keys_file="$T/splits" --quiet 2>>"$T/err" || st=$?
done
cat "$T"/w-0000?-of-00006 >"$T/workers.tfrecord" 2>/dev/null
if [ $st -eq 0 ] && [ "$(ls "$T"/w-*-of-00006 | wc -l)" = 6 ] && verify "$T/workers.tfrecord"; then
    pass workers_shares_disjoint_and_covering
else fail workers_shares_disjoint_and_covering "exit $st: $(cat "$T/err" "$T/v" | head -c 400)"; fi

b2t --output="$T/lim.tfrecord" --parallel_scans=3 --max_rows=700 --quiet 2>"$T/err"
st=$?
if [ $st -eq 0 ] && $CHECK verify-tfrecord "$T/lim.tfrecord" "$T/d/manifest.txt" 0 700 >"$T/v"; then
    pass parallel_max_rows_first_rows_in_order
else fail parallel_max_rows_first_rows_in_order "exit $st: $(cat "$T/err" "$T/v" | head -c 400)"; fi

b2t --output="$T/x" --shard_index=2 --num_shards=2 >"$T/out" 2>"$T/err"
st=$?
if [ $st -eq 2 ] && grep -q "shard_index must be below" "$T/err"; then pass bad_shard_index_usage_error
else fail bad_shard_index_usage_error "exit $st: $(head -c 300 "$T/err")"; fi

# A proxy resets connections after 2 MB of each, N times, then lets them be.
start_proxy() { # cuts
    "$PY" "$ROOT/tests/tools/cut_proxy.py" --target "$ADDR" --then down:2000000 --max-cuts "$1" \
        --status-file "$T/cuts" --max-seconds 3600 >"$T/proxy.out" &
    PROXY=$!
    for _ in $(seq 50); do grep -q 'port=' "$T/proxy.out" && break; sleep 0.1; done
    PORT=$(sed -n 's/.*port=\([0-9]*\) .*/\1/p' "$T/proxy.out")
}
stop_proxy() { kill "$PROXY" 2>/dev/null; wait "$PROXY" 2>/dev/null; PROXY=; }

start_proxy 4
BIGTABLE_EMULATOR_HOST=127.0.0.1:$PORT b2t --output="$T/cut1.tfrecord" 2>"$T/err"
st=$?
stop_proxy
if [ $st -eq 0 ] && [ "$(cat "$T/cuts")" = 4 ] && verify "$T/cut1.tfrecord" &&
   grep -Eq "[1-9][0-9]* resumed" "$T/err"; then
    pass cut_stream_resumed_every_row_once
else fail cut_stream_resumed_every_row_once "exit $st cuts=$(cat "$T/cuts"): $(cat "$T/err" "$T/v" | head -c 500)"; fi

start_proxy 6
BIGTABLE_EMULATOR_HOST=127.0.0.1:$PORT b2t --output="$T/cut4.tfrecord" --parallel_scans=4 2>"$T/err"
st=$?
stop_proxy
if [ $st -eq 0 ] && [ "$(cat "$T/cuts")" = 6 ] && verify "$T/cut4.tfrecord" &&
   grep -Eq "[1-9][0-9]* resumed" "$T/err"; then
    pass cut_parallel_scans_resumed_every_row_once
else fail cut_parallel_scans_resumed_every_row_once "exit $st cuts=$(cat "$T/cuts"): $(cat "$T/err" "$T/v" | head -c 500)"; fi

start_proxy 6
BIGTABLE_EMULATOR_HOST=127.0.0.1:$PORT b2t --output="$T/cs" --parallel_scans=3 --output_shards \
    --keys_file="$T/cutkeys" 2>"$T/err"
st=$?
stop_proxy
cat "$T/cs-00000-of-00003" "$T/cs-00001-of-00003" "$T/cs-00002-of-00003" >"$T/cs.tfrecord" 2>/dev/null
if [ $st -eq 0 ] && [ "$(cat "$T/cuts")" = 6 ] && verify "$T/cs.tfrecord" &&
   [ "$(wc -l <"$T/cutkeys")" = 3000 ] && [ "$(sort -u "$T/cutkeys" | wc -l)" = 3000 ]; then
    pass cut_output_shards_every_row_once
else fail cut_output_shards_every_row_once "exit $st cuts=$(cat "$T/cuts"): $(cat "$T/err" "$T/v" | head -c 500)"; fi

it_finish bigtable_scan
