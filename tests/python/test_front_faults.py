# needs: tfrec-storage tfrec-bigtable
"""Faults as Google's services produce them, injected on the TLS fronts of
test_storage_tls.py (nginx, a CA made here, bearer tokens from the Google
side of google_side.py), and the billing project of Bigtable calls:

- Cloud Storage answering 429 and 503 with Retry-After mid-upload and
  mid-download (the storage test server injects them behind the front):
  the client waits at least as long as asked, within its retry deadline,
  and the bytes come out identical; a Retry-After beyond the deadline ends
  the retries at once instead of sleeping past it.
- HTTP/2 GOAWAY from the Bigtable front (`keepalive_requests 5`: nginx
  closes every connection after five calls with GOAWAY) mid-load and
  mid-scan: calls move to new connections, and every row arrives once.
- --user_project / TFREC_USER_PROJECT on Bigtable calls, and the Python
  user_project= argument of tfrec.bigtable's Writer, plan, Reader,
  Dataset and export: the front sees x-goog-user-project on each of them.

docs/testing.md (the production-path matrix) lists these cases. Every
server listens on 127.0.0.1 and is stopped by its PID.
"""
import base64
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

import tfrecord_ref
from google_side import google_side, keypair  # noqa: F401
from storage_server import REPO, ours, server  # noqa: F401
from test_storage_tls import Cred, backend_get, bt_flags, fronts, google, run_tool, \
    write_records  # noqa: F401
from tls_fronts import BIGTABLE_SERVER, Nginx, certs, needs_nginx  # noqa: F401

pytestmark = needs_nginx


def admin(server, route, body=None):  # noqa: F811
    """A call to the storage test server's admin port."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(server[1] + route, data=data, method="POST" if data else "GET")
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


def ours_env(cred, fronts, certs):  # noqa: F811
    return dict(cred.env, CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE=fronts[0],
                TFREC_CA_BUNDLE="%s/ca.pem" % certs)


def waits_after_injections(log):
    """(status, Retry-After ms asked, ms until the next request of the same
    method) for every injected answer in the server's request log."""
    out = []
    log = sorted(log, key=lambda e: e["t"])
    for i, e in enumerate(log):
        if not e.get("injected"):
            continue
        nxt = next((f for f in log[i + 1:] if f["method"] == e["method"]), None)
        assert nxt, "no request after the injected %s" % e
        out.append((e["injected"], nxt["t"] - e["t"]))
    return out


# ------------------------------------------------ Cloud Storage 429 / 503

