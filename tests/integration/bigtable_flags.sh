#!/usr/bin/env bash
# tfrec2bt / bt2tfrec flags and set-up errors, against the official Bigtable
# emulator (cbtemulator) and checked with `cbt` and
# tests/integration/bigtable_check.py: bad flags, --help and the exit-code
# table, an unreachable server, a missing table and column family, the
# project from a (fake) metadata server and the error without one, and the
# flag forms (a nested flagfile, "--name value", --noflag), keys 10 digits
# wide without --num_records and --row_key_order=reversed. Split from
# bigtable.sh so that the runner's parallel lanes balance.
# needs: tfrec-bigtable
source "$(dirname "$0")/lib/common.sh"
it_bigtable_tools_setup bt-flags

# ------------------------------------------------------------ bad flags
check_usage() { # name expected-message args...
    local name=$1 want=$2; shift 2
    t2b "$@" >"$T/out" 2>"$T/err"
    local st=$?
    if [ $st -eq 2 ] && grep -q -- "$want" "$T/err"; then pass "$name"
    else fail "$name" "exit $st, stderr: $(head -c 300 "$T/err")"; fi
}
check_usage flags_missing_source "source_glob is required" --bigtable_table=t
check_usage flags_missing_table "bigtable_table is required" --source_glob="$T/d1/data-*"
check_usage flags_bad_number "num_records: 'abc'" --source_glob=x --bigtable_table=t --num_records=abc
check_usage flags_bad_order "row_key_order: 'random' is not one of sequential, reversed" --source_glob=x --bigtable_table=t --row_key_order=random
check_usage flags_unknown "unknown flag --frobnicate" --source_glob=x --bigtable_table=t --frobnicate=1
check_usage flags_unknown_did_you_mean "unknown flag --num_record (did you mean --num_records?)" --source_glob=x --bigtable_table=t --num_record=5
check_usage flags_size_overflow "batch_bytes: '20000000000G' is too large" --source_glob=x --bigtable_table=t --batch_bytes=20000000000G
check_usage flags_range "max_inflight: 65 is out of range 1..64" --source_glob=x --bigtable_table=t --max_inflight=65
check_usage flags_bad_bool "create_table: 'maybe' is not a boolean" --source_glob=x --bigtable_table=t --create_table=maybe
check_usage flags_missing_value "bigtable_table needs a value" --source_glob=x --bigtable_table
check_usage flags_positional_refused "unexpected argument 'extra'" --source_glob=x --bigtable_table=t extra
check_usage flags_resume_and_start "either --resume or --start_index" --source_glob=x --bigtable_table=t --resume --start_index=5
# gs:// sources need the storage part (tests/integration/storage_tools.sh
# loads from a bucket): without it a clear error naming the flag; the
# progress file is local either way
if grep -qw tfrec-storage "$BUILD/parts"; then
    check_usage flags_gcs_progress_file_local "progress_file: gs://bucket/p: must be a local path" --source_glob=x --bigtable_table=t --progress_file=gs://bucket/p
else
    check_usage flags_gcs_source_not_built "source_glob: gs://bucket/train-\*: this build cannot open gs:// names" --source_glob='gs://bucket/train-*' --bigtable_table=t
fi
printf -- '--bigtable_table=t\n--nosuch_flag=1\n' >"$T/bad.flags"
check_usage flagfile_error_names_file_and_line "$T/bad.flags:2: unknown flag --nosuch_flag" --source_glob=x --flagfile="$T/bad.flags"

# --help documents the flags and the exit-code table; --helpfull the common flags
"$BIN/tfrec2bt" --help >"$T/help" 2>&1
st=$?
if [ $st -eq 0 ] && grep -q -- "--source_glob=GLOB" "$T/help" && grep -q -- "--\[no\]create_table" "$T/help" &&
   grep -q "2 usage error" "$T/help" && grep -q "3 I/O or network error" "$T/help" &&
   grep -q "130 interrupted" "$T/help" && ! grep -q -- "--flagfile=FILE  " "$T/help"; then
    pass help_lists_flags_and_exit_codes
