"""Every Python entry point that takes data takes bytes-like objects only
(bytes, bytearray, memoryview, any C-contiguous buffer) and raises TypeError
for anything else: bytes(5) would be five zero bytes, bytes([1, 2]) two
bytes, and a str would be encoded silently. Keys and names may also be str
(stored as UTF-8) where the docs say so. The tests needing the Bigtable
emulator (Writer.put) are in test_bindings_bigtable.py."""
from array import array

import pytest

import tfrecord_ref
from bindings_env import load_tfrec

NOT_BYTES = [5, 0, [1, 2], (65,), 1.5, None, {1: 2}, iter([b"a"])]


@pytest.fixture(scope="module")
def tfrec(build_dir):
    return load_tfrec(build_dir)


def not_contiguous():
    return memoryview(array("b", [1, 2, 3, 4]))[::2]


def test_helper(tfrec):
    from tfrec import _args
    assert _args.data(b"x", "v") == b"x"
    assert _args.data(bytearray(b"ab"), "v") == b"ab"
    assert _args.data(memoryview(b"abc")[1:], "v") == b"bc"
    assert _args.data(array("h", [1]), "v") == array("h", [1]).tobytes()
    for bad in NOT_BYTES + ["text", not_contiguous()]:
        with pytest.raises(TypeError, match="^value must be"):
            _args.data(bad, "value")
    assert _args.key("ké", "k") == "ké".encode()
    assert _args.key(b"k", "k") == b"k"
    for bad in NOT_BYTES:
        with pytest.raises(TypeError, match="^key must be"):
            _args.key(bad, "key")
    for bad in NOT_BYTES[:4]:
        with pytest.raises(TypeError, match="^table must be"):
            _args.text(bad, "table")


def test_record_writer(tfrec, tmp_path):
    p = tmp_path / "w.tfrecord"
    with tfrec.TFRecordWriter(p) as w:
        for bad in NOT_BYTES + ["text", not_contiguous()]:
            with pytest.raises(TypeError, match="record"):
                w.write(bad)
            with pytest.raises(TypeError, match="record"):
                w.write_many([b"ok", bad])
        w.write(bytearray(b"a"))
        w.write_many([memoryview(b"b"), b"c" * 20000])
    assert tfrecord_ref.read_records(str(p)) == [b"a", b"b", b"c" * 20000]


def test_example_builder_and_parse(tfrec):
    for bad in ([5], [[1, 2]], [None]):
        with pytest.raises(TypeError):
            tfrec.Example({"b": tfrec.BytesList(bad)})
    for bad in NOT_BYTES + ["text", not_contiguous()]:
        with pytest.raises(TypeError):
            tfrec.Example.parse(bad)
    assert tfrec.Example.parse(bytearray()) == tfrec.Example()
    with pytest.raises(TypeError):
        tfrec.Example({5: [1]})  # a key is str or bytes


def test_storage_write_bytes(tfrec, tmp_path):
    p = tmp_path / "obj"
    if not tfrec.parts().get("tfrec-storage"):  # a core-only build says why
        with pytest.raises(tfrec.MissingPartError, match="libtfrec-storage"):
            tfrec.storage.write_bytes(str(p), b"xyz")
        return
    for bad in NOT_BYTES + ["text", not_contiguous()]:
        with pytest.raises(TypeError, match="data"):
            tfrec.storage.write_bytes(str(p), bad)
        assert not p.exists()
    tfrec.storage.write_bytes(str(p), bytearray(b"xyz"))
    assert p.read_bytes() == b"xyz"


def test_bigtable_keys_names_and_options(tfrec):
    if not tfrec.parts().get("tfrec-bigtable"):  # a core-only build says why
        with pytest.raises(tfrec.MissingPartError, match="libtfrec-bigtable"):
            tfrec.bigtable.row_key(b"p", 1, 3)
        return
    bt = tfrec.bigtable
    for bad in (5, [65], 1.5):
        with pytest.raises(TypeError, match="prefix"):
            bt.row_key(bad, 1, 3)
        # all refused before any connection is made
        for kw in ("prefix", "start", "end", "column"):
            with pytest.raises(TypeError, match=kw):
                bt.Reader("p", "i", "t", **{kw: bad})
        with pytest.raises(TypeError, match=r"keys\[1\]"):
            bt.Reader("p", "i", "t", keys=[b"a", bad])
        with pytest.raises(TypeError, match=r"split_keys\[0\]"):
            bt.Reader("p", "i", "t", split_keys=[bad])
        with pytest.raises(TypeError, match=r"ranges\[0\]"):
            bt.Reader("p", "i", "t", ranges=[(b"a", bad)])
        with pytest.raises(TypeError, match=r"ranges\[0\]"):
            bt.Reader("p", "i", "t", ranges=[{"start": bad}])
        with pytest.raises(TypeError, match="column"):
            bt.Dataset("p", "i", "t", column=bad)
        with pytest.raises(TypeError, match="table"):
            bt.Writer("p", "i", bad)
        with pytest.raises(TypeError, match="qualifier"):
            bt.Row(b"k", []).value("f", bad)
    assert bt.row_key("p_", 7, 3) == b"p_007"
    assert bt.row_key(bytearray(b"q"), 7, 2) == b"q07"


def test_distributed_split_keys(tfrec):
    from tfrec import distributed  # importable without dask
    assert distributed._split_keys(["ké", bytearray(b"b"), memoryview(b"c")]) == [
        "ké".encode(), b"b", b"c"]
    for bad in (5, [1, 2], None):
        with pytest.raises(TypeError, match=r"split_keys\[1\]"):
            distributed._split_keys([b"a", bad])
