"""The tfrec Python package (ctypes over libtfrec.so), checked against
independent implementations: tfrecord_ref (plain Python framing with
python3-crc32c, zlib, gzip), the C `tfrec` tool, and python3-protobuf with
classes generated from our proto/."""
import gc
import gzip
import json
import os
import random
import re
import shutil
import subprocess
import sys
import threading
import warnings
import zlib

import pytest

import tfrecord_ref
from bindings_env import PYTHON_DIR, load_tfrec

COMPRESSIONS = [None, "ZLIB", "GZIP"]


@pytest.fixture(scope="module")
def tfrec(build_dir):
    return load_tfrec(build_dir)


def ref_name(compression):
    return compression or "NONE"


def make_records(seed, sizes):
    rnd = random.Random(seed)
    return [rnd.randbytes(n) for n in sizes]


# Enough small records to cross the reader's and writer's batch boundaries
# (4096 records), plus empty, tiny and large records (the unbatched path).
SMALL_THEN_LARGE = [0, 1, 7] + [1024] * 5000 + [20000, 300, 200 * 1024, 0, 1 << 20, 5]
LARGE_THEN_SMALL = [64 * 1024] * 40 + [3, 0] + [512] * 5000 + [100 * 1024]


# ------------------------------------------------------------------ round trips

@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize("sizes", [SMALL_THEN_LARGE, LARGE_THEN_SMALL], ids=["small-first", "large-first"])
def test_round_trip(tfrec, tmp_path, compression, sizes):
    records = make_records(len(sizes), sizes)
    path = tmp_path / "r.tfrecord"
    with tfrec.TFRecordWriter(path, compression=compression) as w:
        for r in records[:100]:
            w.write(r)
        w.write_many(bytearray(r) if i % 2 else memoryview(r) for i, r in enumerate(records[100:]))
        assert w.records == len(records)
    assert w.records == len(records)

    with tfrec.TFRecordReader(path) as r:
        assert r.compression == compression
        got = list(r)
    assert all(type(x) is bytes for x in got)
    assert got == records
    with tfrec.TFRecordReader(path, compression=compression or "NONE", zero_copy=True) as r:
        assert [bytes(v) for v in r] == records
    # An independent reader agrees on every record.
    assert tfrecord_ref.read_records(str(path), ref_name(compression)) == records
    assert tfrec.count(path) == len(records)


def test_uncompressed_bytes_match_reference(tfrec, tmp_path):
    records = make_records(1, [0, 5, 1000, 70000] + [100] * 300)
    with tfrec.TFRecordWriter(tmp_path / "a") as w:
        w.write_many(records)
    assert (tmp_path / "a").read_bytes() == tfrecord_ref.encode_records(records)


@pytest.mark.parametrize("compression,level", [("ZLIB", 1), ("ZLIB", 9), ("GZIP", None), ("GZIP", 9)])
def test_compressed_streams_are_standard(tfrec, tmp_path, compression, level):
    records = [b"abc" * 1000] * 50 + make_records(2, [2000] * 20)
    p = tmp_path / "c"
    with tfrec.TFRecordWriter(p, compression=compression, level=level) as w:
        w.write_many(records)
    raw = p.read_bytes()
    plain = zlib.decompress(raw) if compression == "ZLIB" else gzip.decompress(raw)
    assert plain == tfrecord_ref.encode_records(records)
    assert len(raw) < len(plain) / 2  # compressible input did get compressed


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_reads_reference_written_files(tfrec, tmp_path, compression):
    records = make_records(3, [10, 0, 5000, 130000] + [700] * 5000)
    p = tmp_path / "ref.tfrecord"
    tfrecord_ref.write_records(str(p), records, ref_name(compression))
    assert list(tfrec.TFRecordReader(p)) == records
    assert list(tfrec.TFRecordReader(p, compression=compression or "NONE")) == records


# ------------------------------------------------------------------ the C tool

