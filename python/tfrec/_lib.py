"""Find and load libtfrec.so and declare the C prototypes.

Search order (the first file that exists and loads wins):
  1. the TFREC_LIBRARY environment variable (a path to the .so),
  2. next to this package (a copy inside the package, or the library
     directory the package was installed beside by `make install`),
  3. the source tree's build directory: $TFREC_BUILD if set, else
     <repo>/build, found from this file's location (development checkouts),
  4. the system loader path (ldconfig, LD_LIBRARY_PATH).
"""

import ctypes
import ctypes.util
import os

from ctypes import POINTER, c_char_p, c_int, c_size_t, c_uint64, c_void_p

from ._handles import (ExampleBuilderHandle, ExampleHandle, ReaderHandle, RecordBatchHandle,
                       WriterHandle, declared)

_NAMES = ("libtfrec.so", "libtfrec.so.0")


class LibraryNotFoundError(ImportError):
    """libtfrec.so could not be found or loaded."""


def _candidates():
    """(description, path) pairs in search order."""
    env = os.environ.get("TFREC_LIBRARY")
    if env:
        yield "TFREC_LIBRARY", env
    here = os.path.dirname(os.path.abspath(__file__))
    # `make install` puts the package in LIBDIR/python3/dist-packages/tfrec.
    libdir = os.path.normpath(os.path.join(here, "..", "..", ".."))
    for d in (here, libdir):
        for n in _NAMES:
            yield "next to the package", os.path.join(d, n)
    builds = []
    if os.environ.get("TFREC_BUILD"):
        builds.append(os.environ["TFREC_BUILD"])
    builds.append(os.path.join(here, "..", "..", "build"))
    for d in builds:
        for n in _NAMES:
            yield "build directory", os.path.normpath(os.path.join(d, n))


def _load():
    tried = []
    for what, path in _candidates():
        if not os.path.exists(path):
            tried.append("%s: %s (absent)" % (what, path))
            if what == "TFREC_LIBRARY":
                break  # an explicit choice that fails must not be papered over
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append("%s: %s (%s)" % (what, path, e))
            if what == "TFREC_LIBRARY":
                break  # an explicit choice that fails must not be papered over
    else:
        found = ctypes.util.find_library("tfrec")
        for name in ([found] if found else []) + list(_NAMES):
            try:
                return ctypes.CDLL(name), name
            except OSError as e:
                tried.append("system loader: %s (%s)" % (name, e))
    raise LibraryNotFoundError(
        "libtfrec.so not found; build it with `make` or set TFREC_LIBRARY. Looked in:\n  "
        + "\n  ".join(tried))


lib, path = _load()

_u64p = POINTER(c_uint64)


def _proto(name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    fn = declared(fn)  # a handle of the wrong type raises TypeError
    setattr(lib, name, fn)
    return fn


def has(name):
    """True if the loaded library exports symbol name (optional modules)."""
    return hasattr(lib, name)


# error.h
_proto("tfrec_strerror", c_char_p, c_int)
_proto("tfrec_last_errmsg", c_char_p)
_proto("tfrec_version", c_char_p)
_proto("tfrec_free", None, c_void_p)

# record.h
_proto("tfrec_reader_open", c_int, POINTER(ReaderHandle), c_char_p, c_void_p)
_proto("tfrec_reader_next", c_int, ReaderHandle, POINTER(c_void_p), POINTER(c_size_t))
_proto("tfrec_reader_offset", c_uint64, ReaderHandle)
_proto("tfrec_reader_seek", c_int, ReaderHandle, c_uint64)
_proto("tfrec_reader_compression", c_int, ReaderHandle)
_proto("tfrec_reader_stats_get", None, ReaderHandle, c_void_p)
_proto("tfrec_reader_errmsg", c_char_p, ReaderHandle)
_proto("tfrec_reader_close", None, ReaderHandle)
_proto("tfrec_writer_open", c_int, POINTER(WriterHandle), c_char_p, c_void_p)
_proto("tfrec_writer_write", c_int, WriterHandle, c_char_p, c_size_t)
_proto("tfrec_writer_flush", c_int, WriterHandle)
_proto("tfrec_writer_close", c_int, WriterHandle)
_proto("tfrec_writer_abort", None, WriterHandle)
_proto("tfrec_writer_free", None, WriterHandle)
_proto("tfrec_writer_records", c_uint64, WriterHandle)
_proto("tfrec_writer_bytes_out", c_uint64, WriterHandle)
_proto("tfrec_writer_errmsg", c_char_p, WriterHandle)
_proto("tfrec_compression_from_name", c_int, c_char_p)
_proto("tfrec_compression_name", c_char_p, c_int)

# batch.h
_proto("tfrec_writer_write_batch", c_int, WriterHandle, c_char_p, c_void_p, c_size_t)
_proto("tfrec_record_batch_new", c_int, POINTER(RecordBatchHandle))
_proto("tfrec_record_batch_free", None, RecordBatchHandle)
_proto("tfrec_reader_read_batch", c_int, ReaderHandle, RecordBatchHandle, c_size_t, c_size_t)
_proto("tfrec_record_batch_count", c_size_t, RecordBatchHandle)
_proto("tfrec_record_batch_data", c_void_p, RecordBatchHandle)
_proto("tfrec_record_batch_ends", c_void_p, RecordBatchHandle)
_proto("tfrec_reader_skip", c_int, ReaderHandle, c_uint64, POINTER(c_uint64))
_proto("tfrec_example_to_batch", c_int, ExampleHandle, RecordBatchHandle)

# example.h
_proto("tfrec_example_builder_new", c_int, POINTER(ExampleBuilderHandle))
_proto("tfrec_example_builder_reset", None, ExampleBuilderHandle)
_proto("tfrec_example_builder_free", None, ExampleBuilderHandle)
_proto("tfrec_example_add_bytes", c_int, ExampleBuilderHandle, c_char_p, c_char_p, c_size_t)
_proto("tfrec_example_add_int64_list", c_int, ExampleBuilderHandle, c_char_p, c_void_p, c_size_t)
_proto("tfrec_example_add_float_list", c_int, ExampleBuilderHandle, c_char_p, c_void_p, c_size_t)
_proto("tfrec_example_add_empty", c_int, ExampleBuilderHandle, c_char_p, c_int)
_proto("tfrec_example_serialize_alloc", c_int, ExampleBuilderHandle, POINTER(c_void_p),
       POINTER(c_size_t))
_proto("tfrec_example_builder_errmsg", c_char_p, ExampleBuilderHandle)
_proto("tfrec_example_parse", c_int, POINTER(ExampleHandle), c_char_p, c_size_t)
_proto("tfrec_example_free", None, ExampleHandle)
_proto("tfrec_example_feature_count", c_size_t, ExampleHandle)
_proto("tfrec_example_feature_key", c_char_p, ExampleHandle, c_size_t)
_proto("tfrec_example_feature_type", c_int, ExampleHandle, c_char_p)
_proto("tfrec_example_value_count", c_size_t, ExampleHandle, c_char_p)
_proto("tfrec_example_get_bytes", c_int, ExampleHandle, c_char_p, c_size_t,
       POINTER(c_void_p), POINTER(c_size_t))
_proto("tfrec_example_get_int64_list", c_int, ExampleHandle, c_char_p,
       POINTER(c_void_p), POINTER(c_size_t))
_proto("tfrec_example_get_float_list", c_int, ExampleHandle, c_char_p,
       POINTER(c_void_p), POINTER(c_size_t))
