"""TFRecord files: TFRecordWriter, TFRecordReader, count(), verify().

Each call into libtfrec through ctypes costs about a microsecond, as much as
the C library needs for a whole 1 KiB record. Small records therefore move
in batches (include/tfrec/batch.h): the writer queues records and hands them
over in one call, the reader receives thousands per call as one buffer plus
end offsets. Large records go one call each, which avoids copying them.
"""

import ctypes
import os
import sys
import warnings
import weakref
from array import array
from collections import namedtuple
from ctypes import byref, c_size_t, c_uint64, c_void_p
from itertools import chain, islice, repeat
from operator import add

from . import _args
from . import _constants as C
from ._closing import Closing, Committing
from ._handles import ReaderHandle, RecordBatchHandle, WriterHandle
from ._lib import _Sized, lib
from ._stats import TypedDict
from .errors import error_for, open_error

_OK, _END = C.TFREC_OK, C.TFREC_END

# Records at least this big skip batching: copying them costs more than a call.
_LARGE = 16 * 1024
# Writer: records queued before one call hands them to C (at most 32 MiB,
# since queued records are smaller than _LARGE).
_WRITE_QUEUE_RECORDS = 2048
# Reader: records and payload bytes fetched per call.
_READ_BATCH_RECORDS = 4096
_READ_BATCH_BYTES = 256 << 10

_COMPRESSION = {None: C.TFREC_COMPRESSION_NONE, "": C.TFREC_COMPRESSION_NONE,
                "NONE": C.TFREC_COMPRESSION_NONE, "ZLIB": C.TFREC_COMPRESSION_ZLIB,
                "GZIP": C.TFREC_COMPRESSION_GZIP, "AUTO": C.TFREC_COMPRESSION_AUTO}
_COMPRESSION_NAMES = {C.TFREC_COMPRESSION_AUTO: None, C.TFREC_COMPRESSION_NONE: None,
                      C.TFREC_COMPRESSION_ZLIB: "ZLIB", C.TFREC_COMPRESSION_GZIP: "GZIP"}

_string_at = ctypes.string_at


class _BatchBuffer:
    """Owns one tfrec_record_batch. The ctypes arrays that records are sliced
    from (and zero-copy views of them) keep it alive, so its memory is freed
    or reused only once nothing can reach it any more."""

    __slots__ = ("h",)

    def __init__(self):
        h = RecordBatchHandle()
        rc = lib.tfrec_record_batch_new(byref(h))
        if rc < 0:
            raise error_for(rc)
        self.h = h

    def __del__(self):
        try:
            lib.tfrec_record_batch_free(self.h)
        except Exception:  # interpreter shutdown may have torn ctypes down
            pass


def _one_call_each(nxt, h):
    """Items of a handle one library call each (nxt(h, &data, &len), as
    tfrec_reader_next), copied once into bytes: the path for large items.
    Returns the code that ended them (TFREC_END or a failure)."""
    p, n = c_void_p(), c_size_t()
    pr, nr = byref(p), byref(n)
    while True:
        rc = nxt(h, pr, nr)
        if rc != _OK:
            return rc
        yield _string_at(p.value, n.value) if n.value else b""


def _batch_records(owner, zero_copy):
    """(iterator over the batch's records, weak reference to their buffer or
    None, whether the records are large on average, the offset arrays the
    iterator walks: emptying them ends it early).

    The records are slices of a ctypes array laid over the library's batch
    buffer, produced by map() in C: no Python code and no extra copy per
    record; a slice of a c_char array is bytes, of a memoryview a view."""
    h = owner.h
    n = lib.tfrec_record_batch_count(h)
    ends = array("Q")
    ends.frombytes(_string_at(lib.tfrec_record_batch_ends(h), 8 * n))
    total = ends[-1]
    starts = ends[:-1]
    starts.insert(0, 0)
    ref = None
    if total == 0:  # every slice of an empty bytes (or view) is empty
        getter = (memoryview(b"") if zero_copy else b"").__getitem__
    else:
        ptr = lib.tfrec_record_batch_data(h)
        if zero_copy:
            buf = (ctypes.c_ubyte * total).from_address(ptr)
            getter = memoryview(buf).cast("B").toreadonly().__getitem__
        else:
            buf = (ctypes.c_char * total).from_address(ptr)
            getter = buf.__getitem__
        buf.owner = owner
        ref = weakref.ref(buf)
    return (map(getter, map(slice, starts, ends)), ref, total >= _LARGE * n, (starts, ends))


