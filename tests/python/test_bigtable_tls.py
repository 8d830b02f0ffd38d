# needs: tfrec-bigtable
"""Bigtable over TLS with tokens from the shared Google auth module
(lib/gauth), as a production run goes: tfrec2bt and bt2tfrec talk to a TLS
front (Debian's nginx: `listen ssl http2`, `grpc_pass` to the emulator)
that holds a certificate from a CA made here and lets a call through only
with a bearer token the fake token endpoint (google_side.py, the fixtures
of test_gauth.py) issued and has not expired; anything else is answered
with grpc-status 16 (UNAUTHENTICATED). Nothing leaves the machine: every
server listens on 127.0.0.1 and the environment is scrubbed of real
credentials.
"""
import os
import subprocess
import time

import pytest

import tfrecord_ref
from google_side import EMAIL, GCE_EMAIL, METADATA_TOKEN, USER, google_side, key_file, \
    keypair, user_file  # noqa: F401
from tls_fronts import BIGTABLE_SERVER, Nginx, certs, needs_nginx  # noqa: F401

pytestmark = needs_nginx


@pytest.fixture(scope="module")
def front(tmp_path_factory, certs, bigtable_emulator, google_side):
    n = Nginx(tmp_path_factory.mktemp("nginx"), certs, google_side.port,
              [(BIGTABLE_SERVER, bigtable_emulator, "bigtable")])
    yield "localhost:%d" % n.ports[0]
    n.stop()


@pytest.fixture
def env(tmp_path, bigtable_emulator):
    e = {k: v for k, v in os.environ.items()
         if k not in ("GOOGLE_APPLICATION_CREDENTIALS", "CLOUDSDK_CONFIG", "GCE_METADATA_HOST",
                      "GCE_METADATA_ROOT", "TFREC_GCS_TOKEN_URI", "BIGTABLE_EMULATOR_HOST",
                      "TFREC_CA_BUNDLE")
         and not k.lower().endswith("_proxy")}
    home = tmp_path / "home"
    home.mkdir()
    e.update(HOME=str(home), GCE_METADATA_HOST="127.0.0.1:1", NO_PROXY="*")
    return e


def cbt(emulator, *args):
    e = dict(os.environ, BIGTABLE_EMULATOR_HOST=emulator)
    return subprocess.run(["cbt", "-project", "p", "-instance", "i"] + list(args), env=e,
                          capture_output=True, text=True, timeout=120, check=True).stdout


