# needs: tfrec-storage tfrec-bigtable
"""The production path over TLS with tokens, for Cloud Storage and both
parts together: Debian's nginx terminates TLS (a CA made here) in front of
the storage test server and the Bigtable emulator, and lets a request
through only with a bearer token the Google side (google_side.py) issued
and still honours (401 / UNAUTHENTICATED otherwise), refusing a denied
account (403 / PERMISSION_DENIED). The tools and the Python package reach
them as they reach storage.googleapis.com and bigtable.googleapis.com:
https:// with --storage_endpoint (or gcloud's
CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE), --ca_bundle (TFREC_CA_BUNDLE),
and credentials from each source: a service-account key (JWT verified
with python3-jwt), authorized_user (refresh token), the metadata server.

Tokens that expire or are revoked mid-upload, mid-download and mid-scan
are refreshed and the bytes / rows come out exactly once. Nothing leaves
the machine: every server listens on 127.0.0.1 and the environment is
scrubbed of real credentials. docs/testing.md has the matrix.
"""
import contextlib
import json
import os
import random
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import pytest

import tfrecord_ref
from google_side import EMAIL, EMAIL2, GCE_EMAIL, METADATA_TOKEN, USER, google_side, key_file, \
    keypair, user_file  # noqa: F401
from storage_server import REPO, ours, server  # noqa: F401
from tls_fronts import BIGTABLE_SERVER, STORAGE_SERVER, Nginx, certs, needs_nginx  # noqa: F401

pytestmark = needs_nginx

CUT_PROXY = os.path.join(REPO, "tests", "tools", "cut_proxy.py")
SOURCES = ["key", "user", "metadata"]
ACCOUNT = {"key": EMAIL, "user": "user:" + USER["client_id"], "metadata": GCE_EMAIL}


@pytest.fixture(scope="module")
def fronts(tmp_path_factory, certs, server, bigtable_emulator, google_side):  # noqa: F811
    """(storage URL, Bigtable host:port, storage backend URL) through nginx."""
    backend = server[0]
    n = Nginx(tmp_path_factory.mktemp("nginx"), certs, google_side.port,
              [(STORAGE_SERVER, backend[len("http://"):], "storage"),
               (BIGTABLE_SERVER, bigtable_emulator, "bigtable")])
    yield "https://localhost:%d" % n.ports[0], "localhost:%d" % n.ports[1], backend
    n.stop()


@pytest.fixture
def google(google_side):
    """The module's Google side, reset to hour-long tokens and no denials."""
    g = google_side
    def reset():
        g.expires_in, g.lifetime, g.check_delay, g.max_uses = 3600, None, 0.0, None
        g.denied.clear()
    reset()
    yield g
    reset()


def scrubbed_env(tmp_path):
    """The environment of a tool or Python run: no real credentials, no
    emulators (everything goes through the fronts), no proxies."""
    drop = ("GOOGLE_APPLICATION_CREDENTIALS", "CLOUDSDK_CONFIG", "GCE_METADATA_HOST",
            "GCE_METADATA_ROOT", "TFREC_GCS_TOKEN_URI", "BIGTABLE_EMULATOR_HOST",
            "STORAGE_EMULATOR_HOST", "TFREC_CA_BUNDLE", "TFREC_USER_PROJECT",
            "CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE")
    e = {k: v for k, v in os.environ.items() if k not in drop and not k.lower().endswith("_proxy")}
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    e.update(HOME=str(home), GCE_METADATA_HOST="127.0.0.1:1", NO_PROXY="*")
    return e


class Cred:
    """One credential source as a tool (flags) and a library user
    (environment) give it."""

    def __init__(self, kind, tmp_path, keypair, google, email=EMAIL):  # noqa: F811
        self.kind = kind
        self.env = scrubbed_env(tmp_path)
        self.file = None
        if kind == "key":
            self.file = key_file(tmp_path / ("key-%s.json" % email.split("@")[0]), keypair[0],
                                 google, client_email=email)
        elif kind == "user":
            self.file = user_file(tmp_path / "user.json", google)
        else:
            self.env["GCE_METADATA_HOST"] = "127.0.0.1:%d" % google.port
        if self.file:
            self.env["GOOGLE_APPLICATION_CREDENTIALS"] = str(self.file)

    def flags(self):
        return ["--credentials_file=%s" % self.file] if self.file else []


