"""The Google side of authentication, played on a loopback port for the
tests of lib/gauth (test_gauth.py) and of both parts that use it
(test_bigtable_tls.py, test_storage_tls.py): an OAuth token endpoint that
verifies every service-account JWT with python3-jwt, an authorized_user
refresh, a GCE metadata server, and /check, which a TLS front
(tls_fronts.py) asks whether a bearer token is one this side issued and
has not expired (else 401) and whether its account may use the service
(403 for an account in `denied`).

Tokens live `lifetime` seconds on this side (None: as long as the
expires_in told to the client), so a test can make them die early, as a
revoked or clock-skewed token does.
"""
import http.server
import json
import threading
import time
import urllib.parse

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

SCOPE = ("https://www.googleapis.com/auth/devstorage.read_write "
         "https://www.googleapis.com/auth/bigtable.data "
         "https://www.googleapis.com/auth/bigtable.admin.table")
JWT_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
EMAIL = "loader@example-project.iam.gserviceaccount.com"
# A second service account the fronts may deny (403 / PERMISSION_DENIED).
EMAIL2 = "reader@example-project.iam.gserviceaccount.com"
GCE_EMAIL = "1234-compute@developer.gserviceaccount.com"
KEY_ID = "0123456789abcdef"
USER = {"client_id": "cid-42.apps.example", "client_secret": "s3cr3t-client",
        "refresh_token": "1//refresh-secret"}
TOKEN_PATH = "/token"
METADATA_TOKEN = "/computeMetadata/v1/instance/service-accounts/default/token"
METADATA_EMAIL = "/computeMetadata/v1/instance/service-accounts/default/email"
CHECK_PATH = "/check"


def make_keypair():
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    return pem, key.public_key()


@pytest.fixture(scope="module")
def keypair():
    return make_keypair()