def write_input(tmp_path, n, size=200):
    records = [(b"%08d" % i) * (size // 8) for i in range(n)]
    path = tmp_path / "in-00000-of-00001"
    tfrecord_ref.write_records(str(path), records)
    return path, records


def run_tool(build_dir, tool, args, env, timeout=300):
    exe = os.path.join(build_dir, "bin", tool)
    return subprocess.run([exe] + args, env=env, capture_output=True, text=True, timeout=timeout)


def tls_args(front, certs, key):
    return ["--endpoint=" + front, "--tls", "--ca_bundle=%s/ca.pem" % certs,
            "--credentials_file=%s" % key, "--project=p", "--bigtable_instance=i"]


def load(build_dir, front, certs, key, table, src, env, extra=()):
    return run_tool(build_dir, "tfrec2bt",
                    tls_args(front, certs, key) +
                    ["--bigtable_table=" + table, "--create_table", "--quiet",
                     "--source_glob=%s" % src, "--progress_file=%s.progress" % src,
                     "--num_records=%d" % 10 ** 6] + list(extra), env)


def read_back(build_dir, front, certs, key, table, out, env):
    res = run_tool(build_dir, "bt2tfrec",
                   tls_args(front, certs, key) +
                   ["--bigtable_table=" + table, "--row_prefix=train_", "--quiet",
                    "--output=%s" % out], env)
    assert res.returncode == 0, res.stderr
    return tfrecord_ref.read_records(str(out))


def test_load_and_read_through_the_tls_front(build_dir, front, certs, google_side, keypair,  # noqa: F811
                                             bigtable_emulator, tmp_path, env):
    key = key_file(tmp_path / "key.json", keypair[0], google_side)
    src, records = write_input(tmp_path, 500)
    before = google_side.count()
    res = load(build_dir, front, certs, key, "tls_basic", src, env)
    assert res.returncode == 0, res.stderr
    assert cbt(bigtable_emulator, "count", "tls_basic").split()[-1] == "500"
    # One token for the admin call, the data channels and every call.
    assert google_side.count() - before == 1
    assert read_back(build_dir, front, certs, key, "tls_basic", tmp_path / "out", env) == records


def test_call_without_a_token_is_refused(build_dir, front, certs, tmp_path, env):
    # Plain insecure gRPC to the TLS port and a TLS call without a token
    # both fail; the second as UNAUTHENTICATED from the front.
    src, _ = write_input(tmp_path, 10)
    e = dict(env, TFREC_GCS_TOKEN_URI="http://127.0.0.1:1/token")
    key = tmp_path / "nokey.json"
    key.write_text('{"type": "authorized_user", "client_id": "a", "client_secret": "b", '
                   '"refresh_token": "c"}')
    res = load(build_dir, front, certs, key, "tls_none", src, e)
    assert res.returncode == 3, res.stderr
    assert "127.0.0.1:1/token" in res.stderr and "c\"" not in res.stderr


@pytest.mark.parametrize("mode", ["expires", "revoked"])
def test_token_expiring_mid_load_is_refreshed(build_dir, front, certs, google_side, keypair,  # noqa: F811
                                              bigtable_emulator, tmp_path, env, mode):
    # expires: 6 s tokens, honoured 6 s; the client refreshes halfway.
    # revoked: tokens said to last an hour die after 4 s here: calls are
    # refused with UNAUTHENTICATED, and the client fetches a new token
    # and re-sends the refused calls.
    if mode == "expires":
        google_side.expires_in, google_side.lifetime = 6, None
    else:
        google_side.expires_in, google_side.lifetime = 3600, 4
    # The front holds each of the 1500 calls 4 ms: the load lasts at least
    # 6 s however fast the machine, past the refresh of a 6 s token (3 s)
    # and the death of a 4 s one.
    google_side.check_delay = 0.004
    refused0, issued0 = google_side.refused, google_side.count()
    n = 3000
    table = "tls_" + mode
    key = key_file(tmp_path / "key.json", keypair[0], google_side)
    src, records = write_input(tmp_path, n)
    t0 = time.time()
    try:
        res = load(build_dir, front, certs, key, table, src, env,
                   ["--batch_rows=2", "--max_inflight=1"])
    finally:
        google_side.expires_in, google_side.lifetime, google_side.check_delay = 3600, None, 0.0
    took = time.time() - t0
    assert res.returncode == 0, res.stderr
    tokens = google_side.count() - issued0
    assert tokens >= 2, "%d tokens in %.1f s" % (tokens, took)
    if mode == "revoked":
        assert google_side.refused > refused0  # the front did refuse a dead token
    assert cbt(bigtable_emulator, "count", table).split()[-1] == str(n)
    assert read_back(build_dir, front, certs, key, table, tmp_path / "out", env) == records


@pytest.mark.parametrize("mode,kind", [("expires", "user"), ("revoked", "metadata")])
def test_token_expiring_mid_load_from_user_and_metadata_sources(
        mode, kind, build_dir, front, certs, google_side, bigtable_emulator, tmp_path,  # noqa: F811
        env):
    # As above, with the other two credential sources: an authorized_user
    # file refreshes with its refresh-token grant at the token endpoint,
    # the metadata server's default account at its token path. Nothing
    # here depends on how fast the machine is:
    # expires: 4 s tokens, refreshed 2 s ahead; each of the 300 calls is
    # held 25 ms by the front's token check, so the load lasts at least
    # 7.5 s: a new token every 2 s. A loaded machine makes it longer, and a
    # token handed out may take up to 2 s to reach the front.
    # revoked: tokens said to last an hour are revoked after 40 calls each
    # (a count, not a time, so a fresh token is never dead before its
    # first call, however slow that call is): its 41st call is refused,
    # and the client fetches a new token and re-sends it.
    if mode == "expires":
        google_side.expires_in, google_side.check_delay = 4, 0.025
    else:
        google_side.max_uses = 40
    if kind == "user":
        flags = ["--credentials_file=%s" % user_file(tmp_path / "user.json", google_side)]
        path, account = "/token", "user:" + USER["client_id"]
    else:
        flags = []
        env = dict(env, GCE_METADATA_HOST="127.0.0.1:%d" % google_side.port)
        path, account = METADATA_TOKEN, GCE_EMAIL
    refused0, issued0, asked0 = google_side.refused, google_side.issued, google_side.count(path)
    checks0 = len(google_side.checks)
    n = 600
    table = "tls_%s_%s" % (mode, kind)
    src, records = write_input(tmp_path, n)
    args = ["--endpoint=" + front, "--tls", "--ca_bundle=%s/ca.pem" % certs, "--project=p",
            "--bigtable_instance=i"] + flags
    t0 = time.time()
    try:
        res = run_tool(build_dir, "tfrec2bt",
                       args + ["--bigtable_table=" + table, "--create_table", "--quiet",
                               "--source_glob=%s" % src, "--progress_file=%s.progress" % src,
                               "--num_records=%d" % n, "--batch_rows=2", "--max_inflight=1"],
                       env)
    finally:
        google_side.expires_in, google_side.check_delay, google_side.max_uses = 3600, 0.0, None
    took = time.time() - t0
    assert res.returncode == 0, res.stderr
    tokens, refused = google_side.issued - issued0, google_side.refused - refused0
    calls = len(google_side.checks) - checks0
    assert calls >= 1 + n // 2, calls  # the table, then 2 rows a call (and re-sends)
    if mode == "expires":
        # One token per 2 s: at least 4 in 7.5 s; refreshed ahead, so
        # (barring a stall of 2 s between a call's start and the front's
        # check, which the client survives by one re-send) none refused.
        assert tokens >= 4, (tokens, took)
        assert refused <= 1, (refused, tokens, took)
    else:
        # Each token let 40 calls through and was refused on its 41st,
        # which went again with the next token: one token per refusal.
        passed = calls - refused
        assert refused == (passed - 1) // 40 and tokens == 1 + refused, (tokens, refused, calls)
    # Every token came from this source's own path, and every call went as its account.
    assert google_side.count(path) - asked0 == tokens
    assert {c[1] for c in google_side.checks[checks0:]} == {account}
    # Nothing lost or duplicated: the row count and the rows read back.
    assert cbt(bigtable_emulator, "count", table).split()[-1] == str(n)
    res = run_tool(build_dir, "bt2tfrec",
                   args + ["--bigtable_table=" + table, "--row_prefix=train_", "--quiet",
                           "--output=%s" % (tmp_path / "out")], env)
    assert res.returncode == 0, res.stderr
    assert tfrecord_ref.read_records(str(tmp_path / "out")) == records


def test_wrong_ca_fails_with_a_clear_tls_error(build_dir, front, certs, google_side,  # noqa: F811
                                               keypair, tmp_path, env):
    key = key_file(tmp_path / "key.json", keypair[0], google_side)
    src, _ = write_input(tmp_path, 10)
    args = tls_args(front, certs, key)
    args[2] = "--ca_bundle=%s/other-ca.pem" % certs
    t0 = time.time()
    res = run_tool(build_dir, "tfrec2bt",
                   args + ["--bigtable_table=tls_wrong_ca", "--create_table", "--quiet",
                           "--source_glob=%s" % src, "--progress_file=%s.p" % src], env)
    assert res.returncode == 3, res.stderr
    assert "TLS handshake failed" in res.stderr and "not trusted" in res.stderr, res.stderr
    assert front in res.stderr and "--ca_bundle" in res.stderr, res.stderr
    assert time.time() - t0 < 60  # not retried as if the network were down