def run_tool(build_dir, tool, args, env, timeout=120):
    exe = os.path.join(build_dir, "bin", tool)
    return subprocess.run([exe] + [str(a) for a in args], env=env, capture_output=True,
                          text=True, timeout=timeout)


def gcs_flags(fronts, certs, cred, user_project=None):  # noqa: F811
    f = ["--storage_endpoint=" + fronts[0], "--ca_bundle=%s/ca.pem" % certs] + cred.flags()
    return f + (["--user_project=" + user_project] if user_project else [])


def bt_flags(endpoint, certs, cred):  # noqa: F811
    return ["--endpoint=" + endpoint, "--tls", "--ca_bundle=%s/ca.pem" % certs,
            "--project=p", "--bigtable_instance=i"] + cred.flags()


def backend_get(fronts, bucket, name):
    """An object's bytes straight from the storage server (no front, no
    client of ours): what was really stored."""
    url = "%s/storage/v1/b/%s/o/%s?alt=media" % (fronts[2], bucket,
                                                  urllib.parse.quote(name, safe=""))
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read()


def backend_list(fronts, bucket):
    with urllib.request.urlopen("%s/storage/v1/b/%s/o" % (fronts[2], bucket), timeout=30) as r:
        return sorted(o["name"] for o in json.load(r).get("items", []))


def write_records(path, n, size=300, seed=0):
    rnd = random.Random(seed)
    records = [(b"%06d" % i) + rnd.randbytes(size) for i in range(n)]
    tfrecord_ref.write_records(str(path), records)
    return records


# --------------------------------------------------------------- the matrix

PY_READ = r"""
import json, sys
import tfrec, tfrec.bigtable
a = json.loads(sys.argv[1])
gs = [bytes(r) for r in tfrec.Dataset([a["gs"]])]
bt = [bytes(v) for v in tfrec.bigtable.Dataset(
    "p", "i", a["table"], endpoint=a["endpoint"], tls=True, ca_bundle_file=a["ca"],
    credentials_file=a["cred"])]
print(json.dumps({"gs": [r.hex() for r in gs], "bt": [r.hex() for r in bt]}))
"""


@pytest.mark.parametrize("kind", SOURCES)
def test_tools_and_python_over_tls_with_each_credential_source(
        kind, build_dir, fronts, certs, google, keypair, tmp_path):  # noqa: F811
    cred = Cred(kind, tmp_path, keypair, google)
    before = len(google.checks)
    bucket, table = "tls-matrix", "matrix_" + kind
    src = tmp_path / "in-00000-of-00001"
    records = write_records(src, 200)
    gs_in = "gs://%s/%s/in-00000-of-00001" % (bucket, kind)

    # tfrec on gs://: upload (convert), then count and read back.
    res = run_tool(build_dir, "tfrec", ["convert", "-q", src, gs_in] +
                   gcs_flags(fronts, certs, cred, user_project="billing-proj"), cred.env)
    assert res.returncode == 0, res.stderr
    assert backend_get(fronts, bucket, "%s/in-00000-of-00001" % kind) == src.read_bytes()
    res = run_tool(build_dir, "tfrec", ["count", gs_in] + gcs_flags(fronts, certs, cred),
                   cred.env)
    assert res.returncode == 0 and res.stdout.split()[0] == "200", res.stdout + res.stderr

    # tfrec2bt from gs:// into Bigtable, bt2tfrec from Bigtable to gs://:
    # both parts on the same credentials and the same token.
    res = run_tool(build_dir, "tfrec2bt",
                   bt_flags(fronts[1], certs, cred) + gcs_flags(fronts, certs, cred)[:1] +
                   ["--bigtable_table=" + table, "--create_table", "--quiet",
                    "--source_glob=gs://%s/%s/in-*" % (bucket, kind),
                    "--progress_file=%s/load.progress" % tmp_path, "--num_records=200"],
                   cred.env)
    assert res.returncode == 0, res.stderr
    gs_out = "gs://%s/%s/export.tfrecord" % (bucket, kind)
    res = run_tool(build_dir, "bt2tfrec",
                   bt_flags(fronts[1], certs, cred) + gcs_flags(fronts, certs, cred)[:1] +
                   ["--bigtable_table=" + table, "--row_prefix=train_", "--quiet",
                    "--output=" + gs_out], cred.env)
    assert res.returncode == 0, res.stderr
    out = tmp_path / "export.tfrecord"
    out.write_bytes(backend_get(fronts, bucket, "%s/export.tfrecord" % kind))
    assert tfrecord_ref.read_records(str(out)) == records

    # Python: gs:// through gcloud's endpoint override and TFREC_CA_BUNDLE,
    # Bigtable through the dataset's own arguments.
    env = dict(cred.env, CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE=fronts[0] + "/storage/v1/",
               TFREC_CA_BUNDLE="%s/ca.pem" % certs, TFREC_BUILD=build_dir,
               PYTHONPATH=os.path.join(REPO, "python"))
    arg = {"gs": gs_in, "table": table, "endpoint": fronts[1], "ca": "%s/ca.pem" % certs,
           "cred": str(cred.file) if cred.file else None}
    res = subprocess.run([sys.executable, "-c", PY_READ, json.dumps(arg)], env=env,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)
    assert [bytes.fromhex(r) for r in got["gs"]] == records
    assert [bytes.fromhex(r) for r in got["bt"]] == records

    # Every request went through the fronts as this account; the billing
    # project travelled with the requests it was given to.
    checks = google.checks[before:]
    assert {c[0] for c in checks} == {"storage", "bigtable"}
    assert {c[1] for c in checks} == {ACCOUNT[kind]}
    billed = [c for c in checks if c[2]]
    assert billed and all(c[2] == "billing-proj" and "userProject=billing-proj" in c[3]
                          for c in billed)