class GoogleSide:
    """Token endpoint and metadata server. `script` holds replies used in
    order before the normal ones: (status, body, delay_s, headers) or None
    for a normal answer."""

    def __init__(self, public_key):
        self.public_key = public_key
        self.lock = threading.Lock()
        self.requests = []  # (time, path, form or headers)
        self.problems = []
        self.script = []
        self.expires_in = 3600
        self.delay = 0.0
        self.issued = 0
        self.flavor = True
        self.lifetime = None  # seconds a token is honoured here (None: expires_in)
        self.live = {}  # token -> (deadline (time.time()), account)
        self.denied = set()  # accounts /check answers 403 for
        # Calls a token is honoured for (None: any number): 1 makes every
        # token die once its first call began, as a token revoked mid-call.
        self.max_uses = None
        self.uses = {}  # token -> calls checked
        self.checks = []  # (service, account or None, x-goog-user-project, uri) per /check
        self.check_delay = 0.0  # seconds /check takes (slows a load down)
        self.refused = 0  # /check answers 401
        # Calls to fail as a service under load does: [uri substring, gRPC
        # code, count] consumed in order by the calls /check lets through;
        # the front answers them with that grpc-status (tls_fronts.py).
        self.faults = []
        self.faulted = []  # (uri, code) per call failed so
        side = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                form = urllib.parse.parse_qs(self.rfile.read(n).decode(), strict_parsing=True)
                side.answer(self, self.path, {k: v[0] for k, v in form.items()})

            def do_GET(self):
                if self.path == CHECK_PATH:
                    side.check_bearer(self)
                    return
                side.answer(self, self.path, dict(self.headers))

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path=TOKEN_PATH):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def count(self, path=TOKEN_PATH):
        with self.lock:
            return sum(1 for r in self.requests if r[1] == path)

    def check(self, path, req):
        """What is wrong with a request, or None."""
        if path == TOKEN_PATH:
            grant = req.get("grant_type")
            if grant == JWT_GRANT:
                a = req.get("assertion", "")
                try:
                    head = jwt.get_unverified_header(a)
                    claims = jwt.decode(a, self.public_key, algorithms=["RS256"],
                                        audience=self.url(),
                                        options={"require": ["iss", "aud", "iat", "exp"]})
                except jwt.PyJWTError as e:
                    return "JWT rejected: %s" % e
                if head.get("typ") != "JWT" or head.get("kid") != KEY_ID:
                    return "JWT header %r" % head
                if claims["iss"] not in (EMAIL, EMAIL2) or claims.get("scope") != SCOPE:
                    return "JWT claims %r" % claims
                if claims["exp"] - claims["iat"] != 3600 or abs(claims["iat"] - time.time()) > 60:
                    return "JWT times %r" % claims
                return None
            if grant == "refresh_token":
                got = {k: req.get(k) for k in USER}
                return None if got == USER else "refresh request %r" % req
            return "grant_type %r" % grant
        if path in (METADATA_TOKEN, METADATA_EMAIL):
            if req.get("Metadata-Flavor") != "Google":
                return "metadata request without Metadata-Flavor: Google"
            return None
        return "unexpected path %s" % path

    def answer(self, h, path, req):
        with self.lock:
            self.requests.append((time.time(), path, req))
            problem = self.check(path, req)
            if problem:
                self.problems.append(problem)
            scripted = self.script.pop(0) if self.script and path != METADATA_EMAIL else None
            delay = self.delay
        headers = {"Metadata-Flavor": "Google"} if self.flavor and path.startswith("/compute") else {}
        if scripted:
            status, body, delay, extra = tuple(scripted) + (0.0, {})[len(scripted) - 2:]
            headers.update(extra)
        elif problem:
            status, body = (403, "wrong request") if path != TOKEN_PATH else \
                (400, json.dumps({"error": "invalid_grant", "error_description": problem}))
        elif path == METADATA_EMAIL:
            status, body = 200, GCE_EMAIL
        else:
            with self.lock:
                self.issued += 1
                token = "tok-%d" % self.issued
                self.live[token] = (time.time() + (self.lifetime or self.expires_in),
                                    self.account_of(path, req))
                body = json.dumps({"access_token": token,
                                   "expires_in": self.expires_in, "token_type": "Bearer"})
            status = 200
        if delay:
            time.sleep(delay)
        data = body.encode() if isinstance(body, str) else body
        try:
            h.send_response(status)
            for k, v in headers.items():
                h.send_header(k, v)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    @staticmethod
    def account_of(path, req):
        if path == METADATA_TOKEN:
            return GCE_EMAIL
        if req.get("grant_type") == "refresh_token":
            return "user:" + req.get("client_id", "")
        try:
            return jwt.decode(req.get("assertion", ""), options={"verify_signature": False})["iss"]
        except jwt.PyJWTError:
            return None

    def tokens_of(self, account):
        with self.lock:
            return sum(1 for v in self.live.values() if v[1] == account)

    def check_bearer(self, h):
        """200 for a live token this side issued, 403 when its account is
        denied, else 401."""
        auth = h.headers.get("Authorization", "")
        if self.check_delay:
            time.sleep(self.check_delay)
        with self.lock:
            deadline, account = self.live.get(auth[7:], (0, None)) \
                if auth.startswith("Bearer ") else (0, None)
            token = auth[7:]
            self.uses[token] = self.uses.get(token, 0) + 1
            worn = self.max_uses is not None and self.uses[token] > self.max_uses
            status = 401 if deadline <= time.time() or worn else \
                403 if account in self.denied else 200
            if status == 401:
                self.refused += 1
            uri = h.headers.get("X-Original-Uri") or ""
            fault = next((f for f in self.faults if f[2] > 0 and f[0] in uri), None) \
                if status == 200 else None
            if fault:
                fault[2] -= 1
                self.faulted.append((uri, fault[1]))
                status = 500
            self.checks.append((h.headers.get("X-Service"), account,
                                h.headers.get("X-User-Project") or None,
                                h.headers.get("X-Original-Uri")))
        try:
            h.send_response(status)
            if fault:
                h.send_header("X-Grpc-Status", str(fault[1]))
            h.send_header("Content-Length", "0")
            h.end_headers()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def google_side(keypair):
    """One Google side for a module's fronts (a front is told its port)."""
    side = GoogleSide(keypair[1])
    yield side
    side.close()
    assert not side.problems, side.problems


@pytest.fixture
def google(keypair):
    side = GoogleSide(keypair[1])
    yield side
    side.close()
    assert not side.problems, side.problems


def key_file(path, pem, google, **over):
    doc = {"type": "service_account", "project_id": "example-project",
           "private_key_id": KEY_ID, "private_key": pem, "client_email": EMAIL,
           "client_id": "1234567890", "token_uri": google.url()}
    doc.update(over)
    doc = {k: v for k, v in doc.items() if v is not None}
    path.write_text(json.dumps(doc))
    return path


def user_file(path, google=None):
    doc = dict(USER, type="authorized_user")
    if google:
        doc["token_uri"] = google.url()
    path.write_text(json.dumps(doc))
    return path


