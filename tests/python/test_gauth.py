# needs: tfrec-storage
"""Google credentials for Cloud Storage (lib/storage/auth*.c), end to end.

The test plays Google's side on a loopback port: an OAuth token endpoint
that checks every JWT our code signs with an independent library
(python3-jwt, against the public half of an RSA key pair generated here
with python3-cryptography), and a GCE metadata server that insists on the
Metadata-Flavor header. The C side is test-bin/gauth_probe, which
runs steps (get, force, sleep:MS, threads:N, account) on one
tfrec_gauth handle and prints one line per step. Nothing leaves the
machine: the environment is scrubbed of real credentials, HOME is a
temporary directory, and the metadata server address always points at a
loopback port.
"""
import json
import os
import socket
import subprocess
import time

import pytest

from google_side import (EMAIL, GCE_EMAIL, KEY_ID, METADATA_TOKEN, USER, GoogleSide,  # noqa: F401
                         google, key_file, keypair, user_file)


@pytest.fixture
def dead_port():
    """A loopback port that refuses connections (bound, never listening)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    yield s.getsockname()[1]
    s.close()


@pytest.fixture
def probe(build_dir, tmp_path, dead_port):
    exe = os.path.join(build_dir, "test-bin", "gauth_probe")
    assert os.access(exe, os.X_OK), "%s missing: build with make tests" % exe
    home = tmp_path / "home"
    home.mkdir()

    def run(*steps, file=None, env=None, tune=("--timeout-ms=2000", "--attempts=3",
                                               "--backoff-ms=20", "--probe-ms=1000")):
        e = {k: v for k, v in os.environ.items()
             if k not in ("GOOGLE_APPLICATION_CREDENTIALS", "CLOUDSDK_CONFIG", "GCE_METADATA_HOST",
                          "GCE_METADATA_ROOT", "TFREC_GCS_TOKEN_URI", "STORAGE_EMULATOR_HOST")
             and not k.lower().endswith("_proxy")}
        e.update(HOME=str(home), GCE_METADATA_HOST="127.0.0.1:%d" % dead_port, NO_PROXY="*")
        e.update(env or {})
        args = [exe] + (["--file=" + str(file)] if file else []) + list(tune) + list(steps)
        res = subprocess.run(args, capture_output=True, text=True, env=e, timeout=120)
        assert res.returncode == 0, res.stderr
        assert "ERROR: AddressSanitizer" not in res.stderr, res.stderr
        lines = res.stdout.splitlines()
        assert len(lines) >= len(steps), res.stdout
        return lines
    run.home = home
    return run


def test_service_account_jwt_is_verified_and_the_token_cached(probe, google, keypair, tmp_path):
    f = key_file(tmp_path / "key.json", keypair[0], google)
    out = probe("get", "get", "get", "account", file=f)
    assert out[:3] == ["ok Authorization: Bearer tok-1"] * 3
    assert out[3] == "account " + EMAIL
    assert google.count() == 1  # one exchange for every call


def test_refreshed_before_expiry(probe, google, keypair, tmp_path):
    # A 6 s token is refreshed halfway (the 5-minute margin is longer than
    # its life): at 3.5 s it is still valid, yet a new one is fetched.
    google.expires_in = 6
    f = key_file(tmp_path / "key.json", keypair[0], google)
    out = probe("get", "get", "sleep:3500", "get", "get", file=f)
    assert out == ["ok Authorization: Bearer tok-1"] * 2 + ["slept 3500"] + \
        ["ok Authorization: Bearer tok-2"] * 2
    times = [r[0] for r in google.requests]
    assert len(times) == 2 and 3.0 < times[1] - times[0] < 6.0


def test_token_life_counts_from_when_it_was_asked_for(probe, google, keypair, tmp_path):
    # The endpoint answers 2 s after issuing a 6 s token: it is refreshed
    # 3 s after it was asked for (1 s after it came), not 3 s after it came,
    # when the server would count 5 of its 6 s gone.
    google.expires_in, google.delay = 6, 2.0
    f = key_file(tmp_path / "key.json", keypair[0], google)
    out = probe("get", "sleep:1600", "get", file=f, tune=("--timeout-ms=10000", "--attempts=1",
                                                         "--backoff-ms=20", "--probe-ms=1000"))
    assert out == ["ok Authorization: Bearer tok-1", "slept 1600",
                   "ok Authorization: Bearer tok-2"]
    assert google.count() == 2


def test_force_refresh_fetches_a_new_token(probe, google, keypair, tmp_path):
    f = key_file(tmp_path / "key.json", keypair[0], google)
    out = probe("get", "force", "get", file=f)
    assert out == ["ok Authorization: Bearer tok-1", "ok Authorization: Bearer tok-2",
                   "ok Authorization: Bearer tok-2"]
    assert google.count() == 2


def test_authorized_user_refresh_flow(probe, google, tmp_path):
    # token_uri from the file, then from TFREC_GCS_TOKEN_URI (gcloud's files
    # have none), which also wins over the file's.
    out = probe("get", "account", file=user_file(tmp_path / "user.json", google))
    assert out == ["ok Authorization: Bearer tok-1",
                   "account user credentials (OAuth client cid-42.apps.example)"]
    f = user_file(tmp_path / "user2.json")
    out = probe("get", file=f, env={"TFREC_GCS_TOKEN_URI": google.url()})
    assert out == ["ok Authorization: Bearer tok-2"]
    assert google.count() == 2


def test_google_application_credentials(probe, google, keypair, tmp_path):
    f = key_file(tmp_path / "key.json", keypair[0], google)
    out = probe("get", "account", env={"GOOGLE_APPLICATION_CREDENTIALS": str(f)})
    assert out == ["ok Authorization: Bearer tok-1", "account " + EMAIL]


def test_gcloud_adc_file_via_cloudsdk_config_and_home(probe, google, keypair, tmp_path):
    conf = tmp_path / "gcloud"
    conf.mkdir()
    user_file(conf / "application_default_credentials.json", google)
    out = probe("get", "account", env={"CLOUDSDK_CONFIG": str(conf)})
    assert out == ["ok Authorization: Bearer tok-1",
                   "account user credentials (OAuth client cid-42.apps.example)"]
    home_conf = probe.home / ".config" / "gcloud"
    home_conf.mkdir(parents=True)
    key_file(home_conf / "application_default_credentials.json", keypair[0], google)
    assert probe("get", "account") == ["ok Authorization: Bearer tok-2", "account " + EMAIL]
    # GOOGLE_APPLICATION_CREDENTIALS comes first: a broken one is an error,
    # never a silent fall back to the ADC file.
    out = probe("get", env={"GOOGLE_APPLICATION_CREDENTIALS": str(tmp_path / "none.json")})
    assert out[0].startswith("err ") and "GOOGLE_APPLICATION_CREDENTIALS" in out[0]
    assert str(tmp_path / "none.json") in out[0]
    assert google.count() == 2


def test_gce_metadata_server(probe, google):
    google.expires_in = 1800
    out = probe("get", "get", "account",
                env={"GCE_METADATA_HOST": "127.0.0.1:%d" % google.port})
    assert out == ["ok Authorization: Bearer tok-1"] * 2 + [
        "account %s (the metadata server's default service account)" % GCE_EMAIL]
    assert google.count(METADATA_TOKEN) == 1
    # every request carried Metadata-Flavor (checked by the fixture)
    assert all(r[2].get("Metadata-Flavor") == "Google" for r in google.requests)


def test_metadata_impostor_is_not_trusted(probe, google):
    google.flavor = False  # answers, but not as a metadata server does
    out = probe("get", env={"GCE_METADATA_HOST": "127.0.0.1:%d" % google.port})
    assert out[0].startswith("err -11 no Google credentials found")
    assert "without Metadata-Flavor: Google" in out[0]
    assert google.count(METADATA_TOKEN) == 0


def test_no_credentials_names_what_was_tried(probe, dead_port):
    out = probe("get")
    assert out[0].startswith("err -11 no Google credentials found")
    for part in ("GOOGLE_APPLICATION_CREDENTIALS is not set",
                 str(probe.home / ".config/gcloud/application_default_credentials.json"),
                 "127.0.0.1:%d did not answer" % dead_port):
        assert part in out[0], out[0]


def test_refusal_names_file_endpoint_and_reason_without_secrets(probe, google, keypair, tmp_path):
    f = key_file(tmp_path / "key.json", keypair[0], google)
    google.script = [(400, json.dumps({"error": "invalid_grant",
                                       "error_description": "Invalid JWT Signature."}))]
    out = probe("get", file=f)
    assert out[0].startswith("err ")
    for part in (str(f), google.url(), "HTTP 400", "invalid_grant", "Invalid JWT Signature."):
        assert part in out[0], out[0]
    assert "PRIVATE KEY" not in out[0] and "assertion" not in out[0]
    assert google.count() == 1  # a refusal is not retried

    u = user_file(tmp_path / "user.json", google)
    google.script = [(401, json.dumps({"error": "unauthorized_client"}))]
    out = probe("get", file=u)
    assert "unauthorized_client" in out[0] and str(u) in out[0]
    for secret in USER.values():
        assert secret not in out[0]


def test_transient_failures_are_retried(probe, google, keypair, tmp_path):
    f = key_file(tmp_path / "key.json", keypair[0], google)
    google.script = [(503, "busy"), (429, "slow down")]
    assert probe("get", file=f) == ["ok Authorization: Bearer tok-1"]
    assert google.count() == 3
    google.script = [(503, "still busy")] * 3
    out = probe("get", file=f)
    assert out[0].startswith("err ") and "failed after 3 attempts" in out[0]
    assert "HTTP 503" in out[0] and google.url() in out[0]
    assert google.count() == 6


def test_garbage_replies_are_clear_errors(probe, google, keypair, tmp_path):
    f = key_file(tmp_path / "key.json", keypair[0], google)
    cases = [
        ("<html>oops</html>", "something other than a token"),
        (json.dumps({"expires_in": 3600}), "without an \"access_token\""),
        (json.dumps({"access_token": "abc\r\nX-Evil: 1"}), "malformed \"access_token\""),
        (json.dumps({"access_token": "abc", "token_type": "MAC"}), "not Bearer"),
        (json.dumps({"access_token": "abc", "expires_in": "soon"}), "bad \"expires_in\""),
        ("x" * (100 * 1024), "longer than 65536 bytes"),
    ]
    for body, why in cases:
        google.script = [(200, body)]
        out = probe("get", file=f)
        assert out[0].startswith("err ") and why in out[0], (why, out)
        assert google.url() in out[0]


def test_slow_endpoint_times_out_then_recovers(probe, google, keypair, tmp_path):
    f = key_file(tmp_path / "key.json", keypair[0], google)
    tune = ("--timeout-ms=500", "--attempts=2", "--backoff-ms=20")
    google.script = [(200, "{}", 2.0)] * 2
    t0 = time.time()
    out = probe("get", file=f, tune=tune)
    assert out[0].startswith("err ") and "failed after 2 attempts" in out[0]
    assert "imed out" in out[0]
    assert time.time() - t0 < 10
    google.script = [(200, "{}", 2.0)]  # one slow answer, then a normal one
    assert probe("get", file=f, tune=tune) == ["ok Authorization: Bearer tok-1"]


def test_failed_refresh_keeps_the_valid_token(probe, google, keypair, tmp_path):
    google.expires_in = 6
    f = key_file(tmp_path / "key.json", keypair[0], google)
    google.script = [None, (503, "down"), (503, "down"), (503, "down")]
    out = probe("get", "sleep:3500", "get", file=f)
    # the refresh at 3.5 s fails; the token is good until 6 s
    assert out == ["ok Authorization: Bearer tok-1", "slept 3500", "ok Authorization: Bearer tok-1"]
    assert google.count() == 4


def test_missing_and_malformed_key_files(probe, google, keypair, tmp_path):
    pem = keypair[0]
    missing = tmp_path / "absent.json"
    out = probe("get", file=missing)
    assert out[0].startswith("err -11 ") and str(missing) in out[0]

    def err_for(name, text):
        p = tmp_path / name
        p.write_text(text)
        line = probe("get", file=p)[0]
        assert line.startswith("err ") and str(p) in line, line
        return line

    assert "not a JSON credentials file" in err_for("bad.json", '{"type": "service_account",')
    assert "no \"type\" field" in err_for("notype.json", "{}")
    assert "\"external_account\" are not supported" in \
        err_for("ext.json", json.dumps({"type": "external_account"}))
    doc = {"type": "service_account", "private_key": pem, "token_uri": google.url()}
    assert "\"client_email\"" in err_for("noemail.json", json.dumps(doc))
    doc.update(client_email=EMAIL, private_key="-----BEGIN PRIVATE KEY-----\nAAAA\n")
    assert "field \"private_key\"" in err_for("badpem.json", json.dumps(doc))
    doc.update(private_key=pem, token_uri="http://tokens.example.com/token")
    assert "only sent over https://" in err_for("plainhttp.json", json.dumps(doc))
    assert "\"refresh_token\"" in err_for(
        "user.json", json.dumps({"type": "authorized_user", "client_id": "a", "client_secret": "b"}))
    big = tmp_path / "big.json"
    big.write_text(" " * (100 * 1024))
    assert "not a credentials file" in probe("get", file=big)[0]
    assert google.count() == 0


def test_many_threads_share_one_exchange(probe, google, keypair, tmp_path):
    google.delay = 0.5  # the exchange is in flight while all threads ask
    f = key_file(tmp_path / "key.json", keypair[0], google)
    assert probe("threads:32", "get", file=f) == ["threads 32 1", "ok Authorization: Bearer tok-1"]
    assert google.count() == 1
    # A failure is shared as well: threads that asked while it was in flight
    # get it instead of each asking again.
    google.script = [(400, json.dumps({"error": "invalid_grant"}), 1.0)]
    out = probe("threads:16", file=f)
    assert out[0] == "threads 0 0" and len(out) == 17
    assert all("invalid_grant" in line for line in out[1:])
    assert google.count() == 2


def test_anonymous_sends_nothing(probe, google):
    out = probe("get", "account", tune=("--anonymous",),
                env={"GCE_METADATA_HOST": "127.0.0.1:%d" % google.port})
    assert out == ["ok (none)", "account anonymous"]
    assert google.requests == []
