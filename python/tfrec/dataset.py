"""Indexed datasets over many TFRecord files (include/tfrec/dataset.h).

    ds = tfrec.Dataset(files, shuffle=True, seed=1, shard=(rank, world))
    for epoch in range(10):
        ds.set_epoch(epoch)
        for record in ds:          # bytes (parse=True: Example dicts)
            ...

Every file needs an index: a fresh FILE.idx (tfrec.index_file(), `tfrec
index`, or TFRecordWriter(write_index=True)) or, when there is none, the
file is read once at open to build it in memory. Reader threads read ahead
within prefetch_bytes; the order of an epoch depends only on (files, seed,
epoch, shard), never on num_parallel_reads.
"""

import ctypes
import os
from ctypes import POINTER, byref, c_char_p, c_int, c_size_t, c_uint32, c_uint64, c_void_p

from . import _args
from . import _constants as C
from ._closing import Closing
from ._handles import DatasetHandle, IndexHandle, RandomReaderHandle
from ._lib import _Sized, _proto, lib
from .errors import check, error_for, open_error

_proto("tfrec_index_file", c_int, c_char_p, POINTER(c_uint64))
_proto("tfrec_reader_count", c_int, c_char_p, c_void_p, POINTER(c_uint64), POINTER(c_int))
_proto("tfrec_index_load_fresh", c_int, POINTER(IndexHandle), c_char_p)
_proto("tfrec_index_records", c_uint64, IndexHandle)
_proto("tfrec_index_entry", c_int, IndexHandle, c_uint64, POINTER(c_uint64), POINTER(c_uint64))
_proto("tfrec_index_free", None, IndexHandle)
_proto("tfrec_random_reader_open", c_int, POINTER(RandomReaderHandle), c_char_p)
_proto("tfrec_random_reader_records", c_uint64, RandomReaderHandle)
_proto("tfrec_random_reader_read", c_int, RandomReaderHandle, c_uint64, POINTER(c_void_p),
       POINTER(c_size_t))
_proto("tfrec_random_reader_errmsg", c_char_p, RandomReaderHandle)
_proto("tfrec_random_reader_free", None, RandomReaderHandle)
_proto("tfrec_dataset_open", c_int, POINTER(DatasetHandle), POINTER(c_char_p), c_size_t,
       c_void_p)
_proto("tfrec_dataset_total_records", c_uint64, DatasetHandle)
_proto("tfrec_dataset_shard_records", c_uint64, DatasetHandle)
_proto("tfrec_dataset_start_epoch", c_int, DatasetHandle, c_uint64)
_proto("tfrec_dataset_next", c_int, DatasetHandle, POINTER(c_void_p), POINTER(c_size_t))
_proto("tfrec_dataset_errmsg", c_char_p, DatasetHandle)
_proto("tfrec_dataset_free", None, DatasetHandle)

_POLICY = {"auto": 0, "require": 1, "scan": 2}


class _DatasetOptions(_Sized):
    _c_type_ = "tfrec_dataset_options"
    _fields_ = [("struct_size", c_size_t), ("shuffle", c_int), ("seed", c_uint64),
                ("shard_index", c_uint32), ("num_shards", c_uint32),
                ("num_threads", c_uint32), ("prefetch_bytes", c_uint64),
                ("block_records", c_uint32), ("index_policy", c_int),
                ("max_record_size", c_uint64), ("open_source", c_void_p),
                ("open_ctx", c_void_p), ("use_mmap", c_int), ("fs", c_void_p),
                ("shuffle_block", c_uint32), ("shuffle_buffer", c_uint32)]


def index_file(path):
    """Write path + ".idx" (CRCs checked on the way); returns the record count."""
    n = c_uint64()
    rc = lib.tfrec_index_file(_args.path(path), byref(n))
    if rc < 0:
        raise open_error(rc)
    return n.value


def count_records(path):
    """(records, used_index): from a fresh path.idx without reading the
    file, else by reading it with its CRCs checked."""
    n, used = c_uint64(), c_int()
    rc = lib.tfrec_reader_count(_args.path(path), None, byref(n), byref(used))
    if rc < 0:
        raise open_error(rc)
    return n.value, bool(used.value)


class RandomAccessReader(Closing):
    """Record k of one uncompressed file through its index: reader[k]."""

    _h = None  # until __init__ succeeds: __del__ and close() need it

    def __init__(self, path):
        self.path = os.fspath(path)
        h = RandomReaderHandle()
        rc = lib.tfrec_random_reader_open(byref(h), _args.path(path))
        if rc < 0:
            raise open_error(rc)
        self._h = h

    def __len__(self):
        return lib.tfrec_random_reader_records(self._live())

    def __getitem__(self, k):
        h = self._live()
        n = lib.tfrec_random_reader_records(h)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError("record %d of %d" % (k, n))
        data, size = c_void_p(), c_size_t()
        rc = lib.tfrec_random_reader_read(h, k, byref(data), byref(size))
        if rc < 0:
            raise error_for(rc, lib.tfrec_random_reader_errmsg(h))
        return ctypes.string_at(data.value, size.value) if size.value else b""

    def _live(self):
        if self._h is None:
            raise ValueError("RandomAccessReader is closed")
        return self._h

    def close(self):
        if self._h is not None:
            lib.tfrec_random_reader_free(self._h)
            self._h = None

    def __del__(self):
        self.close()


