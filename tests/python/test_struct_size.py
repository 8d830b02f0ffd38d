"""The ctypes mirrors of libtfrec's growable structs carry struct_size (their
own ctypes size) as the library requires, and the library holds them to it."""
import ctypes
import importlib
import os

import pytest

from bindings_env import load_tfrec

MIRRORS = [("record", "_ReaderOptions"), ("record", "_ReaderStats"), ("record", "_WriterOptions"),
           ("bigtable", "_ClientOptions"), ("bigtable", "_WriterOptions"),
           ("bigtable", "_WriterStats"), ("bigtable", "_ReadOptions"), ("bigtable", "_Row"),
           ("bigtable", "_Cell"), ("bigtable", "_ReadStats"), ("bigtable", "_LoadOptions"),
           ("bigtable", "_LoadStats"), ("imagenet", "_Options"), ("imagenet", "_Counts"),
           ("dataset", "_DatasetOptions")]


@pytest.fixture(scope="module")
def tfrec(build_dir):
    return load_tfrec(build_dir)


# The optional parts' modules only exist in builds that have the part.
PART_OF = {"bigtable": "tfrec-bigtable", "imagenet": "tfrec-image"}


def built_parts():
    default = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build")
    with open(os.path.join(os.environ.get("TFREC_BUILD") or default, "parts")) as f:
        return set(f.read().split())


@pytest.mark.parametrize("module,name", [(m, n) for m, n in MIRRORS
                                         if PART_OF.get(m, "tfrec") in built_parts()])
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