def test_imagenet2tfrec_uploads_through_the_front(build_dir, fronts, certs, google, keypair,
                                                  tmp_path):  # noqa: F811
    from PIL import Image
    root = tmp_path / "raw"
    rnd = random.Random(5)
    for syn in ("n01440764", "n01443537"):
        (root / "train" / syn).mkdir(parents=True)
        for j in range(3):
            img = Image.new("RGB", (24 + j, 20), tuple(rnd.randrange(256) for _ in range(3)))
            img.save(root / "train" / syn / ("%s_%d.JPEG" % (syn, j)), quality=90)
    (root / "validation").mkdir()
    for j in range(2):
        Image.new("RGB", (16, 18 + j), (j * 90, 40, 200)).save(
            root / "validation" / ("ILSVRC2012_val_%08d.JPEG" % (j + 1)), quality=90)
    (root / "synset_labels.txt").write_text("n01440764\nn01443537\n")
    outs = {}
    for kind in SOURCES:
        cred = Cred(kind, tmp_path, keypair, google)
        before = len(google.checks)
        res = run_tool(build_dir, "imagenet2tfrec",
                       ["--raw_data_dir", root, "--local_scratch_dir", tmp_path / ("s-" + kind),
                        "--train_shards", 2, "--validation_shards", 1, "--seed", 1,
                        "--project=p", "--gcs_output_path=gs://tls-imagenet/" + kind, "--quiet"] +
                       gcs_flags(fronts, certs, cred), cred.env, timeout=300)
        assert res.returncode == 0, res.stderr
        assert {c[1] for c in google.checks[before:]} == {ACCOUNT[kind]}
        shards = ["train/train-00000-of-00002", "train/train-00001-of-00002",
                  "validation/validation-00000-of-00001"]
        assert [n for n in backend_list(fronts, "tls-imagenet") if n.startswith(kind + "/")] == \
            sorted(["%s/manifest.json" % kind] + ["%s/%s" % (kind, n) for n in shards])
        outs[kind] = [backend_get(fronts, "tls-imagenet", "%s/%s" % (kind, n)) for n in shards]
        assert all(outs[kind])
    assert outs["key"] == outs["user"] == outs["metadata"]


# ------------------------------------------------------ expiry and refresh

@pytest.mark.parametrize("mode,kind", [("expires", "key"), ("revoked", "key"),
                                       ("expires", "user"), ("revoked", "metadata")])
