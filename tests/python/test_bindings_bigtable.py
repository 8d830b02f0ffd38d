"""tfrec.bigtable through the Python bindings against the official Bigtable
emulator (scripts/emulator.sh), read back independently with the `cbt` CLI."""
# needs: tfrec-bigtable
import os
import random
import re
import socket
import subprocess

import pytest

import tfrecord_ref

PROJECT, INSTANCE = "pyproj", "pyinst"


@pytest.fixture(scope="module")
def tfrec(bigtable_tfrec):
    return bigtable_tfrec


def go_unquote(s):
    """Decode a Go %q string literal (as cbt prints values) to bytes."""
    assert s[0] == '"' and s[-1] == '"', s
    out = bytearray()
    simple = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92, '"': 34, "'": 39}
    i, body = 0, s[1:-1]
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        e = body[i + 1]
        if e in simple:
            out.append(simple[e])
            i += 2
        elif e == "x":
            out.append(int(body[i + 2:i + 4], 16))
            i += 4
        elif e in "uU":
            n = 4 if e == "u" else 8
            out += chr(int(body[i + 2:i + 2 + n], 16)).encode("utf-8")
            i += 2 + n
        elif e in "01234567":
            out.append(int(body[i + 1:i + 4], 8))
            i += 4
        else:
            raise ValueError("unknown escape \\%s" % e)
    return bytes(out)