def test_429_and_503_with_retry_after_mid_upload_and_mid_download(
        build_dir, fronts, certs, google, keypair, ours, server, tmp_path):  # noqa: F811
    cred = Cred("key", tmp_path, keypair, google)
    env = ours_env(cred, fronts, certs)
    data = random.Random(11).randbytes(1024 * 1024 + 777)
    src = tmp_path / "blob"
    src.write_bytes(data)
    knobs = ["--chunk", 256 * 1024, "--read-ahead", 256 * 1024, "--parallel", 1]
    admin(server, "/reset", {"objects": False})
    # The second chunk's PUT: 429 asking for 2 s; then a 503 asking for 1 s.
    admin(server, "/inject", {"status": 429, "method": "PUT", "path": "upload_id",
                              "retry_after": 2, "count": 1})
    admin(server, "/inject", {"status": 503, "method": "PUT", "path": "upload_id",
                              "retry_after": 1, "count": 1})
    res = subprocess.run([ours] + [str(k) for k in knobs] +
                         ["copy", src, "gs://fault-bucket/up.bin"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert backend_get(fronts, "fault-bucket", "up.bin") == data
    assert admin(server, "/pending")["pending"] == []
    waits = waits_after_injections(admin(server, "/log")["requests"])
    assert [w[0] for w in waits] == [429, 503], waits
    assert waits[0][1] >= 1950 and waits[1][1] >= 950, waits  # Retry-After honoured

    # Mid-download: the ranged reads after the first are answered 503 and
    # 429 with Retry-After: 1.
    admin(server, "/reset", {"objects": False})
    admin(server, "/inject", {"status": 503, "method": "GET", "path": "alt=media",
                              "retry_after": 1, "count": 1})
    admin(server, "/inject", {"status": 429, "method": "GET", "path": "alt=media",
                              "retry_after": 1, "count": 1})
    down = tmp_path / "down"
    res = subprocess.run([ours] + [str(k) for k in knobs] +
                         ["copy", "gs://fault-bucket/up.bin", down], env=env,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert down.read_bytes() == data
    assert admin(server, "/pending")["pending"] == []
    waits = waits_after_injections(admin(server, "/log")["requests"])
    assert sorted(w[0] for w in waits) == [429, 503], waits
    assert all(w[1] >= 950 for w in waits), waits


def test_retry_after_beyond_the_deadline_ends_the_retries_at_once(
        build_dir, fronts, certs, google, keypair, ours, server, tmp_path):  # noqa: F811
    # A server asking for an hour: the wait is bounded (60 s at most, never
    # past the operation's retry deadline), so with a 20 s deadline the
    # client gives up now and says what the server answered.
    cred = Cred("key", tmp_path, keypair, google)
    env = ours_env(cred, fronts, certs)
    src = tmp_path / "small"
    src.write_bytes(b"x" * 1000)
    res = subprocess.run([ours, "copy", src, "gs://fault-bucket/small.bin"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    admin(server, "/reset", {"objects": False})
    admin(server, "/inject", {"status": 503, "method": "GET", "path": "alt=media",
                              "retry_after": 3600, "count": 5})
    t0 = time.time()
    res = subprocess.run([ours, "--deadline-ms", "20000", "copy", "gs://fault-bucket/small.bin",
                          tmp_path / "out"], env=env, capture_output=True, text=True,
                         timeout=60)
    took = time.time() - t0
    admin(server, "/reset", {"objects": False})
    assert res.returncode != 0
    assert "HTTP 503" in res.stderr, res.stderr
    assert took < 10, took


# ------------------------------------------------------- Bigtable GOAWAY

@pytest.fixture
def goaway_front(tmp_path, certs, bigtable_emulator, google):  # noqa: F811
    """A Bigtable front whose connections end with GOAWAY after 5 calls;
    its access log shows each call's connection and its number on it."""
    tmpl = BIGTABLE_SERVER.replace("ssl_certificate ", "keepalive_requests 5;\n"
                                   "        access_log %(dir)s/calls.log calls;\n"
                                   "        ssl_certificate ", 1)
    d = tmp_path / "nginx"
    d.mkdir()
    n = Nginx(d, certs, google.port, [(tmpl.replace("%(dir)s", str(d)), bigtable_emulator,
                                       "bigtable")])
    yield "localhost:%d" % n.ports[0], d / "calls.log"
    n.stop()


def connections(log):
    """{connection number: calls on it} of the front's data calls."""
    conns = {}
    for line in log.read_text().splitlines():
        m = re.match(r"(\d+) (\d+) (\S+)", line)
        if m and "/google.bigtable.v2.Bigtable/" in m.group(3):
            conns[m.group(1)] = max(conns.get(m.group(1), 0), int(m.group(2)))
    return conns


def load_through(build_dir, front, certs, cred, table, src, *more):  # noqa: F811
    """tfrec2bt of src into a new table through the Bigtable front."""
    return run_tool(build_dir, "tfrec2bt",
                    bt_flags(front, certs, cred) +
                    ["--bigtable_table=" + table, "--create_table", "--quiet",
                     "--source_glob=%s" % src, "--progress_file=%s.p" % src, *more], cred.env)


def test_goaway_mid_load_and_mid_scan(build_dir, goaway_front, certs, google, keypair,
                                      bigtable_emulator, tmp_path):  # noqa: F811
    front, log = goaway_front
    cred = Cred("key", tmp_path, keypair, google)
    src = tmp_path / "in-00000-of-00001"
    records = write_records(src, 400, size=200, seed=4)
    # 40 MutateRows calls of 10 rows, one at a time: eight connections.
    res = load_through(build_dir, front, certs, cred, "goaway", src, "--batch_rows=10",
                       "--max_inflight=1")
    assert res.returncode == 0, res.stderr
    loaded = connections(log)
    assert len(loaded) >= 6 and max(loaded.values()) <= 5, loaded
    log.write_text("")
    # A scan cut into 40 ranges read by 2 readers: each reader's calls
    # cross GOAWAYs.
    keys = tmp_path / "splits"
    keys.write_text("".join("train_%06d\n" % (i * 10) for i in range(1, 40)))
    out = tmp_path / "out"
    res = run_tool(build_dir, "bt2tfrec",
                   bt_flags(front, certs, cred) +
                   ["--bigtable_table=goaway", "--row_prefix=train_", "--quiet",
                    "--parallel_scans=40", "--split_keys_file=%s" % keys,
                    "--output=%s" % out], cred.env)
    assert res.returncode == 0, res.stderr
    assert tfrecord_ref.read_records(str(out)) == records
    scanned = connections(log)
    assert sum(scanned.values()) >= 40 and max(scanned.values()) <= 5, scanned


# ------------------------------------------------- Bigtable user project

@pytest.mark.parametrize("how", ["flag", "env"])
def test_bigtable_calls_carry_the_user_project(how, build_dir, fronts, certs, google, keypair,
                                               tmp_path):  # noqa: F811
    cred = Cred("user", tmp_path, keypair, google)
    src = tmp_path / "in-00000-of-00001"
    records = write_records(src, 20)
    env, extra = cred.env, []
    if how == "flag":
        extra = ["--user_project=bt-billing"]
    else:
        env = dict(env, TFREC_USER_PROJECT="bt-billing")
    before = len(google.checks)
    table = "billed_" + how
    res = run_tool(build_dir, "tfrec2bt",
                   bt_flags(fronts[1], certs, cred) + extra +
                   ["--bigtable_table=" + table, "--create_table", "--quiet",
                    "--source_glob=%s" % src, "--progress_file=%s.p" % src], env)
    assert res.returncode == 0, res.stderr
    out = tmp_path / "out"
    res = run_tool(build_dir, "bt2tfrec",
                   bt_flags(fronts[1], certs, cred) + extra +
                   ["--bigtable_table=" + table, "--row_prefix=train_", "--quiet",
                    "--output=%s" % out], env)
    assert res.returncode == 0, res.stderr
    assert tfrecord_ref.read_records(str(out)) == records
    calls = [c for c in google.checks[before:] if c[0] == "bigtable"]
    methods = {c[3].rsplit("/", 1)[-1] for c in calls}
    assert {"MutateRows", "ReadRows"} <= methods, methods
    assert calls and all(c[2] == "bt-billing" for c in calls), calls


PY_BILLED = r"""
import json, sys
import tfrec, tfrec.bigtable as bt
a = json.loads(sys.argv[1])
conn = dict(endpoint=a["endpoint"], tls=True, ca_bundle_file=a["ca"], credentials_file=a["cred"])
with bt.Writer("p", "i", a["table"], create_table=True, user_project="bill-writer",
               **conn) as w:
    for i in range(30):
        w.put(b"train_%03d" % i, b"value-%d" % i)
plan = bt.plan("p", "i", a["table"], 2, prefix=b"train_", user_project="bill-plan", **conn)
with bt.Reader("p", "i", a["table"], prefix=b"train_", user_project="bill-reader",
               **conn) as r:
    read = [bytes(row.value()) for row in r]
# The plan's cuts come from the emulator's random SampleRowKeys: a share
# may hold every row or none, the two shares together each row once.
ds = [bytes(v) for k in range(2)
      for v in bt.Dataset("p", "i", a["table"], shard=(k, 2), plan=plan,
                          user_project="bill-dataset", **conn)]
st = bt.export("p", "i", a["table"], a["out"], user_project="bill-export", part_file=False,
               **conn)
print(json.dumps({"read": len(read), "dataset": len(ds), "distinct": len(set(ds)),
                  "exported": st["rows"]}))
"""


def test_python_bigtable_calls_carry_the_user_project_argument(
        build_dir, fronts, certs, google, keypair, tmp_path):  # noqa: F811
    # user_project= of Writer, plan, Reader, Dataset and export: each
    # call of each reaches the front with that x-goog-user-project, and
    # TFREC_USER_PROJECT (set too) gives way to the argument.
    cred = Cred("key", tmp_path, keypair, google)
    env = dict(cred.env, TFREC_USER_PROJECT="from-env", PYTHONPATH=os.path.join(REPO, "python"),
               TFREC_LIBRARY=os.path.join(build_dir, "libtfrec.so"))
    arg = {"endpoint": fronts[1], "ca": "%s/ca.pem" % certs, "cred": str(cred.file),
           "table": "billed_py", "out": str(tmp_path / "export.tfrecord")}
    before = len(google.checks)
    res = subprocess.run([sys.executable, "-c", PY_BILLED, json.dumps(arg)], env=env,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)
    assert got["read"] == got["exported"] == got["dataset"] == got["distinct"] == 30, got
    calls = [c for c in google.checks[before:] if c[0] == "bigtable"]
    by_project = {}
    for c in calls:
        by_project.setdefault(c[2], set()).add(c[3].rsplit("/", 1)[-1])
    assert by_project.keys() == {"bill-writer", "bill-plan", "bill-reader", "bill-dataset",
                                 "bill-export"}, by_project
    assert "MutateRows" in by_project["bill-writer"], by_project
    assert "SampleRowKeys" in by_project["bill-plan"], by_project
    for p in ("bill-reader", "bill-dataset", "bill-export"):
        assert "ReadRows" in by_project[p], by_project


# ---------------------------------- Bigtable RESOURCE_EXHAUSTED / UNAVAILABLE

def test_resource_exhausted_and_unavailable_calls_are_retried(
        build_dir, fronts, certs, google, keypair, tmp_path):  # noqa: F811
    # The front fails whole calls as Bigtable under load does: MutateRows
    # and ReadRows answered RESOURCE_EXHAUSTED (throttling) and UNAVAILABLE.
    # The load re-sends those rows, the scan re-reads those ranges: every
    # row arrives once.
    cred = Cred("key", tmp_path, keypair, google)
    src = tmp_path / "in-00000-of-00001"
    records = write_records(src, 300, size=100, seed=8)
    google.faults[:] = [["MutateRows", 8, 3], ["MutateRows", 14, 3]]
    google.faulted.clear()
    try:
        res = load_through(build_dir, fronts[1], certs, cred, "throttled", src,
                           "--batch_rows=10", "--max_inflight=1")
        assert res.returncode == 0, res.stderr
        assert [f[1] for f in google.faulted] == [8, 8, 8, 14, 14, 14], google.faulted
        google.faults[:] = [["ReadRows", 14, 2], ["ReadRows", 8, 2]]
        google.faulted.clear()
        out = tmp_path / "out"
        res = run_tool(build_dir, "bt2tfrec",
                       bt_flags(fronts[1], certs, cred) +
                       ["--bigtable_table=throttled", "--row_prefix=train_", "--quiet",
                        "--parallel_scans=4", "--output=%s" % out], cred.env)
        assert res.returncode == 0, res.stderr
        assert [f[1] for f in google.faulted] == [14, 14, 8, 8], google.faulted
    finally:
        google.faults.clear()
    assert tfrecord_ref.read_records(str(out)) == records


# ------------------- Bigtable per-entry failures and mid-stream ReadRows

def btfaults_bin():
    """scripts/go/btfaults built from Debian's Go sources, cached as
    scripts/emulator.sh caches its emulator build."""
    src = os.path.join(REPO, "scripts", "go", "btfaults")
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                         "tfrec")
    exe = os.path.join(cache, "btfaults")
    main = os.path.join(src, "main.go")
    if not os.access(exe, os.X_OK) or os.path.getmtime(exe) < os.path.getmtime(main):
        os.makedirs(cache, exist_ok=True)
        env = dict(os.environ, GOPATH="/usr/share/gocode", GO111MODULE="off", GOFLAGS="",
                   GOCACHE=os.path.join(cache, "gocache"))
        subprocess.run(["go", "build", "-o", exe, "."], cwd=src, env=env, check=True,
                       timeout=600)
    return exe


def btfaults_front(tmp_path, certs, google, args):  # noqa: F811
    """btfaults with these flags behind a TLS front: yields the front's
    address and btfaults' log."""
    err = open(tmp_path / "btfaults.err", "w")
    proc = subprocess.Popen([btfaults_bin()] + args,
                            stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        addr = proc.stdout.readline().split()[-1]
        d = tmp_path / "nginx"
        d.mkdir()
        n = Nginx(d, certs, google.port, [(BIGTABLE_SERVER, addr, "bigtable")])
        try:
            yield "localhost:%d" % n.ports[0], tmp_path / "btfaults.err"
        finally:
            n.stop()
    finally:
        proc.terminate()
        proc.wait(10)
        err.close()


@pytest.fixture
def faulty_bigtable(tmp_path, certs, google):  # noqa: F811
    """A TLS front before btfaults: MutateRows entries 7, 14, ... (six in
    all) fail RESOURCE_EXHAUSTED and UNAVAILABLE in turn, unapplied; the
    first two ReadRows streams end after 40 rows with the same codes."""
    yield from btfaults_front(tmp_path, certs, google,
                              ["-entry_every", "7", "-entry_failures", "6", "-read_after", "40",
                               "-read_failures", "2", "-codes", "8,14"])


def test_failed_mutate_entries_and_broken_read_streams(build_dir, faulty_bigtable, certs,
                                                       google, keypair, tmp_path):  # noqa: F811
    front, log = faulty_bigtable
    cred = Cred("key", tmp_path, keypair, google)
    src = tmp_path / "in-00000-of-00001"
    records = write_records(src, 300, size=100, seed=9)
    res = load_through(build_dir, front, certs, cred, "entries", src, "--batch_rows=20")
    assert res.returncode == 0, res.stderr
    out = tmp_path / "out"
    res = run_tool(build_dir, "bt2tfrec",
                   bt_flags(front, certs, cred) +
                   ["--bigtable_table=entries", "--row_prefix=train_", "--quiet",
                    "--output=%s" % out], cred.env)
    assert res.returncode == 0, res.stderr
    # Every row once: the failed entries were re-sent (they were never
    # applied), the broken streams resumed after their last row.
    assert tfrecord_ref.read_records(str(out)) == records
    injected = log.read_text().split("\n")
    assert [" ".join(l.split()[:2]) for l in injected if l.startswith("entry")] == \
        ["entry 8", "entry 14"] * 3
    assert [" ".join(l.split()[:3]) for l in injected if l.startswith("stream")] == \
        ["stream 8 40", "stream 14 40"]


def test_front_reloaded_mid_scan(build_dir, goaway_front, certs, google, keypair,
                                 bigtable_emulator, tmp_path):  # noqa: F811
    # nginx reloaded twice (SIGHUP to the master started here) while a scan
    # of 40 ranges runs, each call slowed by the token check: the old
    # workers finish their streams and send GOAWAY, later calls reach the
    # new workers, and the output is the input.
    front, log = goaway_front
    cred = Cred("key", tmp_path, keypair, google)
    src = tmp_path / "in-00000-of-00001"
    records = write_records(src, 400, size=200, seed=6)
    res = load_through(build_dir, front, certs, cred, "reloaded", src)
    assert res.returncode == 0, res.stderr
    keys = tmp_path / "splits"
    keys.write_text("".join("train_%06d\n" % (i * 10) for i in range(1, 40)))
    out = tmp_path / "out"
    pid = int((log.parent / "nginx.pid").read_text())
    google.check_delay = 0.3
    t0 = time.time()
    try:
        proc = subprocess.Popen([os.path.join(build_dir, "bin", "bt2tfrec")] +
                                bt_flags(front, certs, cred) +
                                ["--bigtable_table=reloaded", "--row_prefix=train_", "--quiet",
                                 "--parallel_scans=40", "--split_keys_file=%s" % keys,
                                 "--output=%s" % out], env=cred.env,
                                stderr=subprocess.PIPE, text=True)
        reloads = 0
        for _ in range(2):
            time.sleep(0.5)
            if proc.poll() is None:
                os.kill(pid, signal.SIGHUP)
                reloads += 1
        err = proc.communicate(timeout=120)[1]
    finally:
        google.check_delay = 0.0
    took = time.time() - t0
    assert proc.returncode == 0, err
    assert reloads == 2, "the scan ended before the reloads (%.1f s)" % took
    assert tfrecord_ref.read_records(str(out)) == records
    assert len(connections(log)) >= 2


# ------------------------- Bigtable RetryInfo: the server's own retry delay

RETRY_DELAY_MS = 1500


@pytest.fixture
def throttling_bigtable(tmp_path, certs, google):  # noqa: F811
    """btfaults failing the first two MutateRows calls whole, then two
    entries of later calls, then the first ReadRows stream after 40 rows,
    RESOURCE_EXHAUSTED and UNAVAILABLE in turn, each with a
    google.rpc.RetryInfo of RETRY_DELAY_MS (in grpc-status-details-bin, or
    in the entry's status details)."""
    yield from btfaults_front(tmp_path, certs, google,
                              ["-call_failures", "2", "-entry_every", "50", "-entry_failures", "2",
                               "-read_after", "40", "-read_failures", "1",
                               "-codes", "8,14", "-retry_delay_ms", str(RETRY_DELAY_MS)])


def test_retry_info_delay_is_honoured_by_writer_and_reader(
        build_dir, throttling_bigtable, certs, google, keypair, tmp_path):  # noqa: F811
    # Google's clients wait the RetryInfo delay a throttled answer names
    # instead of their own backoff (which starts at 100 ms here): the rows
    # of each failed MutateRows call are re-sent, and the failed scan
    # resumed, no sooner than the delay after the failure, by btfaults' clock;
    # so are the failed entries of successful calls.
    front, log = throttling_bigtable
    cred = Cred("key", tmp_path, keypair, google)
    src = tmp_path / "in-00000-of-00001"
    records = write_records(src, 200, size=100, seed=12)
    res = load_through(build_dir, front, certs, cred, "retryinfo", src, "--batch_rows=20",
                       "--max_inflight=1")
    assert res.returncode == 0, res.stderr
    out = tmp_path / "out"
    res = run_tool(build_dir, "bt2tfrec",
                   bt_flags(front, certs, cred) +
                   ["--bigtable_table=retryinfo", "--row_prefix=train_", "--quiet",
                    "--parallel_scans=1", "--output=%s" % out], cred.env)
    assert res.returncode == 0, res.stderr
    assert tfrecord_ref.read_records(str(out)) == records

    lines = [l.split() for l in log.read_text().split("\n") if l]
    # Every data call said it honours RetryInfo: FeatureFlags{retry_info
    # (field 7): true}, URL-safe base64, in bigtable-features.
    features = {(l[1], l[2] if len(l) > 2 else "") for l in lines if l[0] == "features"}
    assert {f[0] for f in features} >= {"/google.bigtable.v2.Bigtable/MutateRows",
                                        "/google.bigtable.v2.Bigtable/ReadRows"}, features
    assert {base64.urlsafe_b64decode(f[1]) for f in features} == {b"\x38\x01"}, features
    failed = [(int(l[2]), l[3].split(",")) for l in lines if l[0] == "call"]
    failed += [(int(l[2]), [l[3]]) for l in lines if l[0] == "entry"]
    assert [l[1] for l in lines if l[0] in ("call", "entry", "stream")] == \
        ["8", "14", "8", "14", "8"], lines
    sent = [(int(l[1]), l[2].split(",") if len(l) > 2 else []) for l in lines
            if l[0] == "mutate"]
    waits = []
    for t_fail, keys in failed:
        for key in keys:
            again = [t for t, k in sent if t > t_fail and key in k]
            assert again, "row %s never re-sent" % key
            waits.append(again[0] - t_fail)
    assert min(waits) >= RETRY_DELAY_MS - 20, waits
    t_cut = [int(l[3]) for l in lines if l[0] == "stream"][0]
    resumed = [int(l[1]) for l in lines if l[0] == "read" and int(l[1]) > t_cut]
    assert resumed and resumed[0] - t_cut >= RETRY_DELAY_MS - 20, (t_cut, resumed)
