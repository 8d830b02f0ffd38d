"""Interoperability: libtfrec (the `tfrec` tool and the C library) against
independent Python implementations: tfrecord_ref.py for the TFRecord framing
and compression, Debian's python3-protobuf (with classes compiled from our
proto/) for tf.Example."""
import base64
import ctypes
import json
import math
import os
import random
import struct

import pytest

import tfrecord_ref as ref

COMPRESSIONS = ref.COMPRESSIONS


def sample_records(seed=1):
    """Empty, tiny, binary and a few larger records."""
    rnd = random.Random(seed)
    recs = [b"", b"a", b"\x00" * 7, b"", bytes(range(256))]
    for size in (1, 11, 12, 16, 1000, 65536, 70001, 300000):
        recs.append(rnd.randbytes(size))
    recs += [b"" for _ in range(3)] + [b"tail"]
    return recs


def framed_offsets(records):
    offs, pos = [], 0
    for r in records:
        offs.append(pos)
        pos += 16 + len(r)
    return offs


# ----------------------------------------------------------- Python writes, tfrec reads

@pytest.mark.parametrize("comp", COMPRESSIONS)
def test_python_writes_tfrec_reads(tmp_path, run_tfrec, comp):
    recs = sample_records()
    path = tmp_path / ("data." + comp.lower())
    ref.write_records(str(path), recs, comp)

    for extra in ([], ["--input-compression", comp]):  # detected, then forced
        p = run_tfrec("count", *extra, path)
        assert p.returncode == 0, p.stderr
        assert p.stdout == b"%d\n" % len(recs)

        p = run_tfrec("cat", *extra, path)
        assert p.returncode == 0, p.stderr
        assert p.stdout == b"".join(recs)

    p = run_tfrec("cat", "--framed", path)
    assert p.returncode == 0, p.stderr
    assert p.stdout == ref.encode_records(recs)

    p = run_tfrec("verify", path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.decode() == "OK %s: %d records, %s\n" % (path, len(recs), comp)


@pytest.mark.parametrize("comp", COMPRESSIONS)
def test_zero_record_file(tmp_path, run_tfrec, comp):
    path = tmp_path / "empty.tfrecord"
    ref.write_records(str(path), [], comp)
    if comp == "NONE":
        assert path.stat().st_size == 0
    else:
        assert path.stat().st_size > 0  # an empty compressed stream still has a header
    # Forced compression (an empty file has nothing to detect from).
    for args in (["count", "-c", comp], ["verify", "-c", comp]):
        p = run_tfrec(*args, path)
        assert p.returncode == 0, p.stderr
    assert run_tfrec("count", "-c", comp, path).stdout == b"0\n"
    p = run_tfrec("cat", "-c", comp, path)
    assert p.returncode == 0 and p.stdout == b""
    # and tfrec's own zero-record file reads as zero records in Python
    out = tmp_path / "empty.out"
    p = run_tfrec("convert", "-q", "-c", comp, "-C", comp, path, out)
    assert p.returncode == 0, p.stderr
    assert ref.read_records(str(out), comp) == []


@pytest.mark.parametrize("comp", COMPRESSIONS)
def test_only_empty_records(tmp_path, run_tfrec, comp):
    recs = [b""] * 1000
    path = tmp_path / "empties"
    ref.write_records(str(path), recs, comp)
    assert run_tfrec("count", path).stdout == b"1000\n"
    p = run_tfrec("cat", "--framed", path)
    assert p.returncode == 0 and p.stdout == ref.encode_records(recs)


def test_concatenated_gzip_members(tmp_path, run_tfrec):
    a, b = tmp_path / "a.gz", tmp_path / "b.gz"
    ref.write_records(str(a), [b"one", b"two"], "GZIP")
    ref.write_records(str(b), [b"three"], "GZIP")
    both = tmp_path / "both.gz"
    both.write_bytes(a.read_bytes() + b.read_bytes())
    p = run_tfrec("cat", "--framed", both)
    assert p.returncode == 0, p.stderr
    assert ref.parse_records(p.stdout) == [b"one", b"two", b"three"]


@pytest.mark.parametrize("comp", COMPRESSIONS)
def test_64mib_record_both_ways(tmp_path, run_tfrec, comp):
    big = os.urandom(1 << 20) * 64  # 64 MiB, incompressible within zlib's window
    recs = [b"before", big, b"", b"after"]
    src = tmp_path / "big.src"
    ref.write_records(str(src), recs, comp, level=1)
    p = run_tfrec("cat", src)
    assert p.returncode == 0, p.stderr[-500:]
    assert len(p.stdout) == sum(map(len, recs)) and p.stdout == b"".join(recs)
    assert run_tfrec("verify", "-q", src).returncode == 0

    # and back: tfrec writes (GZIP when the source was not), Python reads
    out_comp = "GZIP" if comp != "GZIP" else "ZLIB"
    dst = tmp_path / "big.dst"
    p = run_tfrec("convert", "-q", "--output-compression", out_comp, "--level", "1", src, dst)
    assert p.returncode == 0, p.stderr
    assert ref.read_records(str(dst), out_comp) == recs


# ----------------------------------------------------------- tfrec writes, Python reads

@pytest.mark.parametrize("src_comp", COMPRESSIONS)
@pytest.mark.parametrize("dst_comp", COMPRESSIONS)
def test_tfrec_convert_python_reads(tmp_path, run_tfrec, src_comp, dst_comp):
    recs = sample_records(seed=COMPRESSIONS.index(src_comp) * 3 + COMPRESSIONS.index(dst_comp))
    src = tmp_path / "src"
    dst = tmp_path / "dst"
    ref.write_records(str(src), recs, src_comp)
    p = run_tfrec("convert", "-q", "--output-compression", dst_comp, src, dst)
    assert p.returncode == 0, p.stderr
    assert ref.read_records(str(dst), dst_comp) == recs
    # The header bytes say which compression tfrec wrote.
    head = dst.read_bytes()[:2]
    if dst_comp == "GZIP":
        assert head == b"\x1f\x8b"
    elif dst_comp == "ZLIB":
        assert head[0] & 0x0F == 8 and (head[0] << 8 | head[1]) % 31 == 0
    else:
        assert dst.read_bytes() == ref.encode_records(recs)


def test_convert_several_inputs_and_levels(tmp_path, run_tfrec):
    parts = [[b"p%d-%d" % (i, j) for j in range(50)] for i in range(3)]
    paths = []
    for i, part in enumerate(parts):
        p = tmp_path / ("part-%d" % i)
        ref.write_records(str(p), part, COMPRESSIONS[i])
        paths.append(p)
    for level in ("1", "9"):  # sizes are codec-specific (zlib or ISA-L); check content
        out = tmp_path / ("joined-%s.gz" % level)
        p = run_tfrec("convert", "-q", "-C", "GZIP", "-l", level, "-o", out, *paths)
        assert p.returncode == 0, p.stderr
        assert ref.read_records(str(out), "GZIP") == sum(parts, [])


def test_convert_stdout(tmp_path, run_tfrec):
    src = tmp_path / "s"
    ref.write_records(str(src), [b"x", b"yy"], "NONE")
    p = run_tfrec("convert", "-q", "-C", "ZLIB", src, "-")
    assert p.returncode == 0, p.stderr
    assert ref.parse_records(ref.decompress(p.stdout, "ZLIB")) == [b"x", b"yy"]


def test_corruption_found_by_python_offsets(tmp_path, run_tfrec):
    """Flip one data byte of record 3; tfrec names the offset Python computed."""
    recs = [b"r%d" % i * 10 for i in range(8)]
    data = bytearray(ref.encode_records(recs))
    offs = framed_offsets(recs)
    data[offs[3] + 12 + 5] ^= 0x40
    path = tmp_path / "corrupt"
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="offset %d" % offs[3]):
        ref.read_records(str(path))

    p = run_tfrec("verify", path)
    assert p.returncode == 1
    out = p.stdout.decode()
    assert "%s: bad region at offset %d (%d bytes)" % (path, offs[3], 16 + len(recs[3])) in out
    assert out.rstrip().endswith("1 bad regions (%d bytes)" % (16 + len(recs[3])))

    p = run_tfrec("count", path)
    assert p.returncode == 1 and p.stdout == b""
    p = run_tfrec("cat", "--skip-corrupt", path)
    assert p.returncode == 0
    assert p.stdout == b"".join(recs[:3] + recs[4:])
    assert b"offset %d" % offs[3] in p.stderr