class _ReaderOptions(_Sized):
    _c_type_ = "tfrec_reader_options"
    _fields_ = [("struct_size", c_size_t), ("compression", ctypes.c_int),
                ("buffer_size", c_size_t), ("max_record_size", c_uint64),
                ("skip_corrupt", ctypes.c_int), ("use_mmap", ctypes.c_int),
                ("fs", ctypes.c_void_p)]


class ReaderStats(TypedDict):
    """TFRecordReader.stats(): records and payload bytes read so far, and
    the corrupt regions (and their bytes) skipped with skip_corrupt."""
    records: int
    bytes: int
    skipped_regions: int
    skipped_bytes: int


class _ReaderStats(_Sized):
    _c_type_ = "tfrec_reader_stats"
    _fields_ = [("struct_size", c_size_t), ("records", c_uint64), ("bytes", c_uint64),
                ("skipped_regions", c_uint64), ("skipped_bytes", c_uint64)]


class _WriterOptions(_Sized):
    _c_type_ = "tfrec_writer_options"
    _fields_ = [("struct_size", c_size_t), ("compression", ctypes.c_int),
                ("level", ctypes.c_int), ("buffer_size", c_size_t),
                ("write_index", ctypes.c_int), ("index_sink", ctypes.c_void_p),
                ("fs", ctypes.c_void_p)]


def _compression_code(compression, allow_auto):
    key = compression.upper() if isinstance(compression, str) else compression
    code = _COMPRESSION.get(key)
    if code is None or (code == C.TFREC_COMPRESSION_AUTO and not allow_auto):
        raise ValueError("compression must be None, 'ZLIB', 'GZIP'%s, not %r"
                         % (" or 'auto'" if allow_auto else "", compression))
    return code


_MMAP = {None: 0, True: 1, False: -1}


def _open_reader(path, compression, skip_corrupt=False, max_record_size=None, use_mmap=None):
    if use_mmap not in _MMAP:
        raise ValueError("use_mmap must be None, True or False, not %r" % (use_mmap,))
    opts = _ReaderOptions(compression=_compression_code(compression, True),
                          max_record_size=_args.size(max_record_size, "max_record_size") or 0,
                          skip_corrupt=1 if skip_corrupt else 0, use_mmap=_MMAP[use_mmap])
    h = ReaderHandle()
    rc = lib.tfrec_reader_open(byref(h), _args.path(path), byref(opts))
    if rc < 0:
        raise open_error(rc)
    return h


def _closed(obj):
    """The error for using a closed reader or writer."""
    return ValueError("%s is closed" % type(obj).__name__)


class _ClosedIterator:
    """What a closed TFRecordReader iterates with: every step raises.
    (It keeps no reference to the reader, which would make a cycle.)"""

    def __iter__(self):
        return self

    def __next__(self):
        raise ValueError("TFRecordReader is closed")


_CLOSED_ITERATOR = _ClosedIterator()


