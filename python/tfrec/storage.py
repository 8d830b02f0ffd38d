"""Cloud Storage (gs://) through libtfrec-storage (include/tfrec/storage.h).

With the part installed, every path the package takes may be
gs://BUCKET/OBJECT: TFRecordReader, TFRecordWriter (the object appears only
when the writer closes successfully), count(), verify(), tfrec.glob(),
convert_images(output_dir=...) and bigtable's write_tfrecords(pattern).
Credentials come from the environment, as Google's clients look for them:
STORAGE_EMULATOR_HOST (an emulator, no credentials),
GOOGLE_APPLICATION_CREDENTIALS, gcloud's application-default credentials,
then the GCE metadata server (docs/storage.md).

    import tfrec
    names = tfrec.glob("gs://bucket/train-*")          # sorted by name
    for record in tfrec.TFRecordReader(names[0]):
        ...
    tfrec.storage.stat("gs://bucket/train-00000")      # ObjectInfo(name, size, ...)
"""

import ctypes
from collections import namedtuple
from ctypes import CFUNCTYPE, POINTER, byref, c_char_p, c_int, c_int64, c_size_t, c_uint, c_uint32, \
    c_uint64, c_void_p

from . import _args
from ._handles import ReaderHandle, StorageHandle, StorageListHandle, WriterHandle
from ._lib import _Sized, _proto, lib
from .errors import error_for, open_error


class _Options(_Sized):
    _c_type_ = "tfrec_storage_options"
    _fields_ = [("struct_size", c_size_t), ("endpoint", c_char_p), ("credentials_file", c_char_p),
                ("user_project", c_char_p), ("anonymous", c_int),
                ("retry_deadline_ms", c_uint32), ("read_ahead_bytes", c_size_t),
                ("parallel_reads", c_uint), ("upload_chunk_bytes", c_size_t),
                ("no_checksum", c_int), ("ca_bundle_file", c_char_p)]


class _Io(_Sized):
    """include/tfrec/io.h: a byte source or sink (function pointers)."""
    _c_type_ = "tfrec_io"
    _fields_ = [("struct_size", c_size_t), ("ctx", c_void_p),
                ("read", CFUNCTYPE(ctypes.c_ssize_t, c_void_p, c_void_p, c_size_t)),
                ("write", CFUNCTYPE(c_int, c_void_p, c_void_p, c_size_t)),
                ("seek", CFUNCTYPE(c_int, c_void_p, c_uint64)),
                ("size", CFUNCTYPE(c_int64, c_void_p)),
                ("close", CFUNCTYPE(c_int, c_void_p, c_int)),
                ("errmsg", CFUNCTYPE(c_char_p, c_void_p))]


class _Object(_Sized):
    _c_type_ = "tfrec_storage_object"
    _fields_ = [("struct_size", c_size_t), ("name", c_char_p), ("size", c_uint64),
                ("generation", c_int64), ("has_crc32c", c_int), ("crc32c", c_uint32)]


_proto("tfrec_storage_is_remote", c_int, c_char_p)
_proto("tfrec_storage_reader_open", c_int, StorageHandle, POINTER(ReaderHandle), c_char_p,
       c_void_p)
_proto("tfrec_storage_writer_open", c_int, StorageHandle, POINTER(WriterHandle), c_char_p,
       c_void_p)
_proto("tfrec_storage_open_source", c_int, StorageHandle, POINTER(_Io), c_char_p)
_proto("tfrec_storage_open_sink", c_int, StorageHandle, POINTER(_Io), c_char_p)
_proto("tfrec_storage_open_source_range", c_int, StorageHandle, POINTER(_Io), c_char_p, c_uint64,
       c_uint64)
_proto("tfrec_storage_stat", c_int, StorageHandle, c_char_p, POINTER(_Object))
_proto("tfrec_storage_remove", c_int, StorageHandle, c_char_p)
_proto("tfrec_storage_glob", c_int, StorageHandle, c_char_p, POINTER(StorageListHandle))
_proto("tfrec_storage_glob_each", c_int, StorageHandle, c_char_p, c_void_p, c_void_p)
_proto("tfrec_storage_list_count", c_size_t, StorageListHandle)
# const tfrec_storage_object *: a plain pointer, cast below
_proto("tfrec_storage_list_get", c_void_p, StorageListHandle, c_size_t)
_proto("tfrec_storage_list_free", None, StorageListHandle)

# The process-wide default client (NULL: tfrec_storage_default()).
_DEFAULT = StorageHandle()