@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_c_tool_reads_python_files(tfrec, run_tfrec, tmp_path, compression):
    records = make_records(4, [1024] * 3000 + [0, 150000, 9])
    p = tmp_path / "py.tfrecord"
    with tfrec.TFRecordWriter(p, compression=compression) as w:
        w.write_many(records)
    res = run_tfrec("count", p)
    assert res.returncode == 0, res.stderr
    assert int(res.stdout) == len(records)
    res = run_tfrec("verify", p)
    assert res.returncode == 0, res.stdout + res.stderr
    res = run_tfrec("cat", p)
    assert res.returncode == 0, res.stderr
    assert res.stdout == b"".join(records)


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_python_reads_c_tool_files(tfrec, run_tfrec, tmp_path, compression):
    records = make_records(5, [33] * 4500 + [0, 250000, 1024])
    src = tmp_path / "src.tfrecord"
    tfrecord_ref.write_records(str(src), records)
    out = tmp_path / "c.tfrecord"
    res = run_tfrec("convert", "-q", "-C", ref_name(compression), src, out)
    assert res.returncode == 0, res.stderr
    with tfrec.TFRecordReader(out) as r:
        assert r.compression == compression
        assert list(r) == records
    # and the C tool's raw framed output, read from a file
    res = run_tfrec("cat", "--framed", out)
    assert res.returncode == 0, res.stderr
    (tmp_path / "framed").write_bytes(res.stdout)
    assert list(tfrec.TFRecordReader(tmp_path / "framed")) == records


def test_examples_agree_with_c_dump(tfrec, run_tfrec, tmp_path):
    exs = [{"id": [i], "name": [("n%d" % i).encode()], "w": [0.5, -2.25, float(i)]}
           for i in range(20)]
    p = tmp_path / "ex.tfrecord"
    with tfrec.TFRecordWriter(p) as w:
        for d in exs:
            w.write(tfrec.Example(d).serialize())
    res = run_tfrec("dump", "-f", p)
    assert res.returncode == 0, res.stderr
    lines = [json.loads(line) for line in res.stdout.decode().splitlines()]
    assert len(lines) == len(exs)
    for d, line in zip(exs, lines):
        ex = line["example"]
        assert ex["id"] == {"int64": d["id"]}
        assert ex["w"] == {"float": d["w"]}
        assert ex["name"]["bytes"][0]["text"] == d["name"][0].decode()


# ------------------------------------------------------------------ tf.Example vs protobuf

def pb_to_dict(msg):
    out = {}
    for key, f in msg.features.feature.items():
        kind = f.WhichOneof("kind")
        out[key] = (kind, list(getattr(f, kind).value) if kind else [])
    return out


def typed(tfrec, ex):
    names = {"bytes": "bytes_list", "int64": "int64_list", "float": "float_list"}
    return {k: (names[ex.kind(k)], v) for k, v in ex.to_dict().items()}


EXAMPLE_DICTS = [
    {"image/encoded": [b"\xff\xd8\x00jpeg"], "image/class/label": [7],
     "image/height": [480], "bbox": [0.1, 0.25, 1.0, -3.5]},
    {"many": [b"a", b"", b"\x00" * 300, "unicodé"], "big": [2 ** 63 - 1, -2 ** 63, 0, -1],
     "ints_as_floats": [1, 2.5], "ünï/kéy": [1], "scalar": 3, "scalar_bytes": b"x"},
    {},
]


@pytest.mark.parametrize("d", EXAMPLE_DICTS)
def test_example_decodes_with_protobuf(tfrec, pb2, d):
    ex = tfrec.Example(d)
    data = ex.serialize()
    msg = pb2.Example.FromString(data)
    got = pb_to_dict(msg)
    assert got == typed(tfrec, ex)
    assert set(got) == set(d)
    # and deterministic protobuf serialization of the same message is the same bytes
    assert msg.SerializeToString(deterministic=True) == data


