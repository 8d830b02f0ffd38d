"""TLS fronts on loopback for the production-path tests: a CA made here,
and Debian's nginx terminating TLS in front of the Bigtable emulator
(grpc_pass) and the storage test server (proxy_pass), letting a call
through only with a bearer token the Google side (google_side.py /check)
issued and still honours. Used by test_bigtable_tls.py and
test_storage_tls.py; every server listens on 127.0.0.1 and is stopped by
its PID.
"""
import os
import shutil
import socket
import subprocess
import time

import pytest

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
needs_nginx = pytest.mark.skipif(not os.access(NGINX, os.X_OK),
                                 reason="nginx is not installed (scripts/install-deps.sh)")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def openssl(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True, capture_output=True)


def make_certs(d):
    """ca.pem, a server certificate it signs (localhost, 127.0.0.1) and
    other-ca.pem, a CA that signed nothing here."""
    for ca in ("ca", "other-ca"):
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                "/CN=tfrec test %s" % ca, "-keyout", ca + ".key", "-out", ca + ".pem", cwd=d)
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
            "-keyout", "server.key", "-out", "server.csr", cwd=d)
    (d / "san.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-extfile", "san.ext", "-out", "server.pem", cwd=d)
    return d


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_certs(tmp_path_factory.mktemp("tls"))


HTTP_HEAD = """
%(user)s
worker_processes 1;
pid %(dir)s/nginx.pid;
events { worker_connections 512; }
http {
    access_log %(dir)s/access.log;
    # Which connection a call came on and its number there (GOAWAY tests).
    log_format calls '$connection $connection_requests $request_uri $status';
    client_body_temp_path %(dir)s/body;
    proxy_temp_path %(dir)s/proxy;
    fastcgi_temp_path %(dir)s/fastcgi;
    uwsgi_temp_path %(dir)s/uwsgi;
    scgi_temp_path %(dir)s/scgi;
    client_max_body_size 0;
"""

# Every request: is its bearer token one the token endpoint issued, still
# honours, and whose account may use the service? (google_side.py /check
# answers 200, 401 or 403; it also sees the billing project sent.)
AUTH_LOCATION = """
        location = /_auth {
            internal;
            proxy_pass http://127.0.0.1:%(google)d/check;
            proxy_pass_request_body off;
            proxy_set_header Content-Length "";
            proxy_set_header Authorization $http_authorization;
            proxy_set_header X-Service %(service)s;
            proxy_set_header X-User-Project $http_x_goog_user_project;
            proxy_set_header X-Original-Uri $request_uri;
        }
"""


def server_head(listen, forbidden):
    """A TLS server block up to the inside of its checked `location /`."""
    return """
    server {
        listen 127.0.0.1:%(port)d """ + listen + """;
        ssl_certificate %(certs)s/server.pem;
        ssl_certificate_key %(certs)s/server.key;
""" + AUTH_LOCATION + """
        location / {
            auth_request /_auth;
            error_page 401 = @unauthenticated;
            error_page 403 = @""" + forbidden + """;
"""


BIGTABLE_SERVER = server_head("ssl http2", "permission_denied") + """            # A call the Google side fails (its faults list): the check
            # answers 500 and names the gRPC code.
            auth_request_set $fault_status $upstream_http_x_grpc_status;
            error_page 500 = @fault;
            grpc_pass grpc://%(backend)s;
            grpc_read_timeout 300s;
            grpc_send_timeout 300s;
        }
        # As Bigtable answers a missing or expired token, and an account
        # without the role.
""" + "".join("""        location @%s {
            default_type application/grpc;
            add_header grpc-status %d always;
            add_header grpc-message "%s" always;
            add_header content-length 0 always;
            return 204;
        }
""" % e for e in (("unauthenticated", 16, "Request had invalid authentication credentials"),
                  ("permission_denied", 7, "The caller does not have permission"))) + """        location @fault {
            default_type application/grpc;
            add_header grpc-status $fault_status always;
            add_header grpc-message "injected by the test front" always;
            add_header content-length 0 always;
            return 204;
        }
    }
"""

STORAGE_SERVER = server_head("ssl", "forbidden") + """            proxy_pass http://%(backend)s;
            proxy_http_version 1.1;
            proxy_request_buffering off;
            proxy_buffering off;
            proxy_read_timeout 300s;
            # Resumable sessions continue through the front, as they do at
            # storage.googleapis.com.
            proxy_redirect http://%(backend)s/ https://localhost:%(port)d/;
        }
        # The JSON API's error documents.
        location @unauthenticated {
            default_type application/json;
            return 401 '{"error":{"code":401,"message":"Invalid Credentials"}}';
        }
        location @forbidden {
            default_type application/json;
            return 403 '{"error":{"code":403,"message":"The caller does not have storage.objects access to the bucket."}}';
        }
    }
"""


class Nginx:
    """One nginx in directory d with one server block per (template,
    backend host:port, service name) in servers (BIGTABLE_SERVER /
    STORAGE_SERVER), each on a free port (self.ports, in order); stopped
    by its PID."""

    def __init__(self, d, certs, google_port, servers):
        self.dir = d
        blocks = []
        self.ports = []
        for tmpl, backend, service in servers:
            port = free_port()
            self.ports.append(port)
            blocks.append(tmpl % {"port": port, "certs": certs, "google": google_port,
                                  "backend": backend, "service": service})
        conf = d / "nginx.conf"
        conf.write_text(HTTP_HEAD % {"user": "user root;" if os.geteuid() == 0 else "",
                                     "dir": d} + "".join(blocks) + "}\n")
        self.proc = subprocess.Popen([NGINX, "-e", str(d / "error.log"), "-p", str(d), "-c",
                                      str(conf), "-g", "daemon off;"],
                                     stdout=subprocess.DEVNULL,
                                     stderr=open(d / "stderr.log", "w"))
        for port in self.ports:
            for _ in range(100):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    if self.proc.poll() is not None:
                        break
                    time.sleep(0.05)
        if self.proc.poll() is not None:
            raise RuntimeError((d / "stderr.log").read_text() + (d / "error.log").read_text())

    def stop(self):
        self.proc.terminate()  # by its own pid: the master stops its worker
        self.proc.wait(timeout=20)