else fail help_lists_flags_and_exit_codes "exit $st: $(head -c 400 "$T/help")"; fi
"$BIN/tfrec2bt" --helpfull >"$T/help" 2>&1
if grep -q -- "--flagfile=FILE" "$T/help" && grep -q -- "--version" "$T/help"; then pass helpfull_lists_common_flags
else fail helpfull_lists_common_flags "$(head -c 300 "$T/help")"; fi
for b in tfrec2bt bt2tfrec; do
    out=$("$BIN/$b" --version 2>&1)
    case "$out" in "$b (libtfrec) "[0-9]*) pass "${b}_version" ;; *) fail "${b}_version" "$out" ;; esac
done
"$BIN/bt2tfrec" --bigtable_instance=i --bigtable_table=t --output=x --bogus >"$T/out" 2>"$T/err"
st=$?
if [ $st -eq 2 ] && grep -q "unknown flag --bogus" "$T/err"; then pass bt2tfrec_unknown_flag_exit_2
else fail bt2tfrec_unknown_flag_exit_2 "exit $st: $(head -c 300 "$T/err")"; fi

t2b --source_glob="$T/nothing-*" --bigtable_table=t >"$T/out" 2>"$T/err"
st=$?
if [ $st -eq 3 ] && grep -q "no files match --source_glob=$T/nothing-\*" "$T/err"; then pass no_matching_files_exit_3
else fail no_matching_files_exit_3 "exit $st: $(cat "$T/err")"; fi

# ------------------------------------------------------------ server faults
# A loopback port nothing listens on: bind one, note it, close it.
DEAD_PORT=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
start=$(date +%s)
BIGTABLE_EMULATOR_HOST=127.0.0.1:$DEAD_PORT t2b --source_glob="$T/small/data-*" --bigtable_table=t \
    >"$T/out" 2>"$T/err"
st=$?
took=$(($(date +%s) - start))
if [ $st -eq 3 ] && grep -q "cannot reach Bigtable at 127.0.0.1:$DEAD_PORT" "$T/err" && [ $took -lt 60 ]; then
    pass server_not_listening
else fail server_not_listening "exit $st after ${took}s: $(head -c 400 "$T/err")"; fi

t2b --source_glob="$T/small/data-*" --bigtable_table=missing >"$T/out" 2>"$T/err"
st=$?
if [ $st -eq 3 ] && grep -q "table projects/p/instances/i/tables/missing does not exist" "$T/err" &&
   grep -q -- "--create_table" "$T/err"; then pass missing_table
else fail missing_table "exit $st: $(head -c 400 "$T/err")"; fi

bt createtable nofam
t2b --source_glob="$T/small/data-*" --bigtable_table=nofam >"$T/out" 2>"$T/err"
st=$?
if [ $st -eq 3 ] && grep -q "has no column family 'tfexample'" "$T/err"; then pass missing_family
else fail missing_family "exit $st: $(head -c 400 "$T/err")"; fi

# --create_table adds the missing family to the existing table
t2b --source_glob="$T/small/data-*" --bigtable_table=nofam --num_records=2000 --create_table \
    >"$T/out" 2>"$T/err"
st=$?
bt read nofam >"$T/nofam.dump"
if [ $st -eq 0 ] && $CHECK verify "$T/nofam.dump" "$T/small/manifest.txt" train_ 2000 0 2000 >"$T/v"; then
    pass create_missing_family
else fail create_missing_family "exit $st: $(cat "$T/err" "$T/v" | head -c 600)"; fi

# ------------------------------------------------------------ project lookup
# No --project: the project comes from the metadata server, here a local fake
# that insists on the Metadata-Flavor header (GCE_METADATA_HOST points at it).
cat >"$T/metadata.py" <<'PYEOF'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        ok = (self.path == "/computeMetadata/v1/project/project-id"
              and self.headers.get("Metadata-Flavor") == "Google")
        body = b"p" if ok else b"no"
        self.send_response(200 if ok else 403)
        self.send_header("Metadata-Flavor", "Google")
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
srv = http.server.HTTPServer(("127.0.0.1", 0), H)
print(srv.server_address[1], flush=True)
srv.serve_forever()
PYEOF
$PY "$T/metadata.py" >"$T/md.port" &
MD_PID=$!
for _ in $(seq 1 50); do [ -s "$T/md.port" ] && break; sleep 0.1; done
GCE_METADATA_HOST=127.0.0.1:$(cat "$T/md.port") "$BIN/tfrec2bt" --bigtable_instance=i --quiet \
    --source_glob="$T/small/data-00000-*" --bigtable_table=meta --create_table >"$T/out" 2>"$T/err"