# ----------------------------------------------------------- tf.Example via ctypes

class CLib:
    """The few libtfrec example functions the tests call, through ctypes."""

    def __init__(self, path):
        lib = ctypes.CDLL(path)
        P, S, I = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
        sig = {
            "tfrec_example_builder_new": (I, [ctypes.POINTER(P)]),
            "tfrec_example_builder_free": (None, [P]),
            "tfrec_example_add_bytes": (I, [P, ctypes.c_char_p, ctypes.c_char_p, S]),
            "tfrec_example_add_int64_list": (I, [P, ctypes.c_char_p,
                                                 ctypes.POINTER(ctypes.c_int64), S]),
            "tfrec_example_add_float_list": (I, [P, ctypes.c_char_p,
                                                 ctypes.POINTER(ctypes.c_float), S]),
            "tfrec_example_add_empty": (I, [P, ctypes.c_char_p, I]),
            "tfrec_example_serialize_alloc": (I, [P, ctypes.POINTER(P), ctypes.POINTER(S)]),
            "tfrec_free": (None, [P]),
            "tfrec_example_parse": (I, [ctypes.POINTER(P), ctypes.c_char_p, S]),
            "tfrec_example_free": (None, [P]),
            "tfrec_example_feature_count": (S, [P]),
            "tfrec_example_feature_key": (ctypes.c_char_p, [P, S]),
            "tfrec_example_feature_type": (I, [P, ctypes.c_char_p]),
            "tfrec_example_value_count": (S, [P, ctypes.c_char_p]),
            "tfrec_example_get_bytes": (I, [P, ctypes.c_char_p, S, ctypes.POINTER(P),
                                            ctypes.POINTER(S)]),
            "tfrec_example_get_int64_list": (I, [P, ctypes.c_char_p, ctypes.POINTER(P),
                                                 ctypes.POINTER(S)]),
            "tfrec_example_get_float_list": (I, [P, ctypes.c_char_p, ctypes.POINTER(P),
                                                 ctypes.POINTER(S)]),
        }
        for name, (res, args) in sig.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = res, args
        self.lib = lib

    def build(self, features):
        """features: list of (key, kind, values) in insertion order; kind is
        'bytes', 'int64' or 'float'. Returns the serialized Example."""
        L = self.lib
        b = ctypes.c_void_p()
        assert L.tfrec_example_builder_new(ctypes.byref(b)) == 0
        try:
            for key, kind, values in features:
                k = key.encode()
                if not values:
                    rc = L.tfrec_example_add_empty(b, k, {"bytes": 1, "float": 2, "int64": 3}[kind])
                elif kind == "bytes":
                    rc = 0
                    for v in values:
                        rc |= L.tfrec_example_add_bytes(b, k, v, len(v))
                elif kind == "int64":
                    arr = (ctypes.c_int64 * len(values))(*values)
                    rc = L.tfrec_example_add_int64_list(b, k, arr, len(values))
                else:
                    arr = (ctypes.c_float * len(values))(*values)
                    rc = L.tfrec_example_add_float_list(b, k, arr, len(values))
                assert rc == 0, key
            out, n = ctypes.c_void_p(), ctypes.c_size_t()
            assert L.tfrec_example_serialize_alloc(b, ctypes.byref(out), ctypes.byref(n)) == 0
            data = ctypes.string_at(out, n.value)
            L.tfrec_free(out)
            return data
        finally:
            L.tfrec_example_builder_free(b)

    def parse(self, data):
        """{key: (kind, [values])} as the C parser sees data."""
        L = self.lib
        ex = ctypes.c_void_p()
        rc = L.tfrec_example_parse(ctypes.byref(ex), data, len(data))
        if rc != 0:
            return rc
        result = {}
        try:
            for i in range(L.tfrec_example_feature_count(ex)):
                key = L.tfrec_example_feature_key(ex, i)
                t = L.tfrec_example_feature_type(ex, key)
                n = L.tfrec_example_value_count(ex, key)
                p, cnt = ctypes.c_void_p(), ctypes.c_size_t()
                if t == 1:
                    vals = []
                    for j in range(n):
                        assert L.tfrec_example_get_bytes(ex, key, j, ctypes.byref(p),
                                                         ctypes.byref(cnt)) == 0
                        vals.append(ctypes.string_at(p, cnt.value) if cnt.value else b"")
                    result[key.decode()] = ("bytes", vals)
                elif t == 2:
                    assert L.tfrec_example_get_float_list(ex, key, ctypes.byref(p),
                                                          ctypes.byref(cnt)) == 0
                    raw = ctypes.string_at(p, 4 * cnt.value) if cnt.value else b""
                    result[key.decode()] = ("float", list(struct.unpack("<%df" % cnt.value, raw)))
                elif t == 3:
                    assert L.tfrec_example_get_int64_list(ex, key, ctypes.byref(p),
                                                          ctypes.byref(cnt)) == 0
                    raw = ctypes.string_at(p, 8 * cnt.value) if cnt.value else b""
                    result[key.decode()] = ("int64", list(struct.unpack("<%dq" % cnt.value, raw)))
                else:
                    result[key.decode()] = (None, [])
        finally:
            L.tfrec_example_free(ex)
        return result