def test_token_expiring_mid_upload_and_mid_download(mode, kind, build_dir, fronts, certs, google,
                                                    keypair, ours, tmp_path):  # noqa: F811
    # 3 MiB in 256 KiB chunks and 256 KiB ranged reads, each request slowed
    # by the front's token check: several token lifetimes per transfer.
    # expires: 2 s tokens (the client refreshes ahead); revoked: tokens
    # said to last an hour die after 1.5 s (the front answers 401, the
    # client takes a fresh token and resumes the session / the range).
    if mode == "expires":
        google.expires_in = 2
    else:
        google.lifetime = 1.5
    # Each credential source refreshes its own way: a new JWT (key), the
    # refresh-token grant (user), the metadata server (metadata).
    google.check_delay = 0.3
    cred = Cred(kind, tmp_path, keypair, google)
    path = {"key": "/token", "user": "/token", "metadata": METADATA_TOKEN}[kind]
    asked0, checks0 = google.count(path), len(google.checks)
    env = dict(cred.env, CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE=fronts[0],
               TFREC_CA_BUNDLE="%s/ca.pem" % certs)
    data = random.Random(7).randbytes(3 * 1024 * 1024 + 1234)
    src = tmp_path / "blob"
    src.write_bytes(data)
    name = "expiry/%s-%s.bin" % (mode, kind)
    knobs = ["--chunk", 256 * 1024, "--read-ahead", 256 * 1024, "--parallel", 1,
             "--buffer", 64 * 1024]
    issued0, refused0 = google.issued, google.refused
    t0 = time.time()
    res = subprocess.run([ours] + [str(k) for k in knobs] +
                         ["copy", src, "gs://tls-expiry/" + name], env=env,
                         capture_output=True, text=True, timeout=120)
    took_up = time.time() - t0
    assert res.returncode == 0, res.stderr
    assert backend_get(fronts, "tls-expiry", name) == data  # every byte once
    mid, mid_refused = google.issued, google.refused
    down = tmp_path / "down"
    t0 = time.time()
    # A sequential download is one streamed GET, authorized once at its
    # start: read the object as a slice instead, one ranged GET per block
    # (the random-access path), so tokens expire between its requests.
    res = subprocess.run([ours] + [str(k) for k in knobs + ["--ranged", len(data)]] +
                         ["copy", "gs://tls-expiry/" + name, down], env=env,
                         capture_output=True, text=True, timeout=120)
    took_down = time.time() - t0
    assert res.returncode == 0, res.stderr
    assert down.read_bytes() == data
    assert took_up > 3 and took_down > 3, (took_up, took_down)
    assert mid - issued0 >= 2 and google.issued - mid >= 2, (issued0, mid, google.issued)
    assert google.count(path) - asked0 >= 4  # every token came from this source
    assert {c[1] for c in google.checks[checks0:]} == {ACCOUNT[kind]}
    if mode == "revoked":  # the front refused a dead token in each transfer
        assert mid_refused > refused0 and google.refused > mid_refused


def scan_table(build_dir, fronts, certs, cred, tmp_path, table, seed):  # noqa: F811
    """A table of 2,000 rows of 400 bytes loaded through the front, for the
    scan tests; returns the records."""
    src = tmp_path / "in-00000-of-00001"
    records = write_records(src, 2000, size=400, seed=seed)
    res = run_tool(build_dir, "tfrec2bt",
                   bt_flags(fronts[1], certs, cred) +
                   ["--bigtable_table=" + table, "--create_table", "--quiet",
                    "--source_glob=%s" % src, "--progress_file=%s.p" % src,
                    "--num_records=2000"], cred.env)
    assert res.returncode == 0, res.stderr
    return records


@contextlib.contextmanager
def cut_bigtable_front(tmp_path, certs, google, emulator, then, *more):
    """The Bigtable TLS front before the cut proxy before the emulator:
    the proxy cuts or stalls (then) at most twice; yields the front."""
    proxy = subprocess.Popen([sys.executable, CUT_PROXY, "--target", emulator, "--then", then,
                              "--max-cuts", "2", *more, "--max-seconds", "120"],
                             stdout=subprocess.PIPE, text=True)
    try:
        port = int(proxy.stdout.readline().split()[1].split("=")[1])
        (tmp_path / "nginx").mkdir()
        n = Nginx(tmp_path / "nginx", certs, google.port,
                  [(BIGTABLE_SERVER, "127.0.0.1:%d" % port, "bigtable")])
        try:
            yield n
        finally:
            n.stop()
    finally:
        proxy.terminate()
        proxy.wait(10)


