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
import shutil
import socket
import subprocess
import time

import pytest

import tfrecord_ref
from google_side import EMAIL, GoogleSide, key_file, keypair  # noqa: F401

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
pytestmark = pytest.mark.skipif(not os.access(NGINX, os.X_OK),
                                reason="nginx is not installed (scripts/install-deps.sh)")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def openssl(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    """A CA, a server certificate it signs (localhost, 127.0.0.1) and a
    second CA that signed nothing here."""
    d = tmp_path_factory.mktemp("tls")
    for ca in ("ca", "other-ca"):
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                "/CN=tfrec test %s" % ca, "-keyout", ca + ".key", "-out", ca + ".pem", cwd=d)
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
            "-keyout", "server.key", "-out", "server.csr", cwd=d)
    (d / "san.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-extfile", "san.ext", "-out", "server.pem", cwd=d)
    return d


NGINX_CONF = """
%(user)s
worker_processes 1;
pid %(dir)s/nginx.pid;
events { worker_connections 512; }
http {
    access_log %(dir)s/access.log;
    client_body_temp_path %(dir)s/body;
    proxy_temp_path %(dir)s/proxy;
    fastcgi_temp_path %(dir)s/fastcgi;
    uwsgi_temp_path %(dir)s/uwsgi;
    scgi_temp_path %(dir)s/scgi;
    client_max_body_size 0;
    server {
        listen 127.0.0.1:%(port)d ssl http2;
        ssl_certificate %(certs)s/server.pem;
        ssl_certificate_key %(certs)s/server.key;
        # Every call: is its bearer token one the token endpoint issued
        # and still honours? (google_side.py /check)
        location = /_auth {
            internal;
            proxy_pass http://127.0.0.1:%(google)d/check;
            proxy_pass_request_body off;
            proxy_set_header Content-Length "";
            proxy_set_header Authorization $http_authorization;
        }
        location / {
            auth_request /_auth;
            error_page 401 = @unauthenticated;
            grpc_pass grpc://%(emulator)s;
            grpc_read_timeout 300s;
            grpc_send_timeout 300s;
        }
        # As Bigtable answers a missing or expired token.
        location @unauthenticated {
            default_type application/grpc;
            add_header grpc-status 16 always;
            add_header grpc-message "Request had invalid authentication credentials" always;
            add_header content-length 0 always;
            return 204;
        }
    }
}
"""


@pytest.fixture(scope="module")
def google_side(keypair):  # noqa: F811
    side = GoogleSide(keypair[1])
    yield side
    side.close()
    assert not side.problems, side.problems


@pytest.fixture(scope="module")
def front(tmp_path_factory, certs, bigtable_emulator, google_side):
    d = tmp_path_factory.mktemp("nginx")
    port = free_port()
    conf = d / "nginx.conf"
    conf.write_text(NGINX_CONF % {
        "user": "user root;" if os.geteuid() == 0 else "", "dir": d, "port": port,
        "certs": certs, "google": google_side.port, "emulator": bigtable_emulator})
    proc = subprocess.Popen([NGINX, "-e", str(d / "error.log"), "-p", str(d), "-c", str(conf),
                             "-g", "daemon off;"], stdout=subprocess.DEVNULL,
                            stderr=open(d / "stderr.log", "w"))
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.05)
    assert proc.poll() is None, (d / "stderr.log").read_text() + (d / "error.log").read_text()
    yield "localhost:%d" % port
    proc.terminate()  # by its own pid: the master stops its worker
    proc.wait(timeout=20)


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
    assert time.time() - t0 < 60  # not retried as if the network were down