@pytest.fixture(scope="session")
def clib(build_dir):
    path = os.path.join(build_dir, "libtfrec.so")
    if not os.path.exists(path):
        pytest.fail("%s not built" % path)
    return CLib(path)


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def sample_features(rnd):
    """A varied feature list: every type, empty lists, extremes, binary."""
    return [
        ("image/encoded", "bytes", [rnd.randbytes(rnd.randrange(1, 5000))]),
        ("image/format", "bytes", [b"JPEG"]),
        ("image/height", "int64", [rnd.randrange(1, 5000)]),
        ("ints", "int64", [0, 1, -1, 2**63 - 1, -2**63, 300, -300]),
        ("floats", "float", [f32(rnd.uniform(-1e6, 1e6)) for _ in range(5)] + [0.0, -2.5]),
        ("special", "float", [math.inf, -math.inf, math.nan]),
        ("empty_b", "bytes", []),
        ("empty_f", "float", []),
        ("empty_i", "int64", []),
        ("multi", "bytes", [b"", b"\x00\xff", "é✓".encode(), b"x" * 100]),
        ("z/last", "int64", list(range(-50, 50))),
    ]


def to_pb(pb2, features):
    ex = pb2.Example()
    for key, kind, values in features:
        f = ex.features.feature[key]
        if kind == "bytes":
            f.bytes_list.value.extend(values)
            f.bytes_list.SetInParent()
        elif kind == "int64":
            f.int64_list.value.extend(values)
            f.int64_list.SetInParent()
        else:
            f.float_list.value.extend(values)
            f.float_list.SetInParent()
    return ex