@pytest.mark.parametrize("kind", SOURCES)
def test_token_revoked_mid_scan_is_refreshed(kind, build_dir, fronts, certs, google, keypair,
                                             bigtable_emulator, tmp_path):  # noqa: F811
    # A long scan's stream survives its token (the front checks a call when
    # it starts), but a stream that breaks is resumed with a new call, and
    # by then the token is dead: the resumed call is refused as
    # UNAUTHENTICATED, and the reader takes a fresh token and goes on from
    # the last row it delivered. The emulator sits behind a proxy that cuts
    # the first connections after 100 kB, and every token is honoured for
    # one call only (revoked once its call began). Each credential source
    # fetches the new token its own way.
    cred = Cred(kind, tmp_path, keypair, google)
    table = "tls_scan_" + kind
    records = scan_table(build_dir, fronts, certs, cred, tmp_path, table, 3)
    with cut_bigtable_front(tmp_path, certs, google, bigtable_emulator, "down:100000") as n:
        google.max_uses = 1
        refused0, issued0 = google.refused, google.issued
        path = METADATA_TOKEN if kind == "metadata" else "/token"
        asked0, checks0 = google.count(path), len(google.checks)
        args = bt_flags("localhost:%d" % n.ports[0], certs, cred)
        res = run_tool(build_dir, "bt2tfrec",
                       args + ["--bigtable_table=" + table, "--row_prefix=train_",
                               "--retry_timeout=60", "--output=%s" % (tmp_path / "out")],
                       cred.env)
    assert res.returncode == 0, res.stderr
    assert tfrecord_ref.read_records(str(tmp_path / "out")) == records
    assert google.refused > refused0 and google.issued - issued0 >= 2
    assert google.count(path) - asked0 >= 2
    assert {c[1] for c in google.checks[checks0:]} == {ACCOUNT[kind]}


PY_SCAN = r"""
import json, sys
import tfrec.bigtable
a = json.loads(sys.argv[1])
rows = [r.value() for r in tfrec.bigtable.Reader(
    "p", "i", a["table"], prefix="train_", endpoint=a["endpoint"], tls=True,
    ca_bundle_file=a["ca"], credentials_file=a["cred"], rpc_timeout_ms=a["stall_ms"])]
print(json.dumps([r.hex() for r in rows]))
"""