class _Batches:
    """The iterator a TFRecordReader's records are chained from: each step
    reads one batch and returns an iterator over its records (or, once
    records turn out large, one that reads a record per call).

    It owns the C handle, freed when it goes away: the iterators handed out
    keep it alive, so `for r in TFRecordReader(p)` reads on after the
    reader object itself is gone. close() ends the records already fetched
    (their offset arrays are emptied) and the next step hands the chain an
    iterator that raises ValueError, so an iterator handed out before
    close() raises instead of yielding what was fetched."""

    __slots__ = ("h", "zero_copy", "buffers", "offsets", "large", "done")

    def __init__(self, h, zero_copy):
        self.h = h
        self.zero_copy = zero_copy
        self.buffers = [[_BatchBuffer(), None]]  # [buffer, weakref to its records' array]
        self.offsets = None
        self.large = None
        self.done = False

    def __iter__(self):
        return self

    def _fail(self, rc):
        return error_for(rc, lib.tfrec_reader_errmsg(self.h))

    def _free_buffer(self):
        """A batch buffer no record refers to any more. Zero-copy views keep
        theirs alive (a loop variable holds the last record of a batch while
        the next is fetched), so a few buffers take turns."""
        for slot in self.buffers:
            if slot[1] is None or slot[1]() is None:
                return slot
        slot = [_BatchBuffer(), None]
        if len(self.buffers) < 4:
            self.buffers.append(slot)
        return slot

    def __next__(self):
        if self.h is None:
            # Raising here would end the chain for good (chain drops a source
            # that raises); an iterator that raises at every step keeps it
            # raising ValueError.
            return _CLOSED_ITERATOR
        if self.done:
            raise StopIteration
        if self.large is not None:  # the one-per-call records are exhausted
            self.done = True
            raise StopIteration
        slot = self._free_buffer()
        rc = lib.tfrec_reader_read_batch(self.h, slot[0].h, _READ_BATCH_RECORDS,
                                         _READ_BATCH_BYTES)
        if rc != _OK:
            self.done = True
            if rc == _END:
                raise StopIteration
            raise self._fail(rc)
        records, slot[1], large, self.offsets = _batch_records(slot[0], self.zero_copy)
        if large and not self.zero_copy:
            # What is left of the file comes one record per call (chained
            # after this batch, whose records come first). Zero-copy views
            # stay in batch buffers, whatever their size: a view of the
            # library's read buffer could not be kept valid (slices and
            # re-exports of a view outlive its release).
            self.large = self._large_records()
            return chain(records, self.large)
        return records

    def _large_records(self):
        """One call per record, no intermediate copy (big records, as bytes)."""
        rc = yield from _one_call_each(lib.tfrec_reader_next, self.h)
        if rc != _END:
            raise self._fail(rc)

    def close(self):
        """Stop every iterator handed out; returns the handle to free."""
        h, self.h = self.h, None
        if self.large is not None:
            self.large.close()
        if self.offsets is not None:
            for a in self.offsets:
                del a[:]
        self.buffers = None  # batch memory lives on while records use it
        return h

    def __del__(self):
        if getattr(self, "h", None) is not None:  # None too if __init__ failed
            try:
                lib.tfrec_reader_free(self.close())
            except Exception:  # interpreter shutdown may have torn ctypes down
                pass


class TFRecordReader(Closing):
    """Iterate over the records of a TFRecord file.

    compression: "auto" (detect from the first bytes), None, "ZLIB" or "GZIP".
    zero_copy: yield read-only memoryviews instead of bytes, saving a copy per
    record. Views are of the library's batch buffers, each kept alive, and
    never refilled, while any view of it (or a slice of one, memoryview(v),
    numpy.frombuffer(v) ...) exists: a view stays valid as long as it is
    held, also after close().
    skip_corrupt: skip damaged regions instead of raising (see stats()).
    max_record_size: larger length fields raise RecordTooLargeError (None:
    the library's 1 GiB).
    use_mmap: None reads a local file with read() unless TFREC_MMAP=1 is set
    in the environment; True maps it (local disk file systems; else read());
    False always uses read() (see docs/format.md for when a mapping pays).

    Errors raise tfrec.Error subclasses (CorruptRecordError,
    TruncatedRecordError, ...) naming the file and byte offset; records before
    the damage are yielded first. Once close() is called, the reader and
    every iterator it handed out raise ValueError. A reader is not
    thread-safe.
    """

    _h = None  # until __init__ succeeds

    def __init__(self, path, compression="auto", zero_copy=False, skip_corrupt=False,
                 max_record_size=None, use_mmap=None):
        self.path = os.fspath(path)
        self.zero_copy = zero_copy
        self._h = _open_reader(path, compression, skip_corrupt, max_record_size, use_mmap)
        try:
            self._batches = _Batches(self._h, zero_copy)
        except BaseException:
            lib.tfrec_reader_free(self._h)
            self._h = None
            raise
        self._it = chain.from_iterable(self._batches)

    # -- iteration
    # Records come out of a chain of per-batch iterators built from C-level
    # pieces (map over slices of one buffer), so no Python bytecode runs per
    # small record; that is where the speed over pure Python comes from.
    def __iter__(self):
        self._check_open()
        return self._it

    def __next__(self):
        return next(self._it)  # after close(), _it raises ValueError

    # -- information
    @property
    def compression(self):
        """Compression in effect: None, "ZLIB" or "GZIP" (detected with "auto")."""
        self._check_open()
        return _COMPRESSION_NAMES[lib.tfrec_reader_compression(self._h)]

    def stats(self):
        """Records and payload bytes read from the file so far (reading runs
        ahead of iteration by up to one batch), and skipped corrupt regions."""
        self._check_open()
        s = _ReaderStats()
        lib.tfrec_reader_stats_get(self._h, byref(s))
        return {"records": s.records, "bytes": s.bytes,
                "skipped_regions": s.skipped_regions, "skipped_bytes": s.skipped_bytes}

    def _check_open(self):
        if self._h is None:
            raise _closed(self)

    # -- lifetime
    def close(self):
        if self._h is not None:
            lib.tfrec_reader_free(self._batches.close())
            self._h = None
            self._it = _CLOSED_ITERATOR

    # No __del__: the handle belongs to _Batches, which outlives the reader
    # while an iterator over it is in use.