def cbt_rows(addr, table):
    """{row key: {family:qualifier: value}} as the cbt CLI reads them."""
    env = dict(os.environ, BIGTABLE_EMULATOR_HOST=addr)
    out = subprocess.run(["cbt", "-project", PROJECT, "-instance", INSTANCE, "read", table],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    rows, key, col = {}, None, None
    for line in out.stdout.splitlines():
        if line.startswith("----"):
            key = None
        elif key is None and line.strip():
            key = line.strip()
            rows[key] = {}
        elif re.match(r"^  \S+:\S*\s+@", line):
            col = line.split()[0]
        elif line.startswith("    \""):
            rows[key][col] = go_unquote(line.strip())
    return rows


def test_write_tfrecords_read_back_with_cbt(tfrec, bigtable_emulator, tmp_path):
    rnd = random.Random(11)
    files = []
    expected = []
    for i in range(2):
        exs = [tfrec.Example({"image/encoded": [rnd.randbytes(rnd.randrange(1, 20000))],
                              "image/class/label": [rnd.randrange(1, 1001)]}).serialize()
               for _ in range(30)]
        p = tmp_path / ("train-%05d-of-00002" % i)
        with tfrec.TFRecordWriter(p, compression="GZIP" if i else None) as w:
            w.write_many(exs)
        files.append(p)
        expected += exs
    with tfrec.bigtable.Writer(PROJECT, INSTANCE, "loaded", create_table=True,
                               batch_rows=7) as w:
        assert w.write_tfrecords(str(tmp_path / "train-*"), row_prefix="train_") == 60
    stats = w.stats()
    assert stats["rows_acked"] == 60 and stats["rows_failed"] == 0
    assert stats["requests"] >= 60 // 7  # batch_rows was honoured
    rows = cbt_rows(bigtable_emulator, "loaded")
    # 10-digit keys when num_records is not given, like the reference loader
    assert sorted(rows) == ["train_%010d" % i for i in range(60)]
    for i, data in enumerate(expected):
        assert rows["train_%010d" % i] == {"tfexample:example": data}
    # and the bindings' own reader sees the same rows, Examples intact
    got = list(tfrec.bigtable.Reader(PROJECT, INSTANCE, "loaded", prefix="train_"))
    assert [r.value() for r in got] == expected
    assert tfrec.Example.parse(got[5].value()).to_dict()["image/class/label"] == \
        tfrec.Example.parse(expected[5]).to_dict()["image/class/label"]


def test_write_tfrecords_pattern_leaves_out_the_indexes(tfrec, bigtable_emulator, tmp_path):
    """'a*' matches a.tfrecord and its index a.tfrecord.idx: the data only,
    as tfrec2bt --source_glob reads it; b.idx without a b is data."""
    records = [b"r%d" % i for i in range(12)]
    tfrecord_ref.write_records(str(tmp_path / "a.tfrecord"), records[:9])
    tfrecord_ref.write_records(str(tmp_path / "b.idx"), records[9:])
    assert tfrec.index_file(str(tmp_path / "a.tfrecord")) == 9
    assert tfrec.glob(str(tmp_path / "*")) == [str(tmp_path / n) for n in
                                               ("a.tfrecord", "a.tfrecord.idx", "b.idx")]
    with tfrec.bigtable.Writer(PROJECT, INSTANCE, "beside", create_table=True) as w:
        assert w.write_tfrecords(str(tmp_path / "*"), row_prefix="x_") == 12
    rows = cbt_rows(bigtable_emulator, "beside")
    assert rows == {"x_%010d" % i: {"tfexample:example": records[i]} for i in range(12)}


def test_num_records_limits_and_pads(tfrec, bigtable_emulator, tmp_path):
    records = [b"r%d\x00" % i for i in range(12)]
    tfrecord_ref.write_records(str(tmp_path / "a.tfrecord"), records)
    with tfrec.bigtable.Writer(PROJECT, INSTANCE, "limited", create_table=True) as w:
        assert w.write_tfrecords(str(tmp_path / "*.tfrecord"), row_prefix="validation_",
                                 num_records=7) == 7
    rows = cbt_rows(bigtable_emulator, "limited")
    assert rows == {"validation_%d" % i: {"tfexample:example": records[i]} for i in range(7)}


def test_write_tfrecords_progress_stop_and_resume(tfrec, bigtable_emulator, tmp_path):
    """The load loop is the library's (tfrec_bt_load): a Python progress
    callback sees the figures, can stop the load, and start_index resumes."""
    records = [b"rec-%04d" % i for i in range(500)]
    tfrecord_ref.write_records(str(tmp_path / "p-0"), records[:250])
    tfrecord_ref.write_records(str(tmp_path / "p-1"), records[250:], "GZIP")
    pattern = str(tmp_path / "p-*")
    seen = []

    def stop_at_100(p):
        seen.append(p)
        return p.records_read >= 100

    with tfrec.bigtable.Writer(PROJECT, INSTANCE, "resumed", create_table=True,
                               batch_rows=10) as w:
        with pytest.raises(tfrec.BigtableError) as e:
            w.write_tfrecords(pattern, row_prefix="r_", num_records=500, progress=stop_at_100,
                              progress_interval=-1)
        assert e.value.code == -15 and "load stopped at record 100" in str(e.value)
        assert e.value.stats["next_index"] == 100 == w.load_stats["next_index"]
        assert seen[0].file.endswith("p-0") and not seen[0].done
        assert seen[-1].done and seen[-1].file is None and seen[-1].rows_acked == 100
        assert all(a.records_read <= b.records_read for a, b in zip(seen, seen[1:]))
        assert w.write_tfrecords(pattern, row_prefix="r_", num_records=500, start_index=100) == 400
        assert w.load_stats["records_skipped"] == 100 and w.load_stats["next_index"] == 500
    rows = cbt_rows(bigtable_emulator, "resumed")
    assert rows == {"r_%03d" % i: {"tfexample:example": records[i]} for i in range(500)}

    # an exception raised by the callback stops the load and comes through
    with pytest.raises(ZeroDivisionError):
        with tfrec.bigtable.Writer(PROJECT, INSTANCE, "resumed") as w:
            w.write_tfrecords(pattern, progress=lambda p: 1 / 0, progress_interval=-1)
    assert w.load_stats["records_read"] == 1


def test_put_and_scan_ranges(tfrec, bigtable_emulator):
    with tfrec.bigtable.Writer(PROJECT, INSTANCE, "puts", family="f", column="c",
                               create_table=True) as w:
        for i in range(20):
            w.put("k%02d" % i, b"v%d" % i)
        w.put(b"\x00bin", b"", column=b"other")
    rows = cbt_rows(bigtable_emulator, "puts")
    assert rows["k07"] == {"f:c": b"v7"} and len(rows) == 21
    scan = list(tfrec.bigtable.Reader(PROJECT, INSTANCE, "puts", start=b"k05", end=b"k09"))
    assert [r.key for r in scan] == [b"k05", b"k06", b"k07", b"k08"]
    assert scan[0].cells[0].family == "f" and scan[0].cells[0].qualifier == b"c"
    assert scan[0].value("f", "c") == b"v5"
    assert len(list(tfrec.bigtable.Reader(PROJECT, INSTANCE, "puts", limit=3))) == 3
    first = next(iter(tfrec.bigtable.Reader(PROJECT, INSTANCE, "puts")))
    assert first.key == b"\x00bin" and first.value("f", "other") == b""


def test_row_limit_and_labels(tfrec, bigtable_emulator):
    with tfrec.bigtable.Writer(PROJECT, INSTANCE, "limit", family="f", column="c",
                               create_table=True) as w:
        w.put(b"a-small", b"x" * 100)
        w.put(b"b-large\x01", b"y" * 5000)
        w.put(b"c-small", b"z" * 100)
    rows = list(tfrec.bigtable.Reader(PROJECT, INSTANCE, "limit"))
    assert [len(r.cells[0].value) for r in rows] == [100, 5000, 100]
    assert all(c.labels == () for r in rows for c in r.cells)  # no labelling filter
    reader = tfrec.bigtable.Reader(PROJECT, INSTANCE, "limit", max_row_bytes=1000)
    assert next(reader).key == b"a-small"
    with pytest.raises(tfrec.BigtableError) as e:
        next(reader)
    assert e.value.code == tfrec.errors.RecordTooLargeError.code
    assert "row 'b-large\\x01'" in str(e.value) and "max_row_bytes (1000)" in str(e.value)
    assert "tables/limit" in str(e.value)  # and the scan
    for bad in (0, -1, 2 ** 64):
        with pytest.raises(ValueError, match="max_row_bytes"):
            tfrec.bigtable.Reader(PROJECT, INSTANCE, "limit", max_row_bytes=bad)
    assert tfrec.bigtable.Cell("f", b"q", 1, b"v") == ("f", b"q", 1, b"v", ())


def test_errors_raise_bigtable_error(tfrec, bigtable_emulator, tmp_path):
    with pytest.raises(tfrec.BigtableError) as e:
        tfrec.bigtable.Writer(PROJECT, INSTANCE, "never_created")
    assert e.value.code == -11 and "never_created" in str(e.value)
    with pytest.raises(tfrec.BigtableError):
        with tfrec.bigtable.Writer(PROJECT, INSTANCE, "x", create_table=True) as w:
            w.write_tfrecords(str(tmp_path / "nothing-*"))
    # nobody listens on this loopback port
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(tfrec.BigtableError) as e:
        tfrec.bigtable.Writer(PROJECT, INSTANCE, "t", endpoint="127.0.0.1:%d" % port,
                              admin_endpoint="127.0.0.1:%d" % port, rpc_timeout_ms=3000)
    assert e.value.code == -14


def test_closed_bigtable_objects_raise_value_error(tfrec, bigtable_emulator):
    w = tfrec.bigtable.Writer(PROJECT, INSTANCE, "closed", create_table=True)
    w.put(b"k", b"v")
    stats = w.close()
    assert stats["rows_acked"] == 1
    for call in (lambda: w.put(b"k2", b"v"), w.flush, w.failed_rows,
                 lambda: w.project):
        with pytest.raises(ValueError, match="closed"):
            call()
    assert w.close() == stats == w.stats()  # closing twice returns the final stats
    r = tfrec.bigtable.Reader(PROJECT, INSTANCE, "closed")
    assert [row.key for row in r] == [b"k"]
    with pytest.raises(StopIteration):  # a scan that ended stays ended
        next(r)
    r.close()
    with pytest.raises(ValueError, match="closed"):  # and once closed, says so
        next(r)


def test_reader_used_after_close_raises(tfrec, bigtable_emulator):
    with tfrec.bigtable.Writer(PROJECT, INSTANCE, "reclosed", create_table=True) as w:
        for i in range(5):
            w.put(b"k%d" % i, b"v")
    r = tfrec.bigtable.Reader(PROJECT, INSTANCE, "reclosed")
    assert next(r).key == b"k0"
    r.close()
    for call in (lambda: next(r), lambda: iter(r), lambda: list(r)):
        with pytest.raises(ValueError, match="bigtable.Reader is closed"):
            call()


def test_messages_name_python_arguments(tfrec, bigtable_emulator):
    """The library's messages name no CLI flag; the binding adds its own."""
    with pytest.raises(tfrec.BigtableError) as e:
        tfrec.bigtable.Writer(PROJECT, INSTANCE, "no_such_table")
    msg = str(e.value)
    assert "no_such_table does not exist" in msg and "create_table=True" in msg, msg
    assert "--" not in msg, msg
    with tfrec.bigtable.Writer(PROJECT, INSTANCE, "onefamily", family="a", create_table=True):
        pass
    with pytest.raises(tfrec.BigtableError) as e:
        tfrec.bigtable.Writer(PROJECT, INSTANCE, "onefamily", family="b")
    msg = str(e.value)
    assert "no column family 'b'" in msg and "create_table=True" in msg and "--" not in msg, msg
    # no project and no metadata server (a closed loopback port stands in for it)
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    old = os.environ.get("GCE_METADATA_HOST")
    os.environ["GCE_METADATA_HOST"] = "127.0.0.1:%d" % port
    try:
        with pytest.raises(tfrec.BigtableError) as e:
            tfrec.bigtable.Writer(None, INSTANCE, "t")
    finally:
        if old is None:
            del os.environ["GCE_METADATA_HOST"]
        else:
            os.environ["GCE_METADATA_HOST"] = old
    msg = str(e.value)
    assert "no project given" in msg and "pass the project" in msg and "--" not in msg, msg


def test_bad_arguments_are_refused_before_c(tfrec, bigtable_emulator, tmp_path):
    """NUL bytes in names and paths, negative sizes: refused, not truncated
    or wrapped around."""
    for kwargs in ({"table": "a\0b"}, {"family": "f\0"}, {"column": "c\0"},
                   {"instance": INSTANCE + "\0x"}, {"project": PROJECT + "\0"}):
        args = dict(project=PROJECT, instance=INSTANCE, table="nul", create_table=True)
        args.update(kwargs)
        with pytest.raises(ValueError, match="NUL"):
            tfrec.bigtable.Writer(**args)
    for kwargs in ({"batch_rows": -1}, {"batch_bytes": -5}, {"max_inflight": -2},
                   {"retry_timeout_ms": -1}, {"rpc_timeout_ms": -1}):
        with pytest.raises(ValueError, match="negative"):
            tfrec.bigtable.Writer(PROJECT, INSTANCE, "neg", create_table=True, **kwargs)
    with tfrec.bigtable.Writer(PROJECT, INSTANCE, "neg", create_table=True) as w:
        p = tmp_path / "d.tfrecord"
        tfrecord_ref.write_records(str(p), [b"x"])
        for kwargs in ({"num_records": -1}, {"start_index": -1}, {"max_rows_per_sec": -1.0}):
            with pytest.raises(ValueError, match="negative"):
                w.write_tfrecords(str(p), **kwargs)
        with pytest.raises(ValueError, match="NUL"):
            w.write_tfrecords(str(p) + "\0*")
        assert w.write_tfrecords(str(p)) == 1
    with pytest.raises(ValueError, match="negative"):
        tfrec.bigtable.Reader(PROJECT, INSTANCE, "neg", limit=-1)
    with pytest.raises(ValueError, match="NUL"):
        tfrec.bigtable.Reader(PROJECT, INSTANCE, "neg\0x")
    with pytest.raises(ValueError, match="negative"):
        tfrec.bigtable.row_key("p", -1, 5)
    with pytest.raises(ValueError, match="negative"):
        tfrec.bigtable.key_width(-3)


def test_put_takes_bytes_like_values_only(tfrec, bigtable_emulator):
    """put(b"k", 5) stored five zero bytes and put(b"k", [1, 2]) b"\\x01\\x02"."""
    from array import array
    with tfrec.bigtable.Writer(PROJECT, INSTANCE, "bytes_only", create_table=True) as w:
        for bad in (5, [1, 2], "text", 1.5, None, memoryview(array("b", [1, 2, 3]))[::2]):
            with pytest.raises(TypeError, match="value"):
                w.put(b"k", bad)
        for bad in (5, [1, 2], None):
            with pytest.raises(TypeError, match="key"):
                w.put(bad, b"v")
        for bad in (5, [1, 2]):  # None: the writer's column
            with pytest.raises(TypeError, match="column"):
                w.put(b"k", b"v", column=bad)
        with pytest.raises(TypeError, match="row_prefix"):
            w.write_tfrecords("/nonexistent/*", row_prefix=5)
        w.put("ké", bytearray(b"v1"))
        w.put(b"k2", memoryview(b"v2"), column="c")
        w.put(bytearray(b"k3"), array("B", [1, 2]))
    rows = {r.key: r.cells for r in tfrec.bigtable.Reader(PROJECT, INSTANCE, "bytes_only")}
    assert sorted(rows) == sorted(["ké".encode(), b"k2", b"k3"])
    assert [(c.qualifier, c.value) for c in rows[b"k2"]] == [(b"c", b"v2")]
    assert [c.value for c in rows[b"k3"]] == [b"\x01\x02"]
    assert [c.value for c in rows["ké".encode()]] == [b"v1"]
