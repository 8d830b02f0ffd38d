"""Indexed datasets over many TFRecord files (include/tfrec/dataset.h).

    ds = tfrec.Dataset(files, shuffle=True, seed=1, shard=(rank, world))
    for epoch in range(10):
        ds.set_epoch(epoch)
        for record in ds:          # bytes (parse=True: Example dicts)
            ...

files may be globs (gs:// too) as tf.data.TFRecordDataset's; shard="auto"
takes the job's task identity (tfrec.task_identity(): TF_CONFIG,
CLUSTER_SPEC, RANK/WORLD_SIZE, the Indexed Job) and, inside a PyTorch
DataLoader worker, splits it further among the workers. MapDataset gives
records by position for samplers (DistributedSampler). See
docs/training.md.

Every file needs an index: a fresh FILE.idx (tfrec.index_file(), `tfrec
index`, or TFRecordWriter(write_index=True)) or, when there is none, the
file is read once at open to build it in memory. Reader threads read ahead
within prefetch_bytes; the order of an epoch depends only on (files, seed,
epoch, shard), never on num_parallel_reads.
"""

import ctypes
import os
import sys
from ctypes import POINTER, byref, c_char_p, c_int, c_size_t, c_uint32, c_uint64, c_void_p

from . import _args
from . import _constants as C
from ._closing import Closing
from ._handles import DatasetHandle, IndexHandle, RandomReaderHandle
from ._lib import _Sized, _proto, lib
from .errors import check, error_for, open_error
from .task import _torch_worker, resolve_shard

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
_proto("tfrec_dataset_dropped", c_uint64, DatasetHandle)
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
                ("shard_auto", c_int), ("shuffle_block", c_uint32),
                ("shuffle_buffer", c_uint32), ("map", c_void_p), ("map_ctx", c_void_p),
                ("map_size", c_size_t)]


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


_GLOB_CHARS = frozenset("*?[")
_COMPRESSION = {None: None, "": None, "NONE": None, "GZIP": "gzip", "ZLIB": "zlib"}


def _expand(files):
    """The file names of a name, a glob or a list of them (gs:// globs are
    listed through the file system layer; a match NAME.idx is left out when
    NAME matched too); a name without glob characters is kept as given, so
    a missing file fails at open with its name."""
    from .paths import data_glob
    if isinstance(files, (str, bytes, os.PathLike)):
        files = [files]
    out = []
    for f in files:
        f = os.fspath(f)
        text = os.fsdecode(f)
        if _GLOB_CHARS & set(text):
            # "train-*" also matches the indexes next to the data: a match
            # NAME.idx whose NAME matched too is that file's index, not data.
            matched = data_glob(text)
            if not matched:
                raise FileNotFoundError("no file matches %r" % (text,))
            out.extend(matched)
        else:
            out.append(text)
    return out


def _torch_iterable_base():
    """torch's IterableDataset when the program has imported torch, so that
    a DataLoader treats a Dataset as iterable; tfrec never imports torch."""
    data = sys.modules.get("torch.utils.data")
    return getattr(data, "IterableDataset", None)