# array typecode of size_t and of a pointer (both 8 bytes on 64-bit Linux).
_SIZE_T = next(t for t in "LQI" if array(t).itemsize == ctypes.sizeof(c_size_t))
_POINTER_T = next(t for t in "LQI" if array(t).itemsize == ctypes.sizeof(c_void_p))


def _addresses_ctypes(records):
    """(address of an array of the records' data addresses, what keeps the
    array and the records alive)."""
    ptrs = (ctypes.c_char_p * len(records))(*records)
    return ctypes.addressof(ptrs), ptrs


def _bytes_data_offset():
    """Where a bytes object's data starts from its id() in CPython, or None
    where that does not hold (another implementation, another layout).

    In CPython id() is the object's address and a bytes object keeps its
    data inline at a fixed offset (PyBytesObject.ob_sval). Computing the
    addresses of a whole queue with map() in C costs a tenth of building a
    ctypes c_char_p array (which records each element in a dict): it is what
    puts the writer's per-record cost well under pure Python's. The offset
    is checked on live objects before it is trusted."""
    if sys.implementation.name != "cpython":
        return None
    off = bytes.__basicsize__ - 1  # the struct up to ob_sval[1]
    for probe in (b"tfrec:probe-of-the-bytes-layout", bytes(range(256)) * 3):
        if _string_at(id(probe) + off, len(probe)) != probe:
            return None
    return off


_BYTES_OFFSET = _bytes_data_offset()


def _addresses_cpython(records):
    ptrs = array(_POINTER_T, map(add, map(id, records), repeat(_BYTES_OFFSET)))
    return ptrs.buffer_info()[0], (ptrs, records)


# The writer queues only bytes objects, so either way gives their data.
_addresses = _addresses_ctypes if _BYTES_OFFSET is None else _addresses_cpython


def _as_bytes(record):
    return _args.data(record, "a record")


class _Closed(list):
    """The queue of a closed writer: always empty, appending raises."""

    def append(self, _):
        raise ValueError("TFRecordWriter is closed")


_CLOSED = _Closed()