def test_example_empty_and_explicit_kinds(tfrec, pb2):
    ex = tfrec.Example({"e_bytes": [], "e_int": tfrec.Int64List(), "e_float": tfrec.FloatList([]),
                        "f": tfrec.FloatList([1, 2]), "i": tfrec.Int64List([3])})
    msg = pb2.Example.FromString(ex.serialize())
    assert pb_to_dict(msg) == {"e_bytes": ("bytes_list", []), "e_int": ("int64_list", []),
                               "e_float": ("float_list", []), "f": ("float_list", [1.0, 2.0]),
                               "i": ("int64_list", [3])}
    back = tfrec.Example.parse(ex.serialize())
    assert back.kind("e_int") == "int64" and back.kind("e_float") == "float"
    assert back == ex


def test_example_parses_protobuf_output(tfrec, pb2):
    msg = pb2.Example()
    fm = msg.features.feature
    fm["b"].bytes_list.value.extend([b"x", b"yz"])
    fm["i"].int64_list.value.extend([-5, 1 << 40])
    fm["f"].float_list.value.extend([0.1, 3.0])
    data = msg.SerializeToString()
    d = tfrec.Example.parse(data).to_dict()
    assert d == {"b": [b"x", b"yz"], "i": [-5, 1 << 40], "f": list(msg.features.feature["f"].float_list.value)}
    # protobuf merge rules: two serialized messages concatenated are one message
    msg2 = pb2.Example()
    msg2.features.feature["i2"].int64_list.value.append(9)
    both = pb2.Example.FromString(data + msg2.SerializeToString())
    assert typed(tfrec, tfrec.Example.parse(data + msg2.SerializeToString())) == pb_to_dict(both)
    assert tfrec.parse_example(tfrec.serialize_example({"k": [1]})) == {"k": [1]}


def _ld(field, payload):
    """A length-delimited protobuf field (lengths here stay below 128)."""
    assert len(payload) < 128
    return bytes([field << 3 | 2, len(payload)]) + payload


def test_example_parses_unpacked_and_split_lists(tfrec, pb2):
    import struct
    ints = b"".join(b"\x08" + bytes([v]) for v in (1, 2, 3))          # unpacked int64s
    floats = b"".join(b"\x0d" + struct.pack("<f", v) for v in (0.5, 4.0))  # unpacked floats
    two_runs = _ld(1, bytes([7, 8])) + _ld(1, bytes([9]))             # two packed runs
    feats = (_ld(1, _ld(1, b"i") + _ld(2, _ld(3, ints))) +
             _ld(1, _ld(1, b"f") + _ld(2, _ld(2, floats))) +
             _ld(1, _ld(1, b"r") + _ld(2, _ld(3, two_runs))))
    data = _ld(1, feats)
    expected = pb_to_dict(pb2.Example.FromString(data))  # protobuf is the oracle
    assert expected == {"i": ("int64_list", [1, 2, 3]), "f": ("float_list", [0.5, 4.0]),
                        "r": ("int64_list", [7, 8, 9])}
    assert typed(tfrec, tfrec.Example.parse(data)) == expected


def test_example_round_trips_random_dicts(tfrec, pb2):
    rnd = random.Random(6)
    for _ in range(200):
        d = {}
        for j in range(rnd.randrange(0, 6)):
            kind = rnd.choice("bif")
            n = rnd.randrange(1, 8)
            if kind == "b":
                d["k%d" % j] = [rnd.randbytes(rnd.randrange(0, 40)) for _ in range(n)]
            elif kind == "i":
                d["k%d" % j] = [rnd.randrange(-2 ** 63, 2 ** 63) for _ in range(n)]
            else:
                d["k%d" % j] = [float(rnd.randrange(-10 ** 6, 10 ** 6)) / 4 for _ in range(n)]
        data = tfrec.Example(d).serialize()
        assert tfrec.Example.parse(data).to_dict() == d  # all values exact in float32
        assert pb_to_dict(pb2.Example.FromString(data)) == {
            k: ({"b": "bytes_list", "i": "int64_list", "f": "float_list"}["b" if isinstance(v[0], bytes) else "i" if isinstance(v[0], int) else "f"], v)
            for k, v in d.items()}