class Dataset(Closing):
    """Records of many uncompressed TFRecord files, for training loops.

    shuffle: a global shuffle (a permutation of every (file, record) pair,
    new each epoch, the same for every worker with the same seed);
    shard=(i, n): worker i of n takes its contiguous part of each epoch's
    order (parts differ by at most one record, disjoint, covering all);
    num_parallel_reads: reader threads; prefetch_bytes: read-ahead budget;
    block_records: records per read unit, and the interleave block of each
    file when not shuffled; index: "auto" (a fresh FILE.idx or a scan),
    "require" (no scan) or "scan" (ignore FILE.idx); use_mmap: True maps
    local files, False reads them with pread(), None maps files of small records
    and reads others with pread() unless TFREC_MMAP says otherwise;
    shuffle_block=N (N > 1, with shuffle): a block shuffle of N consecutive
    records per block, then a shuffle buffer of shuffle_buffer records
    (0: 16 N), faster from the page cache than the global shuffle;
    parse=True yields Example dicts ({key: [values]}) instead of bytes.

    Iterating yields one epoch, the one set_epoch() chose (0 at first,
    then one more after each full pass).
    After close(), iterating (also a generator
    obtained before) raises ValueError.
    """

    _h = None  # until __init__ succeeds: __del__ and close() need it

    def __init__(self, files, shuffle=False, seed=0, shard=(0, 1), num_parallel_reads=2,
                 parse=False, prefetch_bytes=64 << 20, block_records=64, index="auto",
                 max_record_size=None, use_mmap=None, shuffle_block=0, shuffle_buffer=0):
        if isinstance(files, (str, bytes, os.PathLike)):
            files = [files]
        self.files = [os.fspath(f) for f in files]
        try:
            i, n = shard
        except (TypeError, ValueError):
            raise ValueError("shard must be (index, count), not %r" % (shard,))
        if not (isinstance(i, int) and isinstance(n, int) and n >= 1 and 0 <= i < n):
            raise ValueError("shard must be (index, count) with 0 <= index < count, not %r"
                             % (shard,))
        if not isinstance(num_parallel_reads, int) or not 1 <= num_parallel_reads <= 256:
            raise ValueError("num_parallel_reads must be 1..256, not %r" % (num_parallel_reads,))
        if index not in _POLICY:
            raise ValueError("index must be 'auto', 'require' or 'scan', not %r" % (index,))
        if use_mmap not in (None, True, False):
            raise ValueError("use_mmap must be None, True or False, not %r" % (use_mmap,))
        if not isinstance(seed, int) or not 0 <= seed < 1 << 64:
            raise ValueError("seed must be an integer in [0, 2**64), not %r" % (seed,))
        for name, v in (("shuffle_block", shuffle_block), ("shuffle_buffer", shuffle_buffer)):
            if not isinstance(v, int) or not 0 <= v < 1 << 32:
                raise ValueError("%s must be an integer in [0, 2**32), not %r" % (name, v))
        opts = _DatasetOptions(shuffle=1 if shuffle else 0, seed=seed, shard_index=i,
                               num_shards=n, num_threads=num_parallel_reads,
                               prefetch_bytes=_args.size(prefetch_bytes, "prefetch_bytes") or 0,
                               block_records=_args.size(block_records, "block_records") or 0,
                               index_policy=_POLICY[index],
                               max_record_size=_args.size(max_record_size,
                                                          "max_record_size") or 0,
                               use_mmap={None: 0, True: 1, False: -1}[use_mmap],
                               shuffle_block=_args.size(shuffle_block, "shuffle_block") or 0,
                               shuffle_buffer=_args.size(shuffle_buffer, "shuffle_buffer") or 0)
        names = (c_char_p * max(1, len(self.files)))(*[_args.path(f) for f in self.files])
        h = DatasetHandle()
        rc = lib.tfrec_dataset_open(byref(h), names, len(self.files), byref(opts))
        if rc < 0:
            raise open_error(rc)
        self._h = h
        self.parse = parse
        self._epoch = 0

    def __len__(self):
        """Records this shard yields per epoch."""
        return lib.tfrec_dataset_shard_records(self._live())

    @property
    def total_records(self):
        return lib.tfrec_dataset_total_records(self._live())

    def set_epoch(self, epoch):
        """Choose the epoch the next iteration yields (its shuffle order)."""
        if not isinstance(epoch, int) or epoch < 0:
            raise ValueError("epoch must be a non-negative integer, not %r" % (epoch,))
        self._epoch = epoch

    def __iter__(self):
        h = self._live()
        check(lib.tfrec_dataset_start_epoch(h, self._epoch), lib.tfrec_dataset_errmsg(h))
        epoch = self._epoch
        data, size = c_void_p(), c_size_t()
        nxt, string_at = lib.tfrec_dataset_next, ctypes.string_at
        if self.parse:
            from .example import Example
        while True:
            if self._h is not h:  # closed while this generator was suspended
                raise ValueError("Dataset is closed")
            rc = nxt(h, byref(data), byref(size))
            if rc != C.TFREC_OK:
                break
            rec = string_at(data.value, size.value) if size.value else b""
            yield Example.parse(rec).to_dict() if self.parse else rec
        if rc != C.TFREC_END:
            raise error_for(rc, lib.tfrec_dataset_errmsg(h))
        if self._epoch == epoch:
            self._epoch = epoch + 1

    def _live(self):
        if self._h is None:
            raise ValueError("Dataset is closed")
        return self._h

    def close(self):
        """Stop the reader threads and release the files."""
        if self._h is not None:
            lib.tfrec_dataset_free(self._h)
            self._h = None

    def __del__(self):
        self.close()