class Dataset(Closing):
    """Records of many TFRecord files, for training loops (what
    tf.data.TFRecordDataset takes, plus shuffling and sharding).

    files: a name, a glob (gs:// too) or a list of them;
    compression_type: "" or None (indexed reading, below), "GZIP" or "ZLIB"
    (read in order; no shuffle; shard i of n takes every n-th record);
    shuffle: a permutation of every (file, record) pair (a block shuffle
    or the global shuffle, see shuffle_block), new each epoch, the same
    for every worker with the same seed;
    shard=(i, n): worker i of n takes its contiguous part of each epoch's
    order (parts differ by at most one record, disjoint, covering all);
    shard="auto": (i, n) is tfrec.task_identity() (TF_CONFIG,
    CLUSTER_SPEC, RANK/WORLD_SIZE, JOB_COMPLETION_INDEX/TFREC_NUM_TASKS).
    Inside a PyTorch DataLoader worker (torch.utils.data.get_worker_info())
    the share is split further: worker w of W reads part i*W+w of n*W, so
    the DataLoader's workers together read the share once (a Dataset made
    inside a worker, its shard chosen there, is not split again);
    num_parallel_reads: reader threads; prefetch_bytes: read-ahead budget;
    block_records: records per read unit, and the interleave block of each
    file when not shuffled; index: "auto" (a fresh FILE.idx or a scan),
    "require" (no scan) or "scan" (ignore FILE.idx); use_mmap: True maps
    local files, False reads them with pread(), None maps files of small records
    and reads others with pread() unless TFREC_MMAP says otherwise;
    shuffle_block=N (N > 1, with shuffle): a block shuffle of N consecutive
    records per block, then a shuffle buffer of shuffle_buffer records
    (0: 16 N), faster from the page cache than the global shuffle, one
    request per block on gs://; 1: the global shuffle; 0 (default): blocks
    of about 64 KiB for local files of records of 16 KiB or less on
    average, about 2 MiB on gs://, else the global shuffle
    (docs/datasets.md has the quality);
    parse=True yields Example dicts ({key: [values]}) instead of bytes;
    features={key: FixedLenFeature | VarLenFeature} yields {key: numpy
    array} (tfrec.parse_example); batch_size=B yields lists of B items, or
    with features= dicts of arrays with a leading dimension B
    (tfrec.parse_example_batch); drop_remainder drops a last short batch.

    Iterating yields one epoch, the one set_epoch() chose (0 at first,
    then one more after each full pass; in DataLoader workers the pass
    happens in copies, so call set_epoch() each epoch, as with
    DistributedSampler). A Dataset pickles as its arguments (spawned
    DataLoader workers reopen it). After close(), iterating (also a
    generator obtained before) raises ValueError.
    """

    _h = None  # until __init__ succeeds: __del__ and close() need it

    def __new__(cls, *args, **kwargs):
        base = _torch_iterable_base()
        if base is not None and not issubclass(cls, base):
            cls = _torch_class(cls, base)
        return super().__new__(cls)

    def __init__(self, files, shuffle=False, seed=0, shard=(0, 1), num_parallel_reads=2,
                 parse=False, prefetch_bytes=64 << 20, block_records=64, index="auto",
                 max_record_size=None, use_mmap=None, compression_type=None, batch_size=None,
                 drop_remainder=False, features=None, shuffle_block=0,
                 shuffle_buffer=0):
        self._args = dict(files=files, shuffle=shuffle, seed=seed, shard=shard,
                          num_parallel_reads=num_parallel_reads, parse=parse,
                          prefetch_bytes=prefetch_bytes, block_records=block_records,
                          index=index, max_record_size=max_record_size, use_mmap=use_mmap,
                          compression_type=compression_type, batch_size=batch_size,
                          drop_remainder=drop_remainder, features=features,
                          shuffle_block=shuffle_block, shuffle_buffer=shuffle_buffer)
        self.files = _expand(files)
        self._shard = resolve_shard(shard, split_workers=False)
        # Split among DataLoader workers only a Dataset copied into them: one
        # made inside a worker (its shard chosen there) is that worker's.
        self._split_workers = _torch_worker() == (0, 1)
        if not isinstance(num_parallel_reads, int) or not 1 <= num_parallel_reads <= 256:
            raise ValueError("num_parallel_reads must be 1..256, not %r" % (num_parallel_reads,))
        if index not in _POLICY:
            raise ValueError("index must be 'auto', 'require' or 'scan', not %r" % (index,))
        if use_mmap not in (None, True, False):
            raise ValueError("use_mmap must be None, True or False, not %r" % (use_mmap,))
        if not isinstance(seed, int) or not 0 <= seed < 1 << 64:
            raise ValueError("seed must be an integer in [0, 2**64), not %r" % (seed,))
        ct = compression_type.upper() if isinstance(compression_type, str) else compression_type
        if ct not in _COMPRESSION:
            raise ValueError("compression_type must be '', 'GZIP' or 'ZLIB', not %r"
                             % (compression_type,))
        self._compression = _COMPRESSION[ct]
        if self._compression and shuffle:
            raise ValueError("compressed files are read in order: shuffle needs uncompressed, "
                             "indexed files")
        if batch_size is not None and (not isinstance(batch_size, int) or batch_size < 1):
            raise ValueError("batch_size must be a positive integer, not %r" % (batch_size,))
        if features is not None:
            from .parsing import _check_spec
            _check_spec(features)
            if parse:
                raise ValueError("parse=True and features= are exclusive")
        for name, v in (("shuffle_block", shuffle_block), ("shuffle_buffer", shuffle_buffer)):
            if not isinstance(v, int) or not 0 <= v < 1 << 32:
                raise ValueError("%s must be an integer in [0, 2**32), not %r" % (name, v))
        self.parse = parse
        self.features = features
        self.batch_size = batch_size
        self.drop_remainder = bool(drop_remainder)
        self._opts = dict(shuffle=1 if shuffle else 0, seed=seed,
                          num_threads=num_parallel_reads,
                          prefetch_bytes=_args.size(prefetch_bytes, "prefetch_bytes") or 0,
                          block_records=_args.size(block_records, "block_records") or 0,
                          index_policy=_POLICY[index],
                          max_record_size=_args.size(max_record_size, "max_record_size") or 0,
                          use_mmap={None: 0, True: 1, False: -1}[use_mmap],
                          shuffle_block=shuffle_block, shuffle_buffer=shuffle_buffer)
        self._max_record_size = max_record_size
        self._epoch = 0
        self._pid = os.getpid()
        self._others = {}  # (shard) -> handle, for DataLoader workers' shares
        if not self._compression:
            self._h = self._open(self._shard)

    def _options(self, shard):
        return _DatasetOptions(shard_index=shard[0], num_shards=shard[1], **self._opts)

    def _open(self, shard):
        opts = self._options(shard)
        names = (c_char_p * max(1, len(self.files)))(*[_args.path(f) for f in self.files])
        h = DatasetHandle()
        rc = lib.tfrec_dataset_open(byref(h), names, len(self.files), byref(opts))
        if rc < 0:
            raise open_error(rc)
        return h

    def __reduce__(self):
        return (_rebuild, (Dataset, self._args, self._epoch, self._split_workers))

    def _effective_shard(self):
        """This process's shard, split among the DataLoader workers."""
        return resolve_shard(self._shard, split_workers=self._split_workers)

    def _handle(self, shard):
        """The C dataset of shard for this process: a forked DataLoader
        worker opens its own (the parent's reader threads do not exist in
        it; that copy is left alone, never freed here)."""
        h = self._live()
        if os.getpid() != self._pid:
            self._pid = os.getpid()
            self._others = {}
            self._h = h = self._open(self._shard)
        if shard == self._shard:
            return h
        if shard not in self._others:
            self._others[shard] = self._open(shard)
        return self._others[shard]

    def __len__(self):
        """Records this shard yields per epoch (batches with batch_size)."""
        if self._compression:
            from .record import count
            total = sum(count(f) for f in self.files)
            i, n = self._shard
            records = (total - i + n - 1) // n if total > i else 0
        else:
            records = lib.tfrec_dataset_shard_records(self._live())
        if self.batch_size is None:
            return records
        if self.drop_remainder:
            return records // self.batch_size
        return -(-records // self.batch_size)

    @property
    def total_records(self):
        return lib.tfrec_dataset_total_records(self._live())

    def set_epoch(self, epoch):
        """Choose the epoch the next iteration yields (its shuffle order)."""
        if not isinstance(epoch, int) or epoch < 0:
            raise ValueError("epoch must be a non-negative integer, not %r" % (epoch,))
        self._epoch = epoch

    def _records(self):
        if self._compression:
            yield from self._compressed_records(self._effective_shard())
            return
        shard = self._effective_shard()
        h = self._handle(shard)
        check(lib.tfrec_dataset_start_epoch(h, self._epoch), lib.tfrec_dataset_errmsg(h))
        epoch = self._epoch
        data, size = c_void_p(), c_size_t()
        nxt, string_at = lib.tfrec_dataset_next, ctypes.string_at
        while True:
            if self._h is None:  # closed while this generator was suspended
                raise ValueError("Dataset is closed")
            rc = nxt(h, byref(data), byref(size))
            if rc != C.TFREC_OK:
                break
            yield string_at(data.value, size.value) if size.value else b""
        if rc != C.TFREC_END:
            raise error_for(rc, lib.tfrec_dataset_errmsg(h))
        if self._epoch == epoch:
            self._epoch = epoch + 1

    def _compressed_records(self, shard):
        from .record import TFRecordReader
        i, n = shard
        k = 0
        for f in self.files:
            with TFRecordReader(f, compression=self._compression,
                                max_record_size=self._max_record_size) as r:
                for rec in r:
                    if k % n == i:
                        yield bytes(rec)
                    k += 1
        self._epoch += 1

    def __iter__(self):
        records = self._records()
        if self.batch_size is None:
            if self.features is not None:
                from .parsing import parse_example
                return (parse_example(r, self.features) for r in records)
            if self.parse:
                from .example import Example
                return (Example.parse(r).to_dict() for r in records)
            return records
        return self._batches(records)

    def _batches(self, records):
        batch = []
        for rec in records:
            batch.append(rec)
            if len(batch) == self.batch_size:
                yield self._finish(batch)
                batch = []
        if batch and not self.drop_remainder:
            yield self._finish(batch)

    def _finish(self, batch):
        if self.features is not None:
            from .parsing import parse_example_batch
            return parse_example_batch(batch, self.features)
        if self.parse:
            from .example import Example
            return [Example.parse(r).to_dict() for r in batch]
        return batch

    def _live(self):
        if self._h is None and not self._compression:
            raise ValueError("Dataset is closed")
        if self._compression and getattr(self, "_closed", False):
            raise ValueError("Dataset is closed")
        return self._h

    def close(self):
        """Stop the reader threads and release the files."""
        self._closed = True
        if getattr(self, "_pid", None) != os.getpid():
            self._h = None  # a forked copy: the parent owns those handles
            self._others = {}
            return
        for h in getattr(self, "_others", {}).values():
            lib.tfrec_dataset_free(h)
        self._others = {}
        if self._h is not None:
            lib.tfrec_dataset_free(self._h)
            self._h = None

    def __del__(self):
        self.close()


_torch_classes = {}


def _torch_class(cls, base):
    """A Dataset class as a subclass of torch's IterableDataset too (made
    once per class)."""
    made = _torch_classes.get((cls, base))
    if made is None:
        made = type(cls.__name__, (cls, base), {"__module__": cls.__module__})
        _torch_classes[(cls, base)] = made
    return made


def _rebuild(cls, args, epoch, split_workers):
    """A pickled Dataset (cls: the public class) opened again."""
    ds = cls(**args)
    ds._epoch = epoch
    ds._split_workers = split_workers
    return ds


def tf_record_iterator(path, compression_type=None):
    """The records of one file as bytes, in order (tf.compat.v1.io.
    tf_record_iterator); compression_type None/"" (plain), "GZIP", "ZLIB"."""
    from .record import TFRecordReader
    ct = compression_type.upper() if isinstance(compression_type, str) else compression_type
    if ct not in _COMPRESSION:
        raise ValueError("compression_type must be '', 'GZIP' or 'ZLIB', not %r"
                         % (compression_type,))
    with TFRecordReader(path, compression=_COMPRESSION[ct]) as r:
        for rec in r:
            yield bytes(rec)


class MapDataset:
    """Records of indexed, uncompressed TFRecord files by position, for
    PyTorch samplers: len(ds) records, ds[k] the k-th in file order
    (features= / parse=True parse it). Works with DistributedSampler and
    shuffling samplers, which choose the positions; readers are opened
    lazily in each process (it pickles as its file names), so DataLoader
    workers, forked or spawned, each read through their own."""

    def __init__(self, files, parse=False, features=None):
        self.files = _expand(files)
        self.parse = parse
        self.features = features
        if features is not None:
            from .parsing import _check_spec
            _check_spec(features)
        self._readers = None
        self._pid = None
        counts = []
        for f in self.files:
            n, _ = count_records(f)
            counts.append(n)
        self._starts = [0]
        for n in counts:
            self._starts.append(self._starts[-1] + n)

    def __getstate__(self):
        return {"files": self.files, "parse": self.parse, "features": self.features,
                "_starts": self._starts}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._readers = None
        self._pid = None

    def __len__(self):
        return self._starts[-1]

    def _reader(self, f):
        if self._pid != os.getpid():
            self._readers = [None] * len(self.files)
            self._pid = os.getpid()
        r = self._readers[f]
        if r is None:
            r = self._readers[f] = RandomAccessReader(self.files[f])
        return r

    def __getitem__(self, k):
        import bisect
        if not isinstance(k, int):
            k = int(k)
        n = len(self)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError("record %d of %d" % (k, n))
        f = bisect.bisect_right(self._starts, k) - 1
        rec = self._reader(f)[k - self._starts[f]]
        if self.features is not None:
            from .parsing import parse_example
            return parse_example(rec, self.features)
        if self.parse:
            from .example import Example
            return Example.parse(rec).to_dict()
        return rec

    def close(self):
        if self._readers and self._pid == os.getpid():
            for r in self._readers:
                if r is not None:
                    r.close()
        self._readers = None