def test_example_rejects_bad_input(tfrec):
    with pytest.raises(tfrec.ParseError):
        tfrec.Example.parse(b"\x0a\x05\x0a\x03")  # field 1 claims more bytes than there are
    with pytest.raises(OverflowError):
        tfrec.Example({"x": [2 ** 63]})
    with pytest.raises(TypeError):
        tfrec.Example({"x": [b"a", 1]}).serialize()
    with pytest.raises(ValueError):
        tfrec.Example({"a\0b": [1]}).serialize()


# ------------------------------------------------------------------ errors

def write_ref(path, records):
    tfrecord_ref.write_records(str(path), records)
    return tfrecord_ref.encode_records(records)


def test_corrupt_data_raises_after_good_records(tfrec, tmp_path):
    records = make_records(7, [100] * 10)
    p = tmp_path / "bad"
    raw = bytearray(write_ref(p, records))
    raw[3 * 116 + 12 + 50] ^= 0x01  # a data byte of record 3
    p.write_bytes(raw)
    got = []
    with pytest.raises(tfrec.CorruptRecordError) as e:
        for r in tfrec.TFRecordReader(p):
            got.append(r)
    assert got == records[:3]
    assert e.value.code == -6 and isinstance(e.value, tfrec.DataLossError)
    assert str(p) in str(e.value) and str(3 * 116) in str(e.value)
    with pytest.raises(tfrec.CorruptRecordError):
        tfrec.count(p)
    v = tfrec.verify(p)
    assert not v.ok and v.records == 3 and isinstance(v.error, tfrec.CorruptRecordError)


def test_corrupt_length_header(tfrec, tmp_path):
    p = tmp_path / "badlen"
    raw = bytearray(write_ref(p, [b"abc", b"defg"]))
    raw[19 + 2] ^= 0x40  # the length field of record 1 (record 0 is 12 + 3 + 4 bytes)
    p.write_bytes(raw)
    with pytest.raises(tfrec.CorruptRecordError) as e:
        list(tfrec.TFRecordReader(p, zero_copy=True))
    assert e.value.code == -5


@pytest.mark.parametrize("cut", [5, 12, 40, 95])
def test_truncated_file(tfrec, tmp_path, cut):
    p = tmp_path / "trunc"
    raw = write_ref(p, [b"a" * 80, b"b" * 80])
    p.write_bytes(raw[:96 + cut])  # record 0 is 96 bytes; cut into record 1
    # Fewer than 12 bytes cannot be a record header: trailing garbage.
    expected = tfrec.TrailingGarbageError if cut < 12 else tfrec.TruncatedRecordError
    with pytest.raises(expected) as e:
        list(tfrec.TFRecordReader(p))
    assert isinstance(e.value, tfrec.DataLossError) and "96" in str(e.value)
    v = tfrec.verify(p)
    assert (v.ok, v.records, type(v.error)) == (False, 1, expected)