ObjectInfo = namedtuple("ObjectInfo", "name size generation crc32c")
ObjectInfo.__doc__ = """What stat() and glob_info() tell about an object or file: its
name, size in bytes, generation (0 for local files) and CRC32C (None when
unknown: local files)."""


def is_remote(name):
    """True for a gs:// name (any case of the scheme)."""
    return lib.tfrec_storage_is_remote(_args.path(name, "name")) != 0


def _info(o):
    return ObjectInfo(o.name.decode("utf-8", "surrogateescape"), o.size, o.generation,
                      o.crc32c if o.has_crc32c else None)


def open_reader(path, opts):
    """A reader handle for a name (local or gs://); opts a _ReaderOptions."""
    h = ReaderHandle()
    rc = lib.tfrec_storage_reader_open(_DEFAULT, byref(h), _args.path(path), byref(opts))
    if rc < 0:
        raise open_error(rc)
    return h


def open_writer(path, opts):
    """A writer handle for a name (local or gs://); opts a _WriterOptions."""
    h = WriterHandle()
    rc = lib.tfrec_storage_writer_open(_DEFAULT, byref(h), _args.path(path), byref(opts))
    if rc < 0:
        raise open_error(rc)
    return h


def write_bytes(name, data):
    """Write bytes to a file or object; a gs:// object appears only when
    all of it was uploaded (on failure nothing is left)."""
    data = _args.data(data, "data")  # before anything is created
    io = _Io()
    rc = lib.tfrec_storage_open_sink(_DEFAULT, byref(io), _args.path(name, "name"))
    if rc < 0:
        raise open_error(rc)
    rc = io.write(io.ctx, data, len(data))
    crc = io.close(io.ctx, 1 if rc == 0 else 0)
    if rc < 0 or crc < 0:
        raise error_for(rc if rc < 0 else crc)


def read_bytes(name):
    """The whole content of a file or object (a gs:// one checked against
    its CRC32C)."""
    io = _Io()
    rc = lib.tfrec_storage_open_source(_DEFAULT, byref(io), _args.path(name, "name"))
    if rc < 0:
        raise open_error(rc)
    chunks, buf = [], ctypes.create_string_buffer(1 << 20)
    try:
        while True:
            n = io.read(io.ctx, buf, len(buf))
            if n < 0:
                raise error_for(n, io.errmsg(io.ctx) if io.errmsg else None)
            if n == 0:
                return b"".join(chunks)
            chunks.append(buf.raw[:n])
    finally:
        io.close(io.ctx, 0)


def stat(name):
    """ObjectInfo of one object or file; NoSuchFileError when it is missing."""
    o = _Object()
    b = _args.path(name, "name")  # o.name points into it
    rc = lib.tfrec_storage_stat(_DEFAULT, b, byref(o))
    if rc < 0:
        raise open_error(rc)
    return _info(o)


def remove(name):
    """Delete an object or file (NoSuchFileError when it is missing)."""
    rc = lib.tfrec_storage_remove(_DEFAULT, _args.path(name, "name"))
    if rc < 0:
        raise open_error(rc)


def glob_info(pattern):
    """ObjectInfo of every name the pattern matches, sorted bytewise (* ? and
    [...] as glob(3): "*" does not cross "/"). No match: NoSuchFileError."""
    h = StorageListHandle()
    rc = lib.tfrec_storage_glob(_DEFAULT, _args.path(pattern, "pattern"), byref(h))
    if rc < 0:
        raise open_error(rc)
    try:
        return [_info(ctypes.cast(lib.tfrec_storage_list_get(h, i), POINTER(_Object)).contents)
                for i in range(lib.tfrec_storage_list_count(h))]
    finally:
        lib.tfrec_storage_list_free(h)


def glob(pattern):
    """The names a pattern matches, sorted bytewise; [] when none do."""
    try:
        return [i.name for i in glob_info(pattern)]
    except FileNotFoundError:
        return []


def c_function(name):
    """The address of a tfrec_storage_ function, for the library's open
    callbacks (tfrec_bt_load_options.open_source, tfrec_imagenet_options.
    open_sink): with a NULL context they use the default client."""
    fn = getattr(lib, name)
    return ctypes.cast(getattr(fn, "__wrapped__", fn), c_void_p).value


__all__ = ["ObjectInfo", "is_remote", "stat", "remove", "glob", "glob_info", "read_bytes",
           "write_bytes"]
