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
    google_side.check_delay = 0.004  # a call takes a few ms: the load outlives tokens
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
    assert took > 9, "the load took %.1f s: too short to outlive a token" % took
    tokens = google_side.count() - issued0
    assert tokens >= 2, "%d tokens in %.1f s" % (tokens, took)
    if mode == "revoked":
        assert google_side.refused > refused0  # the front did refuse a dead token
    assert cbt(bigtable_emulator, "count", table).split()[-1] == str(n)
    assert read_back(build_dir, front, certs, key, table, tmp_path / "out", env) == records


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