def same_floats(a, b):
    return len(a) == len(b) and all(
        (math.isnan(x) and math.isnan(y)) or x == y for x, y in zip(a, b))


def check_pb_matches(ex, features):
    """A python3-protobuf Example holds exactly `features`."""
    assert sorted(ex.features.feature.keys()) == sorted(k for k, _, _ in features)
    for key, kind, values in features:
        f = ex.features.feature[key]
        assert f.WhichOneof("kind") == kind + "_list", key
        got = list(getattr(f, kind + "_list").value)
        if kind == "float":
            assert same_floats(got, values), key
        else:
            assert got == values, key


def test_c_built_examples_decode_in_python(clib, pb2):
    rnd = random.Random(5)
    for _ in range(50):
        feats = sample_features(rnd)
        rnd.shuffle(feats)  # insertion order must not matter
        data = clib.build(feats)
        ex = pb2.Example.FromString(data)
        check_pb_matches(ex, feats)
        # Same bytes as python3-protobuf's deterministic encoding (sorted map
        # keys, packed lists): two independent encoders agree exactly.
        assert data == ex.SerializeToString(deterministic=True)
        assert data == to_pb(pb2, feats).SerializeToString(deterministic=True)


def test_python_built_examples_parse_in_c(clib, pb2):
    rnd = random.Random(6)
    for _ in range(50):
        feats = sample_features(rnd)
        data = to_pb(pb2, feats).SerializeToString()
        got = clib.parse(data)
        assert sorted(got) == sorted(k for k, _, _ in feats)
        for key, kind, values in feats:
            gkind, gvals = got[key]
            assert gkind == kind, key
            if kind == "float":
                assert same_floats(gvals, values), key
            else:
                assert gvals == values, key