class TFRecordWriter(Committing):
    """Write a TFRecord file that TensorFlow reads.

    compression: None, "ZLIB" or "GZIP"; level: 1..9 (None: zlib's default 6).
    write_index=True also writes path + ".idx" (uncompressed files only; see
    tfrec.Dataset), committed right after the file.
    The file appears under path only when close() succeeds (it is written to
    a temporary name first). Leaving a `with` block by an exception, or
    dropping an unclosed writer, discards the output.

    Small records are queued and handed to the library in batches, so a
    failure to write (disk full, ...) may surface from a later write(),
    flush() or close(). A writer is not thread-safe.
    """

    _h = None  # until __init__ succeeds: __del__ needs it

    def __init__(self, path, compression=None, level=None, buffer_size=None,
                 write_index=False):
        self.path = os.fspath(path)
        if level is not None and not 1 <= level <= 9:
            raise ValueError("level must be 1..9 or None, not %r" % (level,))
        opts = _WriterOptions(compression=_compression_code(compression, False),
                              level=level or 0,
                              buffer_size=_args.size(buffer_size, "buffer_size") or 0,
                              write_index=1 if write_index else 0)
        h = WriterHandle()
        rc = lib.tfrec_writer_open(byref(h), _args.path(path), byref(opts))
        if rc < 0:
            raise open_error(rc)
        self._h = h
        self._queue = []

    def _fail(self, rc):
        return error_for(rc, lib.tfrec_writer_errmsg(self._h))

    def write(self, record):
        """Append one record (bytes or any object with the buffer protocol)."""
        # The common case costs a type check, an append and a length test.
        if type(record) is bytes and len(record) < _LARGE:
            q = self._queue
            q.append(record)  # raises ValueError once closed (see _Closed)
            if len(q) >= _WRITE_QUEUE_RECORDS:
                self._drain()
            return
        self._write_other(record)

    def _write_other(self, record):
        record = _as_bytes(record)
        if len(record) < _LARGE:
            return self.write(record)
        if self._queue:
            self._drain()
        rc = lib.tfrec_writer_write(self._handle(), record, len(record))
        if rc < 0:
            raise self._fail(rc)

    def write_many(self, records):
        """Append every record of an iterable: the same as write() in a loop,
        with the loop in C where the records are bytes. A closed writer
        raises ValueError, also for an empty iterable."""
        self._handle()
        write = self.write
        it = iter(records)
        while True:
            chunk = list(islice(it, _WRITE_QUEUE_RECORDS))
            if not chunk:
                return
            if set(map(type, chunk)) == {bytes} and max(map(len, chunk)) < _LARGE:
                self._handle()
                self._queue.extend(chunk)
                if len(self._queue) >= _WRITE_QUEUE_RECORDS:
                    self._drain()
            else:
                for r in list(map(_as_bytes, chunk)):  # TypeError before writing any
                    write(r)

    def _handle(self):
        if self._h is None:
            raise _closed(self)
        return self._h

    def _drain(self):
        """Hand every queued record to C in one call: their addresses and
        lengths, so the library frames them and copies them once, straight
        into its output buffer."""
        h = self._handle()
        queue = self._queue
        self._queue = []
        ptrs, keep = _addresses(queue)
        lens = array(_SIZE_T, map(len, queue))
        rc = lib.tfrec_writer_write_vec(h, ptrs, lens.buffer_info()[0], len(queue))
        del keep, queue  # the records stay alive until C has copied them
        if rc < 0:
            raise self._fail(rc)

    def flush(self):
        """Push everything written so far to the file (a sync flush when compressed)."""
        if self._queue:
            self._drain()
        rc = lib.tfrec_writer_flush(self._handle())
        if rc < 0:
            raise self._fail(rc)

    @property
    def records(self):
        """Records written so far."""
        n = len(self._queue)
        return n + (lib.tfrec_writer_records(self._h) if self._h is not None else self._final[0])

    @property
    def bytes_out(self):
        """Bytes handed to the file so far (compressed size when compressed)."""
        return lib.tfrec_writer_bytes_out(self._h) if self._h is not None else self._final[1]

    def close(self):
        """Finish the file and move it into place. Raises on failure, in which
        case no file appears under path."""
        if self._h is None:
            return
        try:
            if self._queue:
                self._drain()
            rc = lib.tfrec_writer_close(self._h)
            if rc < 0:
                raise self._fail(rc)
        finally:
            self._release()

    def abort(self):
        """Discard the output; nothing appears under path."""
        if self._h is not None:
            self._queue = _CLOSED
            lib.tfrec_writer_abort(self._h)
            self._release((0, 0))

    _discard = abort  # a `with` block that raised

    def _release(self, final=None):
        """Free the handle, keeping the counts that records and bytes_out
        report from now on (also after a failed close)."""
        h, self._h = self._h, None
        self._queue = _CLOSED
        self._final = final or (lib.tfrec_writer_records(h), lib.tfrec_writer_bytes_out(h))
        lib.tfrec_writer_free(h)

    def __del__(self):
        if getattr(self, "_h", None) is not None:
            warnings.warn("TFRecordWriter for %r dropped without close(): output discarded"
                          % self.path, ResourceWarning, stacklevel=2)
            self.abort()


def count(path, compression="auto"):
    """Number of records in a file, checking every CRC on the way (raises
    the tfrec.Error subclass for the first damage found)."""
    h = _open_reader(path, compression)
    try:
        n = c_uint64()
        rc = lib.tfrec_reader_skip(h, 0, byref(n))
        if rc != _END:
            raise error_for(rc, lib.tfrec_reader_errmsg(h))
        return n.value
    finally:
        lib.tfrec_reader_free(h)


VerifyResult = namedtuple("VerifyResult", "ok records bytes compression error")
VerifyResult.__doc__ = """Outcome of verify(): ok is True if the whole file is
sound; records/bytes count the good records before any damage; error is the
tfrec.Error describing the damage (file and byte offset) or None."""


def verify(path, compression="auto"):
    """Read a whole file and report whether it is sound, without raising for
    damage (a missing file still raises)."""
    h = _open_reader(path, compression)
    try:
        n = c_uint64()
        rc = lib.tfrec_reader_skip(h, 0, byref(n))
        s = _ReaderStats()
        lib.tfrec_reader_stats_get(h, byref(s))
        err = None if rc == _END else error_for(rc, lib.tfrec_reader_errmsg(h))
        comp = _COMPRESSION_NAMES[lib.tfrec_reader_compression(h)]
        return VerifyResult(err is None, n.value, s.bytes, comp, err)
    finally:
        lib.tfrec_reader_free(h)


__all__ = ["TFRecordReader", "TFRecordWriter", "count", "verify", "VerifyResult", "ReaderStats"]