st=$?
kill $MD_PID 2>/dev/null
n=$(bt count meta | tr -dc 0-9)
if [ $st -eq 0 ] && [ "$n" = 1000 ]; then pass project_from_metadata_server
else fail project_from_metadata_server "exit $st count '$n': $(head -c 300 "$T/err")"; fi
GCE_METADATA_HOST=127.0.0.1:$DEAD_PORT "$BIN/tfrec2bt" --bigtable_instance=i --quiet \
    --source_glob="$T/small/data-00000-*" --bigtable_table=meta >"$T/out" 2>"$T/err"
st=$?
if [ $st -eq 2 ] && grep -q "no project given and the GCE metadata server" "$T/err" &&
   grep -q -- "--project" "$T/err"; then pass no_project_clear_error
else fail no_project_clear_error "exit $st: $(head -c 300 "$T/err")"; fi

# ------------------------------------------------------------ flag forms
# A flagfile (comments, blank lines, "--name value" lines, a nested
# flagfile), overridden by a later command-line flag.
cat >"$T/inner.flags" <<EOF
--row_prefix ff_
--num_records=1000
EOF
cat >"$T/load.flags" <<EOF
# the table and its source
--project=p
--bigtable_instance i

--bigtable_table=flagfile
--source_glob=$T/small/data-00000-*
// flags may say --flag, --noflag or --flag=false
--create_table
--quiet=false
--flagfile=$T/inner.flags
EOF
"$BIN/tfrec2bt" --flagfile="$T/load.flags" --quiet >"$T/out" 2>"$T/err"
st=$?
bt read flagfile >"$T/ff.dump"
if [ $st -eq 0 ] && [ ! -s "$T/err" ] && $CHECK verify "$T/ff.dump" "$T/small/manifest.txt" ff_ 1000 0 1000 >"$T/v"; then
    pass flagfile_nested_with_comments
else fail flagfile_nested_with_comments "exit $st: $(cat "$T/err" "$T/v" | head -c 500)"; fi
# "--flag value" (two arguments) and single-dash forms
"$BIN/tfrec2bt" --project p -bigtable_instance i --bigtable_table spaced --source_glob "$T/small/data-00001-*" \
    -num_records 1000 --create_table --quiet >"$T/out" 2>"$T/err"
st=$?
n=$(bt count spaced | tr -dc 0-9)
if [ $st -eq 0 ] && [ "$n" = 1000 ]; then pass flag_value_as_next_argument
else fail flag_value_as_next_argument "exit $st count '$n': $(head -c 300 "$T/err")"; fi
# --noflag: the later --nocreate_table wins, so the missing table is an error
t2b --source_glob="$T/small/data-00000-*" --bigtable_table=never --create_table --nocreate_table \
    >"$T/out" 2>"$T/err"
st=$?
if [ $st -eq 3 ] && grep -q "tables/never does not exist" "$T/err"; then pass noflag_negates
else fail noflag_negates "exit $st: $(head -c 300 "$T/err")"; fi
# ------------------------------------------------------------ key widths and order
# no --num_records: 10-digit keys over every record
t2b --source_glob="$T/small/data-00000-*" --bigtable_table=w10 --create_table >"$T/out" 2>"$T/err"
st=$?
bt read w10 >"$T/w10.dump"
$CHECK keys "$T/w10.dump" >"$T/keys3"
if [ $st -eq 0 ] && $CHECK verify "$T/w10.dump" "$T/small/manifest.txt" train_ 0 0 1000 >"$T/v" &&
   [ "$(sed -n 1p "$T/keys3")" = train_0000000000 ]; then
    pass unset_num_records_pads_to_10
else fail unset_num_records_pads_to_10 "exit $st: $(cat "$T/err" "$T/v" | head -c 400)"; fi

t2b --source_glob="$T/small/data-*" --bigtable_table=rev --num_records=2000 --row_key_order=reversed \
    --create_table >"$T/out" 2>"$T/err"
st=$?
bt read rev >"$T/rev.dump"
if [ $st -eq 0 ] && $CHECK verify "$T/rev.dump" "$T/small/manifest.txt" train_ 2000 0 2000 reversed >"$T/v"; then
    pass reversed_key_order
else fail reversed_key_order "exit $st: $(cat "$T/err" "$T/v" | head -c 400)"; fi

it_finish "bigtable flags"