def test_c_parser_rejects_what_python_rejects(clib, pb2):
    """Truncations of a valid Example: python3-protobuf and libtfrec agree
    on which ones are malformed."""
    data = to_pb(pb2, sample_features(random.Random(7))).SerializeToString()
    disagreements = []
    for cut in range(0, len(data), max(1, len(data) // 400)):
        piece = data[:cut]
        try:
            pb2.Example.FromString(piece)
            py_ok = True
        except Exception:
            py_ok = False
        c_ok = isinstance(clib.parse(piece), dict)
        if py_ok != c_ok:
            disagreements.append(cut)
    assert not disagreements


def test_proto_matches_tensorflow_field_numbers(pb2):
    """Our proto/ against TensorFlow's published field numbers."""
    def field(msg, name):
        return msg.DESCRIPTOR.fields_by_name[name]
    for lst in (pb2.FloatList, pb2.Int64List, pb2.BytesList):
        assert field(lst, "value").number == 1
        assert field(lst, "value").label == field(lst, "value").LABEL_REPEATED
    assert pb2.FloatList.DESCRIPTOR.full_name == "tensorflow.FloatList"
    feat = pb2.Feature.DESCRIPTOR
    assert [(f.name, f.number) for f in feat.oneofs_by_name["kind"].fields] == \
        [("bytes_list", 1), ("float_list", 2), ("int64_list", 3)]
    assert field(pb2.Features, "feature").number == 1
    assert field(pb2.Features, "feature").message_type.GetOptions().map_entry
    assert field(pb2.Example, "features").number == 1
    assert field(pb2.FeatureList, "feature").number == 1
    assert field(pb2.FeatureLists, "feature_list").number == 1
    assert field(pb2.FeatureLists, "feature_list").message_type.GetOptions().map_entry
    assert field(pb2.SequenceExample, "context").number == 1
    assert field(pb2.SequenceExample, "feature_lists").number == 2
    # packed numeric lists: one length-delimited run (tag 0x0a), not per-value tags
    assert pb2.Int64List(value=[1, 2]).SerializeToString() == b"\x0a\x02\x01\x02"
    assert pb2.FloatList(value=[0.0]).SerializeToString() == b"\x0a\x04\x00\x00\x00\x00"


# ----------------------------------------------------------- tfrec dump / stats of Python Examples

def b64(b):
    return base64.b64encode(b).decode()


def check_dump_line(line, features, full):
    got = line["example"]
    assert sorted(got) == sorted(k for k, _, _ in features)
    for key, kind, values in features:
        g = got[key]
        assert list(g) == [kind], key
        if kind == "int64":
            assert g[kind] == values
        elif kind == "float":
            # JSON numbers are doubles: what must hold is that they read back
            # as the same float32.
            conv = [f32(float(v)) if not isinstance(v, str) else float(v.replace("Infinity", "inf"))
                    for v in g[kind]]
            assert same_floats(conv, values), key
            for v, x in zip(g[kind], values):  # non-finite values are JSON strings
                assert isinstance(v, str) == (not math.isfinite(x))
        else:
            assert len(g[kind]) == len(values)
            for gv, v in zip(g[kind], values):
                assert gv["len"] == len(v)
                if full or len(v) <= 24:
                    assert gv["b64"] == b64(v) and "b64_prefix" not in gv
                else:
                    assert gv["b64_prefix"] == b64(v[:24]) and "b64" not in gv
                try:
                    text = v.decode("utf-8")
                    printable = all(ord(c) >= 0x20 and ord(c) != 0x7F for c in text)
                except UnicodeDecodeError:
                    printable = False
                if printable and (full or len(v) <= 80):
                    assert gv["text"] == text
                else:
                    assert "text" not in gv


@pytest.mark.parametrize("comp", COMPRESSIONS)
def test_dump_python_examples(tmp_path, run_tfrec, pb2, comp):
    rnd = random.Random(8)
    all_feats = [sample_features(rnd) for _ in range(20)]
    recs = [to_pb(pb2, f).SerializeToString() for f in all_feats]
    recs.append(b"\x0a\x05garbage")  # not a valid Example: shown raw
    path = tmp_path / "examples"
    ref.write_records(str(path), recs, comp)
    offs = framed_offsets(recs)
    for full in (False, True):
        p = run_tfrec("dump", *(["--full"] if full else []), path)
        assert p.returncode == 0, p.stderr
        lines = [json.loads(l) for l in p.stdout.decode().splitlines()]
        assert len(lines) == len(recs)
        for i, line in enumerate(lines):
            assert line["file"] == str(path)
            assert line["index"] == i and line["offset"] == offs[i]
            assert line["length"] == len(recs[i])
            if i < len(all_feats):
                check_dump_line(line, all_feats[i], full)
        assert "example" not in lines[-1]
        assert lines[-1]["raw"] == {"len": 9, "b64": b64(recs[-1])}

    p = run_tfrec("head", "-n", "3", path)
    assert p.returncode == 0
    assert [json.loads(l)["index"] for l in p.stdout.decode().splitlines()] == [0, 1, 2]


def test_stats_python_examples(tmp_path, run_tfrec, pb2):
    rnd = random.Random(9)
    all_feats = []
    for i in range(300):
        feats = sample_features(rnd)
        if i % 3 == 0:
            feats = [f for f in feats if f[0] != "multi"]
        if i % 5 == 0:
            kind = "float" if i % 10 else "int64"
            feats.append(("sometimes", kind, [1.0 if kind == "float" else 1] * (i % 4)))
        all_feats.append(feats)
    recs = [to_pb(pb2, f).SerializeToString() for f in all_feats] + [b"\xff\xff"]
    paths = []
    for i in range(3):  # split over three files of different compression
        path = tmp_path / ("part-%d" % i)
        ref.write_records(str(path), recs[i * 101:(i + 1) * 101], COMPRESSIONS[i])
        paths.append(str(path))
    p = run_tfrec("stats", "--json", str(tmp_path / "part-*"))  # glob expanded by tfrec
    assert p.returncode == 0, p.stderr
    st = json.loads(p.stdout)

    sizes = sorted(map(len, recs))
    rank = lambda q: sizes[max(0, (len(sizes) * q + 99) // 100 - 1)]
    assert st["files"] == 3 and st["records"] == len(recs) == 301
    assert st["bytes"] == sum(sizes)
    assert st["size"]["min"] == sizes[0] and st["size"]["max"] == sizes[-1]
    assert (st["size"]["p50"], st["size"]["p90"], st["size"]["p99"]) == (rank(50), rank(90), rank(99))
    assert st["examples"] == 300 and st["non_examples"] == 1

    expect = {}
    for feats in all_feats:
        for key, kind, values in feats:
            e = expect.setdefault(key, {"types": set(), "records": 0, "values": 0,
                                        "min": None, "max": 0})
            e["types"].add(kind)
            e["records"] += 1
            e["values"] += len(values)
            e["min"] = len(values) if e["min"] is None else min(e["min"], len(values))
            e["max"] = max(e["max"], len(values))
    assert [f["key"] for f in st["features"]] == sorted(expect)
    for f in st["features"]:
        e = expect[f["key"]]
        assert set(f["types"]) == e["types"], f["key"]
        assert (f["records"], f["values"], f["min_values"], f["max_values"]) == \
            (e["records"], e["values"], e["min"], e["max"]), f["key"]
    assert expect["sometimes"]["types"] == {"float", "int64"}  # the mixed case was exercised
