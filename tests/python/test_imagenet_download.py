"""imagenet2tfrec downloading the tarballs (--download_url, as with
--imagenet_username/--imagenet_access_key) from a local HTTP server started
here, which serves Range requests and can misbehave on purpose: cut a
connection mid-file (the download resumes with Range), ignore Range (the
partial file is restarted, not appended to), or corrupt a byte (the MD5
check refuses the file and keeps it as NAME.bad-md5)."""
# needs: tfrec-image
import base64
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
        srv.auth.append((self.path, self.headers.get("Authorization")))
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
        if rng and self.path in srv.refuse_range:
            # A server (or proxy) that refuses every range, saying the file
            # has the size it claims.
            self.send_response(416)
            self.send_header("Content-Range", "bytes */%d" % srv.refuse_range[self.path])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
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
    srv = start_server()
    srv.files = {}
    for name, path in (("ILSVRC2012_img_train.tar", flags["train"]),
                       ("ILSVRC2012_img_val.tar", flags["val"]),
                       ("synset_labels.txt", flags["labels"])):
        with open(path, "rb") as f:
            srv.files["/base/" + name] = f.read()
    srv.md5 = {k.rsplit("/", 1)[1]: hashlib.md5(v).hexdigest() for k, v in srv.files.items()}
    srv.expected = flags["expected"]
    yield srv
    srv.shutdown()
    srv.server_close()


def start_server():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.requests, srv.cut_once, srv.corrupt, srv.ignore_range = [], set(), set(), False
    srv.auth, srv.refuse_range, srv.files = [], {}, {}
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    srv.port = srv.server_address[1]
    srv.base = "http://127.0.0.1:%d/base/" % srv.port
    return srv


@pytest.fixture
def other_server(server):
    """A second host serving the same labels file (the default --labels_url
    is on another host than --download_url)."""
    srv = start_server()
    srv.files["/labels.txt"] = server.files["/base/synset_labels.txt"]
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


SECRET = "s3cr3t-KEY"


def decoded_auth(srv):
    """The Basic credentials each request carried (None without)."""
    out = []
    for path, auth in srv.auth:
        if auth and auth.startswith("Basic "):
            auth = base64.b64decode(auth[6:]).decode("latin-1")
        out.append((path, auth))
    return out


@pytest.mark.parametrize("labels_host", ["other_port", "other_name", "userinfo"])
def test_credentials_go_only_to_the_download_host(tool, server, other_server, tmp_path,
                                                  labels_host):
    """--imagenet_username/--imagenet_access_key are for the download host
    (scheme, host and port of --download_url): the labels file on another
    host, another port, or behind a URL whose text starts like the download
    host's (userinfo), is fetched without them."""
    labels = {
        "other_port": "http://127.0.0.1:%d/labels.txt" % other_server.port,
        "other_name": "http://localhost:%d/labels.txt" % server.port,
        "userinfo": "http://127.0.0.1:%d@127.0.0.1:%d/labels.txt" % (server.port,
                                                                    other_server.port),
    }[labels_host]
    if labels_host == "other_name":
        server.files["/labels.txt"] = other_server.files["/labels.txt"]
    out = tmp_path / "out"
    r = run(tool, "--download_url", server.base, "--labels_url", labels, "--imagenet_username",
            "user", "--imagenet_access_key", SECRET, "--train_md5",
            server.md5["ILSVRC2012_img_train.tar"], "--validation_md5",
            server.md5["ILSVRC2012_img_val.tar"], "--output_dir", out, "--train_shards=2",
            "--validation_shards=1", "--download_retries=0", timeout=120)
    assert r.returncode == 0, r.stderr
    got = decoded_auth(server) + decoded_auth(other_server)
    tars = [a for p, a in got if p.endswith(".tar")]
    assert tars and all(a == "user:" + SECRET for a in tars), got
    label_reqs = [a for p, a in got if p == "/labels.txt"]
    assert label_reqs and not any(a and SECRET in a for a in label_reqs), got


def test_credentials_still_go_to_the_download_host_for_its_labels(tool, server, tmp_path):
    """Same scheme, host and port: the labels file there gets them too."""
    r = download(tool, server, tmp_path / "out", "--imagenet_username", "user",
                 "--imagenet_access_key", SECRET)
    assert r.returncode == 0, r.stderr
    assert all(a == "user:" + SECRET for _, a in decoded_auth(server)), server.auth


