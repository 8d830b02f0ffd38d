"""The ctypes mirrors of libtfrec's growable structs carry struct_size (their
own ctypes size) as the library requires, and the library holds them to it."""
import ctypes
import importlib

import pytest

from bindings_env import load_tfrec

MIRRORS = [("record", "_ReaderOptions"), ("record", "_ReaderStats"), ("record", "_WriterOptions"),
           ("bigtable", "_ClientOptions"), ("bigtable", "_WriterOptions"),
           ("bigtable", "_WriterStats"), ("bigtable", "_ReadOptions"), ("bigtable", "_Row"),
           ("bigtable", "_Cell"), ("bigtable", "_LoadOptions"), ("bigtable", "_LoadStats"),
           ("imagenet", "_Options"), ("imagenet", "_Counts")]


@pytest.fixture(scope="module")
def tfrec(build_dir):
    return load_tfrec(build_dir)


@pytest.mark.parametrize("module,name", MIRRORS)
def test_mirror_starts_with_its_size(tfrec, module, name):
    cls = getattr(importlib.import_module("tfrec." + module), name)
    assert cls._fields_[0] == ("struct_size", ctypes.c_size_t)
    assert cls().struct_size == ctypes.sizeof(cls)


def test_library_rejects_a_mirror_without_size(tfrec, tmp_path):
    from tfrec import record
    from tfrec._lib import lib
    path = tmp_path / "one.tfrecord"
    with tfrec.TFRecordWriter(path) as w:
        w.write(b"x")
    opts = record._ReaderOptions()
    from tfrec._handles import ReaderHandle
    h = ReaderHandle()
    assert lib.tfrec_reader_open(ctypes.byref(h), bytes(path), ctypes.byref(opts)) == 0
    lib.tfrec_reader_free(h)
    opts.struct_size = 0
    assert lib.tfrec_reader_open(ctypes.byref(h), bytes(path), ctypes.byref(opts)) == -1
    assert b"TFREC_READER_OPTIONS_INIT" in lib.tfrec_last_errmsg()
