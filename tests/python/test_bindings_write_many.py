"""TFRecordWriter's batched paths: write() queues small records and
write_many() hands whole slices to C in one call. Whatever mix of the two
is used, under every compression, the file must hold the records in order
with TensorFlow's framing, as read back by the independent pure-Python
reader (tests/python/tfrecord_ref.py, python3-crc32c); flush() and close()
must write everything queued; failures in C surface as the same exceptions
whichever path a record took; a closed writer raises ValueError."""
import os
import subprocess
import sys
import textwrap

import pytest

import tfrecord_ref
from bindings_env import PYTHON_DIR, load_tfrec


@pytest.fixture(scope="module")
def tfrec(build_dir):
    return load_tfrec(build_dir)


COMPRESSIONS = [None, "ZLIB", "GZIP"]
REF_NAME = {None: "NONE", "ZLIB": "ZLIB", "GZIP": "GZIP"}


def some_records(n, seed):
    """Mostly small records (queued), some empty, some of 16 KiB and more
    (written one call each), one past the 256 KiB output buffer."""
    sizes = [0, 1, 7, 100, 1024, 0, 3000, 16 * 1024, 16 * 1024 - 1, 40000]
    out = []
    for i in range(n):
        size = sizes[(i * 7 + seed) % len(sizes)]
        out.append(bytes([(i * 31 + seed) & 0xFF]) * (size % 97) + os.urandom(size - size % 97))
    out[n // 2] = os.urandom(300 * 1024)
    return out


def read_back(path, compression):
    return tfrecord_ref.read_records(str(path), REF_NAME[compression])


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_every_way_of_writing_gives_the_records_in_order(tfrec, tmp_path, compression):
    # More records than one queue (2048) holds, so batches are drained mid-way.
    records = some_records(5000, 3)
    ways = {
        "write": lambda w: [w.write(r) for r in records],
        "write_many": lambda w: w.write_many(records),
        "generator": lambda w: w.write_many(r for r in records),
        # alternate: single writes queue records that the next write_many
        # must put after them, and the other way round
        "mixed": lambda w: [(w.write(records[i]), w.write_many(records[i + 1:i + 3]))
                            for i in range(0, len(records), 3)],
        "buffers": lambda w: w.write_many(bytearray(r) if i % 2 else memoryview(r)
                                          for i, r in enumerate(records)),
    }
    files = {}
    for name, write in ways.items():
        p = tmp_path / (name + ".tfrecord")
        with tfrec.TFRecordWriter(p, compression=compression) as w:
            write(w)
            assert w.records == len(records), name
        assert read_back(p, compression) == records, name
        files[name] = p.read_bytes()
    if compression is None:
        # byte for byte TensorFlow's framing, as the independent encoder gives it
        assert files["write"] == tfrecord_ref.encode_records(records)
    assert len(set(files.values())) == 1  # the same stream whichever way


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_empty_records_and_empty_batches(tfrec, tmp_path, compression):
    p = tmp_path / "empty.tfrecord"
    with tfrec.TFRecordWriter(p, compression=compression) as w:
        w.write_many([])
        w.write_many(iter(()))
        w.write(b"")
        w.write_many([b""] * 3000)
        w.write_many([bytearray(), memoryview(b"")])
        assert w.records == 3003
    assert read_back(p, compression) == [b""] * 3003
    if compression is None:
        assert p.stat().st_size == 16 * 3003


def test_flush_writes_what_is_queued(tfrec, tmp_path):
    records = [os.urandom(n) for n in (10, 0, 500, 2000)] * 50
    p = tmp_path / "flush.tfrecord"
    with tfrec.TFRecordWriter(p) as w:
        w.write_many(records[:100])
        for r in records[100:]:
            w.write(r)
        assert w.records == len(records)  # queued ones count too
        w.flush()
        # everything is in the file (still under its temporary name)
        assert w.bytes_out == len(tfrecord_ref.encode_records(records))
    assert read_back(p, None) == records


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_flush_then_more(tfrec, tmp_path, compression):
    p = tmp_path / "flush2.tfrecord"
    a, b = some_records(300, 1), some_records(300, 2)
    with tfrec.TFRecordWriter(p, compression=compression) as w:
        w.write_many(a)
        w.flush()
        for r in b:
            w.write(r)
    assert read_back(p, compression) == a + b


def test_closed_writer_raises_value_error(tfrec, tmp_path):
    w = tfrec.TFRecordWriter(tmp_path / "c.tfrecord")
    w.write(b"x")
    w.close()
    for call in (lambda: w.write(b"y"), lambda: w.write(b"z" * 100000),
                 lambda: w.write_many([b"y"]), lambda: w.write_many([]),
                 lambda: w.write_many(iter(())), lambda: w.write_many([b"z" * 100000]),
                 w.flush):
        with pytest.raises(ValueError, match="closed"):
            call()
    assert w.records == 1
    assert read_back(tmp_path / "c.tfrecord", None) == [b"x"]
    # aborted: the same, and nothing appears
    w = tfrec.TFRecordWriter(tmp_path / "a.tfrecord")
    w.write_many([b"q"] * 10)
    w.abort()
    with pytest.raises(ValueError, match="closed"):
        w.write_many([b"q"])
    assert not (tmp_path / "a.tfrecord").exists()


def test_bad_records_are_refused_before_anything_is_written(tfrec, tmp_path):
    p = tmp_path / "bad.tfrecord"
    with tfrec.TFRecordWriter(p) as w:
        w.write_many([b"ok"])
        for bad in ([b"a", "text"], [b"a", 5], [b"a", None]):
            with pytest.raises(TypeError):
                w.write_many(bad)
        with pytest.raises(TypeError):
            w.write("text")
        assert w.records == 1
    assert read_back(p, None) == [b"ok"]


# A file size limit (RLIMIT_FSIZE) makes the kernel refuse writes past it
# (EFBIG, with SIGXFSZ ignored): a disk that fills up mid-batch, in a child
# process so that the limit cannot touch the test runner's own files.
_FULL_DISK = textwrap.dedent("""
    import os, resource, signal, sys
    sys.path.insert(0, sys.argv[1])
    import tfrec
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
    path, how = sys.argv[2], sys.argv[3]
    rec = os.urandom(1000) if how != "large" else os.urandom(200000)
    w = tfrec.TFRecordWriter(path)
    try:
        for _ in range(5000 if how != "large" else 50):
            if how == "write_many":
                w.write_many([rec] * 100)
            else:
                w.write(rec)
        w.close()
    except tfrec.Error as e:
        print(type(e).__name__, w.records, isinstance(e, OSError), sep="|")
        print(e)
        w.abort()
        sys.exit(0)
    print("no error")
""")


@pytest.mark.parametrize("how", ["write", "write_many", "large"])
def test_a_full_disk_mid_batch_raises_the_same_error(build_dir, tmp_path, how):
    p = tmp_path / "full.tfrecord"
    env = dict(os.environ, TFREC_LIBRARY=os.path.join(build_dir, "libtfrec.so"))
    out = subprocess.run([sys.executable, "-c", _FULL_DISK, PYTHON_DIR, str(p), how],
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    first, message = out.stdout.splitlines()[:2]
    name, records, is_os_error = first.split("|")
    # the same exception class whether the records went through the queue
    # (write, write_many) or one call each (large)
    assert name == "IOFailureError" and is_os_error == "True", out.stdout
    # some went in before the limit, not all of them
    assert 0 < int(records) < (5000 if how != "large" else 50)
    assert "full.tfrecord" in message  # names the file
    # nothing under the final name, and no temporary file left behind
    assert os.listdir(tmp_path) == []