def test_corrupt_gzip_stream(tfrec, tmp_path):
    p = tmp_path / "g"
    with tfrec.TFRecordWriter(p, compression="GZIP") as w:
        w.write_many(make_records(8, [5000] * 50))
    raw = bytearray(p.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    p.write_bytes(raw)
    with pytest.raises(tfrec.DataLossError):
        list(tfrec.TFRecordReader(p))
    p.write_bytes(bytes(raw[:len(raw) // 3]))
    with pytest.raises(tfrec.DataLossError):
        tfrec.count(p)


def test_skip_corrupt_resynchronises(tfrec, tmp_path):
    records = make_records(9, [200] * 20)
    p = tmp_path / "skip"
    raw = bytearray(write_ref(p, records))
    raw[5 * 216 + 20] ^= 0x10
    p.write_bytes(raw)
    with tfrec.TFRecordReader(p, skip_corrupt=True) as r:
        got = list(r)
        stats = r.stats()
    assert got == records[:5] + records[6:]
    assert stats["skipped_regions"] == 1 and stats["records"] == 19


def test_open_errors(tfrec, tmp_path):
    with pytest.raises(tfrec.NotFoundError) as e:
        tfrec.TFRecordReader(tmp_path / "missing")
    assert isinstance(e.value, FileNotFoundError) and "missing" in str(e.value)
    with pytest.raises(FileNotFoundError):
        tfrec.count(tmp_path / "missing")
    with pytest.raises(OSError):
        tfrec.TFRecordWriter(tmp_path / "no" / "such" / "dir" / "f")
    (tmp_path / "unreadable").mkdir()
    with pytest.raises(tfrec.IOFailureError):  # a directory is not a readable file
        list(tfrec.TFRecordReader(tmp_path / "unreadable"))
    with pytest.raises(ValueError):
        tfrec.TFRecordWriter(tmp_path / "x", compression="LZ4")
    with pytest.raises(ValueError):
        tfrec.TFRecordWriter(tmp_path / "x", compression="GZIP", level=12)
    with pytest.raises(ValueError):
        tfrec.TFRecordReader(tmp_path / "x", compression="bzip2")


# ------------------------------------------------------------------ writer and reader lifetime

def test_writer_commits_only_on_clean_close(tfrec, tmp_path):
    p = tmp_path / "out"
    with pytest.raises(RuntimeError):
        with tfrec.TFRecordWriter(p) as w:
            w.write(b"x" * 100000)
            w.write(b"y")
            raise RuntimeError("boom")
    assert not p.exists() and os.listdir(tmp_path) == []

    w = tfrec.TFRecordWriter(p)
    w.write(b"z")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del w
        gc.collect()
    assert any(issubclass(c.category, ResourceWarning) for c in caught)
    assert os.listdir(tmp_path) == []

    w = tfrec.TFRecordWriter(p)
    w.write(b"q")
    w.flush()
    assert not p.exists()  # still under its temporary name
    w.close()
    assert tfrecord_ref.read_records(str(p)) == [b"q"]
    with pytest.raises(ValueError):
        w.write(b"after close")
    w = tfrec.TFRecordWriter(tmp_path / "s")
    with pytest.raises(TypeError):
        w.write("text")
    with pytest.raises(TypeError):
        w.write(5)
    with pytest.raises(TypeError):
        w.write_many([b"ok", "text"])
    from array import array
    w.write(array("i", [1, 2]))  # any buffer: its raw bytes
    w.write_many([array("h", [3])])
    w.close()
    assert tfrecord_ref.read_records(str(tmp_path / "s")) == [
        array("i", [1, 2]).tobytes(), array("h", [3]).tobytes()]


def test_zero_copy_views(tfrec, tmp_path):
    p = tmp_path / "zc"
    write_ref(p, [b"first", b"second"])
    it = iter(tfrec.TFRecordReader(p, zero_copy=True))
    v = next(it)
    assert isinstance(v, memoryview) and v.readonly and bytes(v) == b"first"
    next(it)
    assert bytes(v) == b"first"  # small records: views of a batch buffer they keep alive
    with pytest.raises(TypeError):
        v[0] = 1  # read-only
    # Views kept across many batches still show their own records: a buffer
    # that views point into is never refilled, even after the reader closed.
    recs = make_records(14, [1000] * 6000)
    write_ref(p, recs)
    with tfrec.TFRecordReader(p, zero_copy=True) as r:
        kept = list(r)
    gc.collect()
    assert [bytes(x) for x in kept] == recs
    # Big records too: a view (and its slices) keeps its batch buffer alive
    # (tests/python/test_bindings_lifetime.py checks derived buffers).
    big = make_records(12, [70000] * 40)
    write_ref(p, big)
    views = list(tfrec.TFRecordReader(p, zero_copy=True))
    gc.collect()
    assert [bytes(v) for v in views] == big


def test_reader_next_and_close(tfrec, tmp_path):
    p = tmp_path / "n"
    write_ref(p, [b"1", b"2"])
    r = tfrec.TFRecordReader(p)
    assert next(r) == b"1"
    assert [x for x in r] == [b"2"]
    with pytest.raises(StopIteration):
        next(r)
    r.close()
    r.close()
    # an iterator used after close() raises, never touching freed memory
    # (tests/python/test_bindings_checks.py covers the other cases)
    write_ref(p, make_records(13, [100] * 10000 + [50000] * 30))
    for zc in (False, True):
        r = tfrec.TFRecordReader(p, zero_copy=zc)
        it = iter(r)
        next(it)
        r.close()
        with pytest.raises(ValueError):
            next(it)


def test_threads_use_separate_handles(tfrec, tmp_path):
    def work(i, results):
        recs = make_records(100 + i, [300 + i] * 3000)
        p = tmp_path / ("t%d" % i)
        with tfrec.TFRecordWriter(p, compression=COMPRESSIONS[i % 3]) as w:
            w.write_many(recs)
        results[i] = list(tfrec.TFRecordReader(p)) == recs and tfrec.count(p) == 3000
    results = {}
    threads = [threading.Thread(target=work, args=(i, results)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {i: True for i in range(6)}


# ------------------------------------------------------------------ packaging

def test_library_not_found_lists_places(tmp_path):
    env = dict(os.environ, TFREC_LIBRARY=str(tmp_path / "nowhere" / "libtfrec.so"))
    code = "import sys; sys.path.insert(0, %r)\ntry:\n import tfrec\nexcept ImportError as e:\n print(type(e).__name__); print(e)" % PYTHON_DIR
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.startswith("LibraryNotFoundError")
    assert "TFREC_LIBRARY" in out.stdout and str(tmp_path / "nowhere") in out.stdout


def test_package_version_is_the_library_version(tfrec):
    # setup.py's version is written by hand; it must follow version.h.
    header = open(os.path.join(os.path.dirname(PYTHON_DIR), "include", "tfrec", "version.h")).read()
    want = re.search(r'#define TFREC_VERSION_STRING "([^"]+)"', header).group(1)
    setup = open(os.path.join(PYTHON_DIR, "setup.py")).read()
    assert re.search(r'version="([^"]+)"', setup).group(1) == want
    assert tfrec.__version__ == want


def test_pip_installs_offline(build_dir, tmp_path):
    src = tmp_path / "src"
    shutil.copytree(PYTHON_DIR, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    target = tmp_path / "site"
    res = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps",
                          "--no-cache-dir", "--disable-pip-version-check",
                          "--target", str(target), str(src)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    assert (target / "tfrec" / "record.py").exists()
    # The installed copy works from elsewhere, finding the library via TFREC_LIBRARY.
    code = ("import tfrec, sys; p = sys.argv[1]\n"
            "assert tfrec.__file__.startswith(%r)\n"
            "with tfrec.TFRecordWriter(p, compression='GZIP') as w: w.write(b'hello')\n"
            "print(list(tfrec.TFRecordReader(p)))") % str(target)
    env = dict(os.environ, PYTHONPATH=str(target),
               TFREC_LIBRARY=os.path.join(build_dir, "libtfrec.so"))
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "f")], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[b'hello']"


def _python(code, env, cwd):
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=60)


def _env_without_library_vars():
    return {k: v for k, v in os.environ.items() if k not in ("TFREC_LIBRARY", "TFREC_BUILD")}


def _built_parts(build_dir):
    with open(os.path.join(build_dir, "parts")) as f:
        return f.read().split()


def test_finds_library_in_installed_layout(build_dir, tmp_path):
    # `make install` puts the package in LIBDIR/python3.X/dist-packages/tfrec
    # and the libraries in LIBDIR; without TFREC_LIBRARY they must be found
    # there, the optional parts next to the core.
    libdir = tmp_path / "lib"
    pkg = libdir / "python3.11" / "dist-packages" / "tfrec"
    shutil.copytree(os.path.join(PYTHON_DIR, "tfrec"), pkg,
                    ignore=shutil.ignore_patterns("__pycache__", "libtfrec*.so*"))
    parts = _built_parts(build_dir)
    for part in parts:
        shutil.copy(os.path.realpath(os.path.join(build_dir, "lib%s.so" % part)),
                    libdir / ("lib%s.so.1" % part))
    env = _env_without_library_vars()
    env["PYTHONPATH"] = str(pkg.parent)
    out = _python("import tfrec, json; print(tfrec.library_path); print(json.dumps(tfrec.parts()))",
                  env, tmp_path)
    assert out.returncode == 0, out.stderr
    path, found = out.stdout.splitlines()
    assert path == str(libdir / "libtfrec.so.1")
    expected = {p: (str(libdir / ("lib%s.so.1" % p)) if p in parts else None)
                for p in ("tfrec", "tfrec-image", "tfrec-gcp", "tfrec-bigtable", "tfrec-storage")}
    assert json.loads(found) == expected


def test_missing_part_names_feature_and_part(build_dir, tmp_path):
    # A directory holding only the core: the record API works, the features
    # of the optional parts say which part they need and how to build it.
    core = tmp_path / "core"
    core.mkdir()
    shutil.copy(os.path.realpath(os.path.join(build_dir, "libtfrec.so")), core / "libtfrec.so.1")
    env = _env_without_library_vars()
    env["TFREC_LIBRARY"] = str(core / "libtfrec.so.1")
    env["PYTHONPATH"] = PYTHON_DIR
    code = """if True:
        import json, sys, tfrec
        with tfrec.TFRecordWriter("r") as w:
            w.write(b"x")
        assert list(tfrec.TFRecordReader("r")) == [b"x"]
        print(json.dumps([tfrec.parts(), tfrec.features()]))
        for what, call in (("convert_images", lambda: tfrec.convert_images("in", "out")),
                           ("bigtable attribute", lambda: tfrec.bigtable.Client),
                           ("import tfrec.bigtable", lambda: __import__("tfrec.bigtable"))):
            try:
                call()
                print(what, "did not raise")
            except tfrec.MissingPartError as e:
                assert isinstance(e, ImportError)
                print(str(e))
        """
    out = _python(code, env, tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    found, feats = json.loads(lines[0])
    assert found == {"tfrec": str(core / "libtfrec.so.1"), "tfrec-image": None, "tfrec-gcp": None,
                     "tfrec-bigtable": None, "tfrec-storage": None}
    assert feats["records"] and not feats["convert_images"] and not feats["bigtable"]
    assert len(lines) == 4
    assert lines[1].startswith("convert_images needs libtfrec-image, which is not installed")
    assert "WITH_IMAGE=1" in lines[1] and str(core) in lines[1]
    for line in lines[2:]:
        assert line.startswith("tfrec.bigtable needs libtfrec-bigtable, which is not installed")
        assert "WITH_BIGTABLE=1" in line


def test_parts_come_from_the_core_directory(build_dir):
    # The build under test has its parts loaded from the build directory
    # itself, never from elsewhere (another build, the system).
    tfrec = load_tfrec(build_dir)
    built = _built_parts(build_dir)
    for part, path in tfrec.parts().items():
        if part in built:
            assert os.path.dirname(path) == build_dir
        else:
            assert path is None

def test_empty_files_and_empty_records(tfrec, tmp_path):
    p = tmp_path / "empty"
    with tfrec.TFRecordWriter(p):
        pass
    assert p.read_bytes() == b""
    assert list(tfrec.TFRecordReader(p)) == [] and tfrec.count(p) == 0
    assert tfrec.verify(p) == (True, 0, 0, None, None)
    for comp in COMPRESSIONS:
        with tfrec.TFRecordWriter(p, compression=comp) as w:
            w.write_many([b""] * 10)
        assert tfrecord_ref.read_records(str(p), ref_name(comp)) == [b""] * 10
        assert list(tfrec.TFRecordReader(p)) == [b""] * 10
        assert [bytes(v) for v in tfrec.TFRecordReader(p, zero_copy=True)] == [b""] * 10
