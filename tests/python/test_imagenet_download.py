"""imagenet2tfrec downloading the tarballs (--download_url, as with
--imagenet_username/--imagenet_access_key) from a local HTTP server started
here, which serves Range requests and can misbehave on purpose: cut a
connection mid-file (the download resumes with Range), ignore Range (the
partial file is restarted, not appended to), or corrupt a byte (the MD5
check refuses the file and keeps it as NAME.bad-md5)."""
# needs: tfrec-image
import hashlib
import http.server
import os
import re
import socket
import subprocess
import threading

import pytest

from test_imagenet_tar import SYN, jpeg, run, shards_of  # noqa: F401
import make_tars


@pytest.fixture(scope="module")
def tool(build_dir):
    return os.path.join(build_dir, "bin", "imagenet2tfrec")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        srv = self.server
        rng = self.headers.get("Range")
        srv.requests.append((self.path, rng))
        data = srv.files.get(self.path)
        if data is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path in srv.corrupt:
            data = bytearray(data)
            data[len(data) // 3] ^= 0x55
            data = bytes(data)
        start = 0
        m = re.match(r"bytes=(\d+)-$", rng or "")
        if m and not srv.ignore_range:
            start = int(m.group(1))
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", "bytes */%d" % len(data))
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))
        else:
            self.send_response(200)
        body = data[start:]
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "none" if srv.ignore_range else "bytes")
        self.end_headers()
        if self.path in srv.cut_once:
            srv.cut_once.discard(self.path)
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        self.wfile.write(body)


@pytest.fixture
def server(tmp_path):
    flags = make_tars_set(tmp_path)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.requests, srv.cut_once, srv.corrupt, srv.ignore_range = [], set(), set(), False
    srv.files = {}
    for name, path in (("ILSVRC2012_img_train.tar", flags["train"]),
                       ("ILSVRC2012_img_val.tar", flags["val"]),
                       ("synset_labels.txt", flags["labels"])):
        with open(path, "rb") as f:
            srv.files["/base/" + name] = f.read()
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    srv.base = "http://127.0.0.1:%d/base/" % srv.server_address[1]
    srv.md5 = {k.rsplit("/", 1)[1]: hashlib.md5(v).hexdigest() for k, v in srv.files.items()}
    srv.expected = flags["expected"]
    yield srv
    srv.shutdown()
    srv.server_close()


def make_tars_set(tmp_path):
    """Small tarballs (images large enough that half a file is a real cut)
    and the shards a direct conversion of them gives."""
    d = tmp_path / "src"
    d.mkdir()
    inner = [(s + ".tar", make_tars.tar_bytes([("%s_%d.JPEG" % (s, j), jpeg(k * 3 + j) * 1)
                                               for j in range(3)]))
             for k, s in enumerate(SYN)]
    train, val, labels = d / "ILSVRC2012_img_train.tar", d / "ILSVRC2012_img_val.tar", d / "l.txt"
    train.write_bytes(make_tars.tar_bytes(inner))
    val.write_bytes(make_tars.tar_bytes([("ILSVRC2012_val_%08d.JPEG" % (i + 1), jpeg(i + 9))
                                         for i in range(3)]))
    labels.write_text("%s\n%s\n%s\n" % (SYN[0], SYN[1], SYN[1]))
    return {"train": str(train), "val": str(val), "labels": str(labels), "expected": None}


def direct_shards(tool, srv, tmp_path):
    src = tmp_path / "src"
    out = tmp_path / "direct"
    r = run(tool, "--train_tar", src / "ILSVRC2012_img_train.tar", "--validation_tar",
            src / "ILSVRC2012_img_val.tar", "--validation_labels", src / "l.txt",
            "--output_dir", out, "--train_shards=2", "--validation_shards=1")
    assert r.returncode == 0, r.stderr
    return shards_of(str(out))


def download(tool, srv, out, *extra):
    return run(tool, "--download_url", srv.base, "--labels_url", srv.base + "synset_labels.txt",
               "--train_md5", srv.md5["ILSVRC2012_img_train.tar"], "--validation_md5",
               srv.md5["ILSVRC2012_img_val.tar"], "--output_dir", out, "--train_shards=2",
               "--validation_shards=1", *extra, timeout=120)


def test_download_then_convert(tool, server, tmp_path):
    out = tmp_path / "out"
    r = download(tool, server, out)
    assert r.returncode == 0, r.stderr
    assert shards_of(str(out)) == direct_shards(tool, server, tmp_path)
    assert sorted(os.listdir(out / "downloads")) == ["ILSVRC2012_img_train.tar",
                                                     "ILSVRC2012_img_val.tar", "synset_labels.txt"]
    # A second run finds the tarballs with the right MD5 and fetches nothing but the labels.
    before = len(server.requests)
    r = download(tool, server, out)
    assert r.returncode == 0, r.stderr
    assert [p for p, _ in server.requests[before:]] == ["/base/synset_labels.txt"]


def test_cut_connection_is_resumed_with_range(tool, server, tmp_path):
    server.cut_once.add("/base/ILSVRC2012_img_train.tar")
    out = tmp_path / "out"
    r = download(tool, server, out)
    assert r.returncode == 0, r.stderr
    train = [rng for p, rng in server.requests if p.endswith("train.tar")]
    size = len(server.files["/base/ILSVRC2012_img_train.tar"])
    assert train == [None, "bytes=%d-" % (size // 2)], train
    assert shards_of(str(out)) == direct_shards(tool, server, tmp_path)


def test_server_ignoring_range_restarts_the_file(tool, server, tmp_path):
    server.ignore_range = True
    dl = tmp_path / "out" / "downloads"
    dl.mkdir(parents=True)
    # A partial file from an earlier run: resuming it against a server that
    # answers 200 must not append the whole file after these bytes.
    (dl / "ILSVRC2012_img_val.tar.part").write_bytes(b"X" * 1500)
    r = download(tool, server, tmp_path / "out")
    assert r.returncode == 0, r.stderr
    val = [rng for p, rng in server.requests if p.endswith("val.tar")]
    assert val[0] == "bytes=1500-" and val[-1] is None, val
    with open(dl / "ILSVRC2012_img_val.tar", "rb") as f:
        assert f.read() == server.files["/base/ILSVRC2012_img_val.tar"]


def test_corrupted_byte_is_caught_by_md5(tool, server, tmp_path):
    server.corrupt.add("/base/ILSVRC2012_img_val.tar")
    out = tmp_path / "out"
    r = download(tool, server, out)
    assert r.returncode == 1, r.stderr
    assert "MD5" in r.stderr and server.md5["ILSVRC2012_img_val.tar"] in r.stderr, r.stderr
    dl = out / "downloads"
    assert os.path.exists(dl / "ILSVRC2012_img_val.tar.bad-md5")
    assert not os.path.exists(dl / "ILSVRC2012_img_val.tar")
    assert not os.path.exists(out / "train")


def test_missing_file_is_an_io_error(tool, server, tmp_path):
    r = run(tool, "--download_url", server.base + "nothing/", "--output_dir", tmp_path / "out",
            "--download_retries=1", timeout=60)
    assert r.returncode == 3 and "404" in r.stderr, r.stderr