@pytest.mark.parametrize("kind", SOURCES)
def test_token_expiring_mid_scan_is_refreshed_ahead(kind, build_dir, fronts, certs, google,
                                                    keypair, bigtable_emulator, tmp_path):  # noqa: F811
    # The Python Reader's scan goes silent twice (the proxy behind the
    # front stops forwarding after 100 kB on two connections); after 3 s
    # without a message (rpc_timeout_ms) it resumes with a new call from
    # the last row it delivered. Tokens last 4 s and are refreshed 2 s
    # ahead, so each resumed call, at least 3 s after the call before it
    # took its token, goes with a new one, fetched ahead, not after a
    # refusal. A slower machine only makes the silences longer.
    cred = Cred(kind, tmp_path, keypair, google)
    table = "tls_scan_expiry_" + kind
    records = scan_table(build_dir, fronts, certs, cred, tmp_path, table, 4)
    cuts = tmp_path / "cuts"
    with cut_bigtable_front(tmp_path, certs, google, bigtable_emulator, "down:100000/stall",
                            "--status-file", str(cuts)) as n:
        google.expires_in = 4
        refused0, issued0 = google.refused, google.issued
        path = METADATA_TOKEN if kind == "metadata" else "/token"
        asked0, checks0 = google.count(path), len(google.checks)
        env = dict(cred.env, TFREC_BUILD=build_dir, PYTHONPATH=os.path.join(REPO, "python"))
        arg = {"table": table, "endpoint": "localhost:%d" % n.ports[0],
               "ca": "%s/ca.pem" % certs, "cred": str(cred.file) if cred.file else None,
               "stall_ms": 3000}
        res = subprocess.run([sys.executable, "-c", PY_SCAN, json.dumps(arg)], env=env,
                             capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert [bytes.fromhex(r) for r in json.loads(res.stdout)] == records  # every row once
    assert cuts.read_text().split() == ["2"]
    # A token for the first call and one for each resumed call; none
    # refused (one refusal is survivable, should a call take 2 s from
    # taking its token to the front's check).
    tokens = google.issued - issued0
    assert tokens >= 3 and google.refused - refused0 <= 1, (tokens, google.refused - refused0)
    assert google.count(path) - asked0 == tokens
    assert {c[1] for c in google.checks[checks0:]} == {ACCOUNT[kind]}


# ------------------------------------------------------------------ errors

def small_load(build_dir, fronts, certs, cred, tmp_path, table):  # noqa: F811
    """tfrec2bt of 3 records through the Bigtable front."""
    src = tmp_path / "small-00000-of-00001"
    write_records(src, 3)
    return run_tool(build_dir, "tfrec2bt",
                    bt_flags(fronts[1], certs, cred) +
                    ["--bigtable_table=" + table, "--create_table", "--quiet",
                     "--source_glob=%s" % src, "--progress_file=%s.p" % src], cred.env)


@pytest.mark.parametrize("kind", SOURCES)
def test_401_and_unauthenticated_name_the_account_and_the_fix(kind, build_dir, fronts, certs,
                                                              google, keypair, tmp_path):  # noqa: F811
    # The token endpoint issues tokens the fronts never honour: one fresh
    # token is tried, then the error names the account and what to do.
    google.lifetime = -1
    who = {"key": EMAIL, "user": "user credentials (OAuth client %s)" % USER["client_id"],
           "metadata": GCE_EMAIL + " (the metadata server's default service account)"}[kind]
    cred = Cred(kind, tmp_path, keypair, google)
    res = run_tool(build_dir, "tfrec", ["count", "gs://tls-matrix/key/in-00000-of-00001"] +
                   gcs_flags(fronts, certs, cred), cred.env)
    assert res.returncode != 0
    err = res.stderr
    assert "HTTP 401" in err and who in err, err
    assert "gcloud auth application-default login" in err and "revoked" in err, err
    res = small_load(build_dir, fronts, certs, cred, tmp_path, "tls_unauth")
    assert res.returncode != 0
    err = res.stderr
    assert "UNAUTHENTICATED" in err and "the access token of %s was refused" % who in err, err


def test_403_and_permission_denied_name_the_account_and_the_role(
        build_dir, fronts, certs, google, keypair, tmp_path):  # noqa: F811
    # A second service account whose tokens are good but which the fronts
    # deny, as an account without the IAM role.
    google.denied.add(EMAIL2)
    cred = Cred("key", tmp_path, keypair, google, email=EMAIL2)
    src = tmp_path / "x.tfrecord"
    write_records(src, 3)
    res = run_tool(build_dir, "tfrec", ["convert", "-q", src, "gs://tls-denied/x.tfrecord"] +
                   gcs_flags(fronts, certs, cred), cred.env)
    assert res.returncode != 0
    assert "HTTP 403" in res.stderr and EMAIL2 in res.stderr, res.stderr
    assert "roles/storage.objectUser" in res.stderr, res.stderr
    res = small_load(build_dir, fronts, certs, cred, tmp_path, "tls_denied")
    assert res.returncode != 0
    assert "PERMISSION_DENIED" in res.stderr and EMAIL2 in res.stderr, res.stderr
    assert "roles/bigtable.admin" in res.stderr, res.stderr


def test_storage_wrong_ca_fails_fast_naming_endpoint_and_flag(build_dir, fronts, certs, google,
                                                             keypair, tmp_path):  # noqa: F811
    cred = Cred("key", tmp_path, keypair, google)
    flags = gcs_flags(fronts, certs, cred)
    flags[1] = "--ca_bundle=%s/other-ca.pem" % certs
    t0 = time.time()
    res = run_tool(build_dir, "tfrec", ["count", "gs://tls-matrix/key/in-00000-of-00001"] + flags,
                   cred.env)
    assert res.returncode != 0
    err = res.stderr
    assert "TLS handshake failed" in err and "--ca_bundle" in err, err
    assert fronts[0] in err, err
    assert time.time() - t0 < 20  # not retried as if the network were down


@pytest.mark.parametrize("endpoint", ["http://10.0.0.1:9199", "http://localhost.example.com",
                                      "http://127.0.0.1@example.com"])
def test_plain_text_endpoint_only_to_loopback(build_dir, endpoint, tmp_path):
    res = run_tool(build_dir, "tfrec", ["count", "gs://b/x", "--storage_endpoint=" + endpoint],
                   scrubbed_env(tmp_path))
    assert res.returncode != 0
    assert "only to localhost, 127.0.0.0/8 or ::1" in res.stderr, res.stderr
