"""Cloud Storage interoperability: objects written by libtfrec-storage are
read back by the official Node.js client (@google-cloud/storage, CRC32C
validation on), and objects the Node client wrote are read by libtfrec;
bytes are compared and CRC32C is computed independently with python3-crc32c.
All against the storage test server (tests/storage/gcs_emulator.js) on
loopback, started here unless STORAGE_EMULATOR_HOST is already set.

libtfrec's side is bench/storage.c (a small program over
include/tfrec/storage.h), compiled here against the build's shared
libraries.
"""
# needs: tfrec-storage
import base64
import json
import os
import random
import subprocess
import urllib.request

import crc32c
import pytest

import tfrecord_ref as ref
from storage_server import ours, server  # noqa: F401 (fixtures)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
KI256 = 256 * 1024


def crc_b64(data):
    return base64.b64encode(crc32c.crc32c(data).to_bytes(4, "big")).decode()


def run(args, env, ok=True, timeout=300):
    p = subprocess.run([str(a) for a in args], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
    if ok and p.returncode != 0:
        pytest.fail("%s failed (%d): %s" % (args[0], p.returncode, p.stderr.decode()))
    return p


def node(env, *args, ok=True):
    return run(["node", os.path.join(REPO, "tests", "storage", "node_peer.js")] + list(args), env, ok=ok)


def meta(env, url):
    return json.loads(node(env, "meta", url).stdout)


def admin(url, route, body):
    req = urllib.request.Request(url + route, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


SIZES = [0, 1, KI256 - 1, KI256, 3 * 1024 * 1024 + 17, 17 * 1024 * 1024 + 5]


@pytest.mark.parametrize("size", SIZES)
def test_node_reads_what_we_wrote(server, ours, tmp_path, size):
    _, _, env = server
    data = random.Random(size).randbytes(size)
    src = tmp_path / "src"
    src.write_bytes(data)
    url = "gs://interop/ours/size-%d" % size
    run([ours, "copy", src, url], env)
    md = meta(env, url)
    assert int(md["size"]) == size
    assert md["crc32c"] == crc_b64(data)
    back = tmp_path / "back"
    node(env, "download", url, back)
    assert back.read_bytes() == data


def test_node_reads_our_chunked_upload_with_odd_name(server, ours, tmp_path):
    """Small chunks so the upload takes many 308 rounds; a name with
    non-ASCII, spaces and characters that need percent-encoding."""
    _, _, env = server
    data = random.Random(7).randbytes(5 * KI256 + 123)
    src = tmp_path / "src"
    src.write_bytes(data)
    url = "gs://interop/dir one/ünï code+%%?#[x].bin"
    run([ours, "--chunk", KI256, "copy", src, url], env)
    assert meta(env, url)["crc32c"] == crc_b64(data)
    back = tmp_path / "back"
    node(env, "download", url, back)
    assert back.read_bytes() == data


@pytest.mark.parametrize("mode", [[], ["--chunk", str(KI256)], ["--simple"]],
                         ids=["resumable-stream", "resumable-chunked", "multipart"])
def test_we_read_what_node_wrote(server, ours, tmp_path, mode):
    _, _, env = server
    data = random.Random(len(mode)).randbytes(3 * KI256 + 999)
    src = tmp_path / "src"
    src.write_bytes(data)
    url = "gs://interop/node/%s.bin" % ("-".join(mode) or "stream")
    node(env, "upload", src, url, *mode)
    back = tmp_path / "back"
    out = run([ours, "copy", url, back], env).stdout.decode()
    assert out.startswith("bytes %d " % len(data))
    assert back.read_bytes() == data
    assert crc32c.crc32c(back.read_bytes()) == crc32c.crc32c(data)
    # Parallel ranged reads of the same object give the same bytes.
    run([ours, "--parallel", 4, "--read-ahead", 65536, "copy", url, back], env)
    assert back.read_bytes() == data


@pytest.mark.parametrize("comp", ["NONE", "GZIP", "ZLIB"])
def test_we_read_tfrecords_node_uploaded(server, ours, tmp_path, comp):
    _, _, env = server
    rnd = random.Random(3)
    records = [rnd.randbytes(rnd.randrange(0, 70000)) for _ in range(200)]
    local = tmp_path / "recs"
    ref.write_records(str(local), records, comp)
    url = "gs://interop/tfrecords/train-%s" % comp
    node(env, "upload", local, url)
    out = run([ours, "records", 1, url], env).stdout.decode().split()
    assert int(out[out.index("records") + 1]) == len(records)
    assert int(out[out.index("bytes") + 1]) == sum(map(len, records))


def test_both_clients_reject_a_corrupted_object(server, ours, tmp_path):
    """A byte flipped on the server with the stored CRC32C kept: the Node
    client's validation and our whole-object check both refuse it."""
    _, admin_url, env = server
    data = random.Random(11).randbytes(2 * KI256)
    src = tmp_path / "src"
    src.write_bytes(data)
    url = "gs://interop/corrupt.bin"
    run([ours, "copy", src, url], env)
    admin(admin_url, "/corrupt", {"bucket": "interop", "object": "corrupt.bin", "offset": 1000})
    p = node(env, "download", url, tmp_path / "n", ok=False)
    assert p.returncode != 0 and b"MISMATCH" in p.stderr.upper()
    p = run([ours, "copy", url, tmp_path / "o"], env, ok=False)
    assert p.returncode != 0
    assert b"corrupt.bin" in p.stderr and b"crc32c" in p.stderr.lower()
    assert not (tmp_path / "o").exists()