def test_default_urls(tool, server, tmp_path):
    """Without --download_url/--labels_url: the tarballs from
    image-net.org/data/ILSVRC/2012/ and the labels from tensorflow/models,
    each URL whole (the labels URL is longer than the download URL's
    buffer was). No network: the tarballs are already there with the MD5
    given, and the labels request goes to a proxy that is not listening."""
    out = tmp_path / "out"
    dl = out / "downloads"
    dl.mkdir(parents=True)
    for name in ("ILSVRC2012_img_train.tar", "ILSVRC2012_img_val.tar"):
        (dl / name).write_bytes(server.files["/base/" + name])
    env = dict(os.environ, https_proxy="http://127.0.0.1:1", HTTPS_PROXY="http://127.0.0.1:1",
               no_proxy="", NO_PROXY="")
    r = subprocess.run([tool, "--imagenet_username", "u", "--imagenet_access_key", "k",
                        "--train_md5", server.md5["ILSVRC2012_img_train.tar"],
                        "--validation_md5", server.md5["ILSVRC2012_img_val.tar"],
                        "--output_dir", str(out), "--download_retries=0"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60,
                       env=env)
    urls = re.findall(r"downloading (\S+) to", r.stderr)
    assert urls == [
        "https://image-net.org/data/ILSVRC/2012/ILSVRC2012_img_val.tar",
        "https://image-net.org/data/ILSVRC/2012/ILSVRC2012_img_train.tar",
        "https://raw.githubusercontent.com/tensorflow/models/master/research/slim/datasets/"
        "imagenet_2012_validation_synset_labels.txt",
    ], r.stderr
    assert r.returncode == 3, r.stderr


def test_refused_range_with_another_size_restarts_the_file(tool, server, tmp_path):
    """A 416 to a resumed request means "complete" only when its
    Content-Range: bytes */N says the file has exactly the bytes of the
    .part; a longer .part (or a shorter one the server will not continue)
    is started again, not renamed into place."""
    labels = server.files["/base/synset_labels.txt"]
    dl = tmp_path / "out" / "downloads"
    dl.mkdir(parents=True)
    (dl / "synset_labels.txt.part").write_bytes(labels + b"junk after the end\n")
    r = download(tool, server, tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert (dl / "synset_labels.txt").read_bytes() == labels
    reqs = [rng for p, rng in server.requests if p.endswith("synset_labels.txt")]
    assert reqs[0] == "bytes=%d-" % (len(labels) + 19) and reqs[-1] is None, reqs


def test_refused_range_of_a_short_part_is_not_complete(tool, server, tmp_path):
    labels = server.files["/base/synset_labels.txt"]
    dl = tmp_path / "out" / "downloads"
    dl.mkdir(parents=True)
    (dl / "synset_labels.txt.part").write_bytes(labels[:5])
    server.refuse_range["/base/synset_labels.txt"] = len(labels)
    r = download(tool, server, tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert (dl / "synset_labels.txt").read_bytes() == labels
    reqs = [rng for p, rng in server.requests if p.endswith("synset_labels.txt")]
    assert reqs[0] == "bytes=5-" and reqs[-1] is None, reqs


def test_refused_range_of_a_complete_part_is_complete(tool, server, tmp_path):
    """guard: the .part already holds the whole file (416, */N equal)."""
    labels = server.files["/base/synset_labels.txt"]
    dl = tmp_path / "out" / "downloads"
    dl.mkdir(parents=True)
    (dl / "synset_labels.txt.part").write_bytes(labels)
    r = download(tool, server, tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert (dl / "synset_labels.txt").read_bytes() == labels
    reqs = [rng for p, rng in server.requests if p.endswith("synset_labels.txt")]
    assert reqs == ["bytes=%d-" % len(labels)], reqs


@pytest.mark.parametrize("body", [b"n01440764\nn0144", b"<html>Not Found</html>\n",
                                  b"n01440764\r\nn01443537\r\n", b""])
def test_labels_file_not_in_the_published_form_is_refused(tool, server, tmp_path, body):
    """The labels file has no published MD5; its form (one synset ID a line,
    every line ended) is checked before it takes its name: a body cut
    mid-line, an error page, other line ends or nothing is refused and kept
    aside, and nothing is converted."""
    server.files["/base/synset_labels.txt"] = body
    out = tmp_path / "out"
    r = download(tool, server, out)
    assert r.returncode == 1, r.stderr
    assert "synset_labels.txt" in r.stderr and "kept as" in r.stderr, r.stderr
    dl = out / "downloads"
    assert not os.path.exists(dl / "synset_labels.txt")
    assert os.path.exists(dl / "synset_labels.txt.bad-md5")
    assert not [n for n in os.listdir(out) if n.startswith(("train-", "validation-"))]


def test_labels_md5_is_checked_when_given(tool, server, tmp_path):
    out = tmp_path / "out"
    good = hashlib.md5(server.files["/base/synset_labels.txt"]).hexdigest()
    r = download(tool, server, out, "--labels_md5", "0" * 32)
    assert r.returncode == 1, r.stderr
    assert "MD5" in r.stderr and "0" * 32 in r.stderr, r.stderr
    assert not os.path.exists(out / "downloads" / "synset_labels.txt")
    r = download(tool, server, tmp_path / "out2", "--labels_md5", good)
    assert r.returncode == 0, r.stderr
