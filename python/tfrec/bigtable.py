"""Cloud Bigtable loading and scanning (include/tfrec/bigtable.h).

    with tfrec.bigtable.Writer("my-project", "my-instance", "imagenet") as w:
        w.write_tfrecords("/data/train-*", row_prefix="train_",
                          progress=lambda p: print(p.next_index))
    stats = w.stats()             # rows_acked, requests, retried_entries, ...

    for row in tfrec.bigtable.Reader("my-project", "my-instance", "imagenet",
                                     prefix=b"train_"):
        example = tfrec.Example.parse(row.value("tfexample", b"example"))

With BIGTABLE_EMULATOR_HOST set (or endpoint="127.0.0.1:PORT") the emulator
is used without credentials; otherwise bigtable.googleapis.com with Google
default credentials. Every failure raises tfrec.BigtableError carrying the
library's message (gRPC status, row key) and the TFREC_E_* code as e.code.
A Writer or Reader must be used by one thread at a time; the network work
happens inside its calls, which release the GIL.
"""

import glob as _glob
import os
import warnings
from collections import namedtuple
from itertools import chain
from ctypes import (CFUNCTYPE, POINTER, Structure, byref, c_char_p, c_double, c_int, c_int64,
                    c_size_t, c_uint32, c_uint64, c_void_p, cast, create_string_buffer,
                    string_at)

from . import _args, paths as _paths
from . import _constants as C
from ._closing import Closing, Committing
from ._handles import (BtClientHandle, BtPlanHandle, BtReaderHandle, BtWriterHandle,
                       RecordBatchHandle)
from ._lib import _Sized, _proto, lib
from ._stats import TypedDict, stats_method
from .errors import BigtableError, error_for
from .record import _BatchBuffer, _batch_records, _compression_code, _one_call_each


class _ClientOptions(_Sized):
    _c_type_ = "tfrec_bt_client_options"
    _fields_ = [("struct_size", c_size_t), ("project", c_char_p), ("instance", c_char_p), ("app_profile_id", c_char_p),
                ("endpoint", c_char_p), ("admin_endpoint", c_char_p),
                ("rpc_timeout_ms", c_int64), ("max_message_bytes", c_int64),
                ("credentials_file", c_char_p), ("ca_bundle_file", c_char_p), ("tls", c_int),
                # NULL (user_project=None): TFREC_USER_PROJECT, else the credentials' own.
                ("user_project", c_char_p)]


class _WriterOptions(_Sized):
    _c_type_ = "tfrec_bt_writer_options"
    _fields_ = [("struct_size", c_size_t), ("batch_rows", c_size_t), ("batch_mutations", c_size_t),
                ("batch_bytes", c_size_t), ("max_inflight", c_int),
                ("max_buffered_bytes", c_size_t), ("timestamp_micros", c_int64),
                ("retry_initial_ms", c_int64), ("retry_max_ms", c_int64),
                ("retry_multiplier", c_double), ("retry_timeout_ms", c_int64),
                ("stop_timeout_ms", c_int64), ("connections", c_int)]


class WriterStats(TypedDict):
    """Writer.stats(): rows put, acknowledged and given up on, bytes
    acknowledged, MutateRows requests, entries retried, streams failed,
    batches split, and how many rows from the first are all acknowledged."""
    rows_put: int
    rows_acked: int
    rows_failed: int
    bytes_acked: int
    requests: int
    retried_entries: int
    stream_failures: int
    splits: int
    acked_prefix: int


class ReadStats(TypedDict):
    """Reader.stats() and Dataset.stats(): rows and bytes read, row ranges
    and key samples of the plan, ReadRows streams opened, resumed after a
    failure, and times a stream paused for the consumer."""
    rows: int
    bytes: int
    ranges: int
    samples: int
    streams: int
    resumed: int
    paused: int


_STAT_FIELDS = ("rows_put", "rows_acked", "rows_failed", "bytes_acked", "requests",
                "retried_entries", "stream_failures", "splits", "acked_prefix")


class _WriterStats(_Sized):
    _c_type_ = "tfrec_bt_writer_stats"
    _fields_ = [("struct_size", c_size_t)] + [(n, c_uint64) for n in _STAT_FIELDS]


_LOAD_STAT_FIELDS = ("records_read", "bytes_read", "records_skipped", "rows_acked", "bytes_acked",
                     "rows_failed", "next_index")


class _LoadStats(_Sized):
    _c_type_ = "tfrec_bt_load_stats"
    _fields_ = ([("struct_size", c_size_t)] + [(n, c_uint64) for n in _LOAD_STAT_FIELDS]
                + [("seconds", c_double), ("records_not_sent", c_uint64), ("input_left", c_int),
                   ("share_begin", c_uint64), ("share_end", c_uint64),
                   ("total_records", c_uint64), ("total_source", c_int),
                   ("files_indexed", c_uint64), ("files_counted", c_uint64),
                   ("files_skipped", c_uint64)])


class _LoadProgress(_Sized):
    _c_type_ = "tfrec_bt_load_progress"
    _fields_ = [("struct_size", c_size_t), ("stats", POINTER(_LoadStats)),
                ("file_index", c_size_t), ("file", c_char_p), ("done", c_int)]


_LOAD_PROGRESS_FN = CFUNCTYPE(c_int, c_void_p, POINTER(_LoadProgress))


class _LoadOptions(_Sized):
    _c_type_ = "tfrec_bt_load_options"
    _fields_ = [("struct_size", c_size_t), ("row_prefix", c_char_p), ("column", c_char_p),
                ("num_records", c_uint64), ("start_index", c_uint64), ("key_width", c_int),
                ("reversed_keys", c_int), ("max_rows_per_sec", c_double), ("compression", c_int),
                ("max_record_size", c_uint64), ("progress_interval", c_double),
                ("progress", _LOAD_PROGRESS_FN), ("progress_ctx", c_void_p),
                ("open_source", c_void_p), ("open_ctx", c_void_p),
                ("task_index", c_uint32), ("num_tasks", c_uint32), ("fs", c_void_p)]


LoadProgress = namedtuple("LoadProgress", _LOAD_STAT_FIELDS + ("seconds", "file", "done"))
LoadProgress.__doc__ = """What a write_tfrecords progress callback receives: the figures so
far (next_index: every record below it is acknowledged), the file being read
(None at the end) and done (True on the final call)."""


def _load_stats_dict(st):
    d = {n: getattr(st, n) for n in _LOAD_STAT_FIELDS}
    d["seconds"] = st.seconds
    d["records_not_sent"] = st.records_not_sent
    d["input_left"] = bool(st.input_left)
    for n in ("share_begin", "share_end", "total_records", "files_indexed", "files_counted",
              "files_skipped"):
        d[n] = getattr(st, n)
    # where a split load's total came from (tfrec_bt_load_total)
    d["total_source"] = {1: "num_records", 2: "indexes", 3: "read"}.get(st.total_source)
    return d


class _Range(Structure):
    """tfrec_bt_range: frozen, no struct_size."""
    _c_type_ = "tfrec_bt_range"
    _fields_ = [("start", c_char_p), ("start_len", c_size_t), ("end", c_char_p),
                ("end_len", c_size_t), ("start_open", c_int), ("end_closed", c_int)]


class _ReadOptions(_Sized):
    _c_type_ = "tfrec_bt_read_options"
    _fields_ = [("struct_size", c_size_t), ("prefix", c_char_p), ("prefix_len", c_size_t),
                ("start_key", c_char_p), ("start_key_len", c_size_t),
                ("end_key", c_char_p), ("end_key_len", c_size_t),
                ("rows_limit", c_int64), ("all_versions", c_int), ("family", c_char_p),
                ("max_row_bytes", c_size_t),
                ("ranges", POINTER(_Range)), ("n_ranges", c_size_t),
                ("keys", POINTER(c_char_p)), ("key_lens", POINTER(c_size_t)), ("n_keys", c_size_t),
                ("column", c_char_p), ("parallel_scans", c_int), ("shard_index", c_int),
                ("num_shards", c_int), ("unordered", c_int), ("max_buffer_bytes", c_size_t),
                ("split_keys", POINTER(c_char_p)), ("split_key_lens", POINTER(c_size_t)),
                ("n_split_keys", c_size_t), ("retry_timeout_ms", c_int64),
                ("retry_initial_ms", c_int64), ("plan", BtPlanHandle), ("sample_split", c_int),
                ("shuffle_ranges", c_size_t), ("shuffle_seed", c_uint64),
                ("shuffle_epoch", c_uint64)]


class _ExportStats(_Sized):
    _c_type_ = "tfrec_bt_export_stats"
    _fields_ = [("struct_size", c_size_t), ("rows", c_uint64), ("bytes", c_uint64),
                ("rows_skipped", c_uint64), ("outputs", c_uint64), ("seconds", c_double),
                ("ranges", c_uint64), ("samples", c_uint64), ("streams", c_uint64),
                ("resumed", c_uint64)]


_EXPORT_PROGRESS_FN = CFUNCTYPE(c_int, c_void_p, POINTER(_ExportStats))


class _ExportOptions(_Sized):
    _c_type_ = "tfrec_bt_export_options"
    _fields_ = [("struct_size", c_size_t), ("family", c_char_p), ("column", c_char_p),
                ("missing_cell", c_int), ("compression", c_int), ("output_shards", c_int),
                ("keys_output", c_char_p), ("no_part_file", c_int),
                ("progress_interval", c_double), ("progress", _EXPORT_PROGRESS_FN),
                ("progress_ctx", c_void_p), ("fs", c_void_p), ("on_reader", c_void_p),
                ("reader_ctx", c_void_p)]


class _CheckResult(_Sized):
    _c_type_ = "tfrec_bt_export_check_result"
    _fields_ = [("struct_size", c_size_t), ("tasks", c_uint64), ("rows", c_uint64),
                ("bytes", c_uint64), ("outputs", c_uint64), ("problems", c_uint64),
                ("report", c_void_p)]


class _ReadStats(_Sized):
    _c_type_ = "tfrec_bt_read_stats"
    _fields_ = [("struct_size", c_size_t), ("rows", c_uint64), ("bytes", c_uint64),
                ("ranges", c_uint64), ("samples", c_uint64), ("streams", c_uint64),
                ("resumed", c_uint64), ("paused", c_uint64)]


class _Cell(_Sized):
    _c_type_ = "tfrec_bt_cell"
    _fields_ = [("struct_size", c_size_t), ("family", c_char_p), ("qualifier", c_void_p), ("qualifier_len", c_size_t),
                ("timestamp_micros", c_int64), ("value", c_void_p), ("value_len", c_size_t),
                ("labels", POINTER(c_char_p)), ("n_labels", c_size_t)]


def _cell_labels(c):
    """The labels of a C cell, () if it has none or predates the field."""
    if c.struct_size < _Cell.n_labels.offset + _Cell.n_labels.size or not c.n_labels:
        return ()
    return tuple(c.labels[i].decode("utf-8", "replace") for i in range(c.n_labels))


class _Row(_Sized):
    _c_type_ = "tfrec_bt_row"
    # cells: an array of pointers, so that the C cell struct can grow
    _fields_ = [("struct_size", c_size_t), ("key", c_void_p), ("key_len", c_size_t),
                ("cells", POINTER(POINTER(_Cell))), ("ncells", c_size_t), ("range", c_size_t)]


_proto("tfrec_bt_client_open", c_int, POINTER(BtClientHandle), POINTER(_ClientOptions))
_proto("tfrec_bt_client_free", None, BtClientHandle)
_proto("tfrec_bt_client_errmsg", c_char_p, BtClientHandle)
_proto("tfrec_bt_client_project", c_char_p, BtClientHandle)
_proto("tfrec_bt_client_endpoint", c_char_p, BtClientHandle)
_proto("tfrec_bt_client_is_emulator", c_int, BtClientHandle)
_proto("tfrec_bt_ensure_table", c_int, BtClientHandle, c_char_p, c_char_p, c_int)
_proto("tfrec_bt_writer_open", c_int, POINTER(BtWriterHandle), BtClientHandle, c_char_p, c_char_p,
       POINTER(_WriterOptions))
_proto("tfrec_bt_writer_put", c_int, BtWriterHandle, c_char_p, c_size_t, c_char_p, c_size_t,
       c_char_p, c_size_t, c_uint64)
_proto("tfrec_bt_writer_flush", c_int, BtWriterHandle)
_proto("tfrec_bt_writer_close", c_int, BtWriterHandle)
_proto("tfrec_bt_writer_free", None, BtWriterHandle)
_proto("tfrec_bt_writer_stats_get", c_int, BtWriterHandle, POINTER(_WriterStats))
_proto("tfrec_bt_writer_errmsg", c_char_p, BtWriterHandle)
_proto("tfrec_bt_writer_timestamp", c_int64, BtWriterHandle)
_proto("tfrec_bt_writer_failed_count", c_size_t, BtWriterHandle)
_proto("tfrec_bt_writer_failed_row", c_int, BtWriterHandle, c_size_t, POINTER(c_void_p),
       POINTER(c_size_t), POINTER(c_uint64), POINTER(c_int), POINTER(c_char_p))
_proto("tfrec_bt_load", c_int, BtWriterHandle, POINTER(c_char_p), c_size_t, POINTER(_LoadOptions),
       POINTER(_LoadStats))
_proto("tfrec_bt_reader_open", c_int, POINTER(BtReaderHandle), BtClientHandle, c_char_p,
       POINTER(_ReadOptions))
_proto("tfrec_bt_reader_next", c_int, BtReaderHandle, POINTER(_Row))
_proto("tfrec_bt_reader_next_values", c_int, BtReaderHandle, RecordBatchHandle, c_size_t,
       c_size_t)
_proto("tfrec_bt_reader_next_value", c_int, BtReaderHandle, POINTER(c_void_p), POINTER(c_size_t))
_proto("tfrec_bt_reader_errmsg", c_char_p, BtReaderHandle)
_proto("tfrec_bt_reader_free", None, BtReaderHandle)
_proto("tfrec_bt_reader_stats_get", c_int, BtReaderHandle, POINTER(_ReadStats))
_proto("tfrec_bt_plan_create", c_int, POINTER(BtPlanHandle), BtClientHandle, c_char_p,
       POINTER(_ReadOptions))
_proto("tfrec_bt_plan_parse", c_int, POINTER(BtPlanHandle), c_char_p, c_size_t)
_proto("tfrec_bt_plan_read", c_int, POINTER(BtPlanHandle), c_void_p, c_char_p)
_proto("tfrec_bt_plan_write", c_int, BtPlanHandle, c_void_p, c_char_p)
_proto("tfrec_bt_plan_text", c_int, BtPlanHandle, POINTER(c_void_p), POINTER(c_size_t))
_proto("tfrec_bt_plan_id", c_uint32, BtPlanHandle)
_proto("tfrec_bt_plan_num_shards", c_size_t, BtPlanHandle)
_proto("tfrec_bt_plan_table", c_char_p, BtPlanHandle)
_proto("tfrec_bt_plan_shard", c_int, BtPlanHandle, c_size_t, POINTER(_Range))
_proto("tfrec_bt_plan_free", None, BtPlanHandle)
_proto("tfrec_bt_export", c_int, BtClientHandle, c_char_p, c_char_p, POINTER(_ReadOptions),
       POINTER(_ExportOptions), POINTER(_ExportStats))
_proto("tfrec_bt_export_output_name", c_size_t, c_char_p, c_size_t, c_char_p, c_int, c_int, c_int,
       c_int, c_size_t)
_proto("tfrec_bt_export_part_name", c_size_t, c_char_p, c_size_t, c_char_p, c_int, c_int)
_proto("tfrec_bt_export_check", c_int, c_void_p, POINTER(c_char_p), c_size_t, BtPlanHandle,
       POINTER(_CheckResult))
_proto("tfrec_bt_free", None, c_void_p)
_proto("tfrec_bt_row_key", c_size_t, c_char_p, c_size_t, c_char_p, c_uint64, c_int, c_int)
_proto("tfrec_bt_key_width", c_int, c_uint64)
_proto("tfrec_bt_code_name", c_char_p, c_int)


# Dataset's batches of values: as the file reader's (record.py)
_VALUE_BATCH_VALUES = 4096
_VALUE_BATCH_BYTES = 256 << 10

_b = _args.optional_key  # a key or qualifier: str (UTF-8) or bytes-like


def _raise(rc, msg=None):
    raise error_for(rc, msg, cls=BigtableError)


def row_key(prefix, index, width, reversed_keys=False):
    """The reference loader's row key: prefix + index zero-padded to width."""
    p = _args.key(prefix, "prefix")
    index, width = _args.size(index, "index"), _args.size(width, "width")
    buf = create_string_buffer(len(p) + 64)
    n = lib.tfrec_bt_row_key(buf, len(buf), p, index, width, 1 if reversed_keys else 0)
    return buf.raw[:n]


def key_width(num_records=None):
    """Digits of num_records - 1 (10 when num_records is None), as the reference."""
    return lib.tfrec_bt_key_width(_args.size(num_records, "num_records") or 0)


class _Client:
    """A connection. credentials_file, ca_bundle_file, tls and user_project
    are the keyword arguments of every public constructor here, as in
    tfrec_bt_client_options (tls=True: TLS and tokens even to a loopback
    endpoint, e.g. a TLS front; user_project: the quota and billing project
    sent as x-goog-user-project with every call, over TLS only; None:
    $TFREC_USER_PROJECT, else the credentials' own project)."""

    def __init__(self, project, instance, endpoint, admin_endpoint, app_profile_id,
                 rpc_timeout_ms, credentials_file=None, ca_bundle_file=None, tls=False,
                 user_project=None):
        if not instance:
            raise ValueError("instance is required")
        t = _args.text
        self._keep = [t(project, "project"), t(instance, "instance"),
                      t(app_profile_id, "app_profile_id"), t(endpoint, "endpoint"),
                      t(admin_endpoint, "admin_endpoint"),
                      _args.optional_path(credentials_file, "credentials_file"),
                      _args.optional_path(ca_bundle_file, "ca_bundle_file"),
                      t(user_project, "user_project")]
        o = _ClientOptions(project=self._keep[0], instance=self._keep[1],
                           app_profile_id=self._keep[2], endpoint=self._keep[3],
                           admin_endpoint=self._keep[4], credentials_file=self._keep[5],
                           ca_bundle_file=self._keep[6], tls=1 if tls else 0,
                           user_project=self._keep[7],
                           rpc_timeout_ms=_args.size(rpc_timeout_ms, "rpc_timeout_ms") or 0)
        h = BtClientHandle()
        rc = lib.tfrec_bt_client_open(byref(h), byref(o))
        if rc < 0:
            msg = lib.tfrec_last_errmsg().decode("utf-8", "replace")
            if rc == C.TFREC_E_INVALID and not project:
                msg += "; pass the project (the first argument)"  # the library names no option
            _raise(rc, msg)
        self.h = h

    def _handle(self):
        if self.h is None:
            raise ValueError("the Bigtable connection is closed")
        return self.h

    @property
    def project(self):
        return lib.tfrec_bt_client_project(self._handle()).decode()

    @property
    def endpoint(self):
        return lib.tfrec_bt_client_endpoint(self._handle()).decode()

    def ensure_table(self, table, family, create):
        h = self._handle()
        rc = lib.tfrec_bt_ensure_table(h, table, family, 1 if create else 0)
        if rc < 0:
            msg = lib.tfrec_bt_client_errmsg(h).decode("utf-8", "replace")
            if rc == C.TFREC_E_NOT_FOUND and not create:
                # The library says what is missing and how to create it by
                # hand; the option that creates it is this binding's.
                msg += ", or pass create_table=True"
            _raise(rc, msg)

    def close(self):
        if self.h is not None:
            lib.tfrec_bt_client_free(self.h)
            self.h = None


FailedRow = namedtuple("FailedRow", "key index grpc_code grpc_status message")


class Writer(Committing):
    """Bulk-load rows into table, one cell family:column per row.

    project None asks the GCE metadata server (as the reference tool does).
    create_table: create the table / family if missing (otherwise a missing
    one raises BigtableError naming it). batch_rows, batch_bytes,
    max_inflight, timestamp_micros (-1: server time) and retry_timeout_ms
    tune the library's bulk writer (see docs/bigtable.md); None keeps its
    defaults. Rows are acknowledged asynchronously; close() (or leaving the
    `with` block) waits for all of them and raises if any row failed.
    """

    _h = None  # until __init__ succeeds: __del__ needs it
    _final_stats = None  # stats() after close()
    load_stats = None

    def __init__(self, project, instance, table, family="tfexample", column="example", *,
                 endpoint=None, admin_endpoint=None, app_profile_id=None, create_table=False,
                 batch_rows=None, batch_bytes=None, max_inflight=None, timestamp_micros=None,
                 retry_timeout_ms=None, rpc_timeout_ms=None,
                 credentials_file=None, ca_bundle_file=None, tls=False, user_project=None):
        self.table = table
        self.family = family
        table, family = _args.text(table, "table"), _args.text(family, "family")
        self._column = _args.text(column, "column")
        o = _WriterOptions(batch_rows=_args.size(batch_rows, "batch_rows") or 0,
                           batch_bytes=_args.size(batch_bytes, "batch_bytes") or 0,
                           max_inflight=_args.size(max_inflight, "max_inflight") or 0,
                           timestamp_micros=timestamp_micros or 0,
                           retry_timeout_ms=_args.size(retry_timeout_ms, "retry_timeout_ms") or 0)
        self._client = _Client(project, instance, endpoint, admin_endpoint, app_profile_id,
                               rpc_timeout_ms, credentials_file, ca_bundle_file, tls,
                               user_project)
        self._h = None
        self._final_stats = None
        self.load_stats = None
        try:
            self._client.ensure_table(table, family, create_table)
            h = BtWriterHandle()
            rc = lib.tfrec_bt_writer_open(byref(h), self._client.h, table, family, byref(o))
            if rc < 0:
                _raise(rc)
            self._h = h
        except BaseException:
            self._client.close()
            raise
        self._next_index = 0

    @property
    def project(self):
        return self._client.project

    def _fail(self, rc):
        _raise(rc, lib.tfrec_bt_writer_errmsg(self._h))

    def _handle(self):
        if self._h is None:
            raise ValueError("bigtable.Writer is closed")
        return self._h

    def put(self, key, value, column=None):
        """Queue one row: key -> family:column = value (bytes; str keys are UTF-8)."""
        h = self._handle()
        k, v = _args.key(key, "key"), _args.data(value, "value")
        q = self._column if column is None else _args.key(column, "column")
        rc = lib.tfrec_bt_writer_put(h, k, len(k), q, len(q), v, len(v), self._next_index)
        self._next_index += 1
        if rc < 0:
            self._fail(rc)

    def write_tfrecords(self, pattern, row_prefix="train_", num_records=None, start_index=0,
                        reversed_keys=False, compression="auto", max_rows_per_sec=None,
                        progress=None, progress_interval=None, task_index=None, num_tasks=None):
        """Load the records of the files matching pattern (sorted, read in
        order) as rows row_prefix + zero-padded global index, like
        tfrecords_to_bigtable.py: keys are padded to the digits of
        num_records - 1 (10 digits without num_records), and at most
        num_records records are written. Records below start_index are read
        but not written (resume: their keys keep their index). This is the
        library's tfrec_bt_load, the loop tfrec2bt runs.

        task_index=i, num_tasks=n load only task i's share of a load split
        into n tasks (tfrec2bt --task_index/--num_tasks): records [begin, end)
        of the global sequence, cut from num_records or, without it, from a
        count of the files' records (fresh .idx files when present), under
        the keys one call writes; start_index still skips within the share.
        load_stats then holds share_begin, share_end, total_records and
        total_source ("num_records", "indexes" or "read").

        progress(p), if given, is called a few times a second (every
        progress_interval seconds, default 0.25) and once at the end with a
        LoadProgress; a true return value stops the load, which then raises
        BigtableError (code TFREC_E_STATE). An exception in the callback
        (KeyboardInterrupt included) stops the load and is re-raised.
        Either way what was put is flushed first, so the error's .stats
        ["next_index"] is where to resume. Returns the number of rows put;
        the figures are in self.load_stats."""
        task_index, num_tasks = _task(task_index, num_tasks)
        h = self._handle()
        prefix = _args.key(row_prefix, "row_prefix")  # checked before anything is read
        files = _paths.data_glob(pattern)  # any scheme; NAME.idx beside NAME left out
        if not files:
            raise BigtableError("no files match %r" % (pattern,), C.TFREC_E_NOT_FOUND)
        keep = [prefix, self._column] + [os.fsencode(f) for f in files]
        paths = (c_char_p * len(files))(*keep[2:])
        o = _LoadOptions(row_prefix=keep[0], column=keep[1],
                         num_records=_args.size(num_records, "num_records") or 0,
                         start_index=_args.size(start_index, "start_index"),
                         reversed_keys=1 if reversed_keys else 0,
                         max_rows_per_sec=_args.amount(max_rows_per_sec, "max_rows_per_sec") or 0,
                         compression=_compression_code(compression, True),
                         progress_interval=progress_interval or 0,  # < 0: every record
                         task_index=task_index, num_tasks=num_tasks)
        raised = []
        if progress is not None:
            def on_progress(_ctx, p):
                try:
                    c = p.contents
                    st = c.stats.contents
                    info = LoadProgress(*[getattr(st, n) for n in _LOAD_STAT_FIELDS],
                                        seconds=st.seconds,
                                        file=c.file.decode("utf-8", "surrogateescape")
                                        if c.file else None,
                                        done=bool(c.done))
                    return 1 if progress(info) else 0
                except BaseException as e:  # KeyboardInterrupt too: stop, re-raise below
                    raised.append(e)
                    return 1
            o.progress = _LOAD_PROGRESS_FN(on_progress)
        st = _LoadStats()
        rc = lib.tfrec_bt_load(h, paths, len(files), byref(o), byref(st))
        self.load_stats = _load_stats_dict(st)
        self._next_index += st.records_read
        if raised:
            raise raised[0]
        if rc < 0:
            err = error_for(rc, cls=BigtableError)
            err.stats = self.load_stats
            raise err
        return st.records_read

    def flush(self):
        """Wait until every queued row is acknowledged or failed."""
        rc = lib.tfrec_bt_writer_flush(self._handle())
        if rc < 0:
            self._fail(rc)

    @stats_method
    def stats(self):
        """The writer's figures as a WriterStats dict (rows_put, rows_acked,
        rows_failed, bytes_acked, requests, retried_entries, ...): so far
        while open, the final ones after close() ({} after abandon())."""
        if self._h is None:
            return dict(self._final_stats or {})
        return self._live_stats()

    def _live_stats(self):
        s = _WriterStats()
        lib.tfrec_bt_writer_stats_get(self._handle(), byref(s))
        return {n: getattr(s, n) for n in _STAT_FIELDS}

    def get_stats(self):
        """Deprecated: use stats() (this one raises ValueError once closed)."""
        warnings.warn("Writer.get_stats() is deprecated: use stats()", DeprecationWarning,
                      stacklevel=2)
        return self._live_stats()

    def failed_rows(self):
        """Rows given up on, in put order."""
        h = self._handle()
        out = []
        kp, kl, idx, code, msg = c_void_p(), c_size_t(), c_uint64(), c_int(), c_char_p()
        for i in range(lib.tfrec_bt_writer_failed_count(h)):
            if lib.tfrec_bt_writer_failed_row(h, i, byref(kp), byref(kl), byref(idx),
                                              byref(code), byref(msg)) < 0:
                continue
            out.append(FailedRow(string_at(kp.value, kl.value) if kl.value else b"", idx.value,
                                 code.value, lib.tfrec_bt_code_name(code.value).decode(),
                                 (msg.value or b"").decode("utf-8", "replace")))
        return out

    def close(self):
        """Flush, release the connection and return the stats dict
        (rows_put, rows_acked, rows_failed, bytes_acked, requests, ...).
        Raises BigtableError (with .stats and .failed_rows) if any row failed."""
        if self._h is None:
            return self._final_stats
        h = self._h
        try:
            rc = lib.tfrec_bt_writer_close(h)
            self._final_stats = self._live_stats()
            if rc < 0:
                err = error_for(rc, lib.tfrec_bt_writer_errmsg(h), cls=BigtableError)
                err.stats = dict(self._final_stats)
                err.failed_rows = self.failed_rows()
                raise err
            return dict(self._final_stats)
        finally:
            self._h = None
            lib.tfrec_bt_writer_free(h)
            self._client.close()

    def abandon(self):
        """Release everything without waiting (rows not yet acknowledged may be lost)."""
        if self._h is not None:
            lib.tfrec_bt_writer_free(self._h)
            self._h = None
            self._client.close()

    _discard = abandon  # a `with` block that raised

    def __del__(self):
        if self._h is not None:
            self.abandon()


Cell = namedtuple("Cell", "family qualifier timestamp_micros value labels", defaults=((),))
Cell.__doc__ = """A cell read back: family (str), qualifier (bytes), timestamp_micros,
value (bytes) and labels (tuple of str: those a labelling filter attached,
() for the Reader's scans)."""


class Row(namedtuple("Row", "key cells")):
    """A row: key (bytes) and its cells (list of Cell); .range is the index
    of the reader's range it came from (0 with one scan). Still a pair, so
    `key, cells = row` keeps working."""

    def __new__(cls, key, cells, range=0):  # pylint: disable=redefined-builtin
        self = super().__new__(cls, key, cells)
        self.range = range
        return self

    def value(self, family="tfexample", qualifier=b"example"):
        """The value of the latest cell family:qualifier (None if absent)."""
        q = _args.key(qualifier, "qualifier")
        for c in self.cells:
            if c.family == family and c.qualifier == q:
                return c.value
        return None


def _key_array(keys, what):
    """A C array of key pointers and one of lengths (and the bytes to keep)."""
    keys = [_args.key(k, "%s[%d]" % (what, i)) for i, k in enumerate(keys)]
    for i, k in enumerate(keys):
        if not k:
            raise ValueError("%s[%d] must be a non-empty key, not %r" % (what, i, k))
    ptrs = (c_char_p * max(1, len(keys)))(*keys)
    lens = (c_size_t * max(1, len(keys)))(*[len(k) for k in keys])
    return ptrs, lens, keys


def _range_array(ranges):
    """ranges: (start, end) pairs, half-open [start, end); None or b"" for an
    open side; or dicts with start/end/start_open/end_closed."""
    out = (_Range * max(1, len(ranges)))()
    keep = []
    for i, r in enumerate(ranges):
        if isinstance(r, dict):
            start = _b(r.get("start"), "ranges[%d] start" % i)
            end = _b(r.get("end"), "ranges[%d] end" % i)
            so, ec = bool(r.get("start_open")), bool(r.get("end_closed"))
        else:
            try:
                start, end = r
            except (TypeError, ValueError):
                raise ValueError("ranges[%d] must be a (start, end) pair or a dict, not %r"
                                 % (i, r)) from None
            start = _b(start, "ranges[%d] start" % i)
            end = _b(end, "ranges[%d] end" % i)
            so = ec = False
        keep += [start, end]
        out[i] = _Range(start, len(start) if start else 0, end, len(end) if end else 0,
                        int(so), int(ec))
    return out, keep


def _task(task_index, num_tasks):
    """(index, count) of one task: both None is the whole job."""
    if task_index is None and num_tasks is None:
        return 0, 1
    if task_index is None or num_tasks is None:
        raise ValueError("task_index and num_tasks go together (got %r, %r)"
                         % (task_index, num_tasks))
    if not (isinstance(task_index, int) and isinstance(num_tasks, int)
            and 0 <= task_index < num_tasks <= 1000000):
        raise ValueError("task_index=%r, num_tasks=%r: need 0 <= task_index < num_tasks "
                         "<= 1000000" % (task_index, num_tasks))
    return task_index, num_tasks


def _shard(shard, task_index=None, num_tasks=None):
    if task_index is not None or num_tasks is not None:
        if shard is not None:
            raise ValueError("shard=(i, n) and task_index/num_tasks name the same share: "
                             "give one")
        i, n = _task(task_index, num_tasks)
        if n > 65536:
            raise ValueError("num_tasks=%r: at most 65536 tasks read one table" % (n,))
        return i, n
    if shard is None:
        return 0, 1
    if isinstance(shard, str) and shard == "auto":
        # The job's task identity, split further among the DataLoader
        # workers of this process (a Reader is made where it is iterated).
        from .task import resolve_shard
        i, n = resolve_shard("auto")
        if n > 65536:
            raise ValueError("shard='auto' gives %d tasks: at most 65536 tasks read one table"
                             % (n,))
        return i, n
    try:
        i, n = shard
    except (TypeError, ValueError):
        raise ValueError("shard must be a pair (index, count), not %r" % (shard,)) from None
    if not (isinstance(i, int) and isinstance(n, int) and 0 <= i < n):
        raise ValueError("shard=(%r, %r): need 0 <= index < count" % (i, n))
    return i, n


def _read_options(prefix=None, start=None, end=None, limit=None, family=None,
                  all_versions=False, max_row_bytes=None, ranges=None, keys=None, column=None,
                  parallel_scans=1, shard=None, ordered=True, split_keys=None,
                  retry_timeout=None, task_index=None, num_tasks=None, plan=None,
                  shuffle_ranges=None, seed=0, epoch=0, what="Reader"):
    """The C read options of a Reader (or a plan, an export) and the Python
    objects they point into, which must live as long as the options."""
    if max_row_bytes is not None and not 0 < max_row_bytes < 2 ** 64:
        raise ValueError("max_row_bytes must be a positive byte count, not %r"
                         % (max_row_bytes,))
    if not isinstance(parallel_scans, int) or not 1 <= parallel_scans <= 256:
        raise ValueError("parallel_scans must be 1 to 256, not %r" % (parallel_scans,))
    if ranges is not None and keys is not None:
        raise ValueError("ranges and keys are exclusive")
    if retry_timeout is not None and not retry_timeout > 0:
        raise ValueError("retry_timeout must be a positive number of seconds, not %r"
                         % (retry_timeout,))
    if shuffle_ranges is not None and not (isinstance(shuffle_ranges, int)
                                           and 1 <= shuffle_ranges <= 65536):
        raise ValueError("shuffle_ranges must be 1 to 65536, not %r" % (shuffle_ranges,))
    for name, v in (("seed", seed), ("epoch", epoch)):
        if not isinstance(v, int) or not 0 <= v < 1 << 64:
            raise ValueError("%s must be an integer in [0, 2**64), not %r" % (name, v))
    shard_index, num_shards = _shard(shard, task_index, num_tasks)
    limit = _args.size(limit, "limit")
    keep = [_b(prefix, "prefix"), _b(start, "start"), _b(end, "end"),
            _args.text(family, "family"), _b(column, "column")]
    p, s, e, f, col = keep
    o = _ReadOptions(prefix=p, prefix_len=len(p) if p else 0, start_key=s,
                     start_key_len=len(s) if s else 0, end_key=e,
                     end_key_len=len(e) if e else 0, rows_limit=limit or 0,
                     all_versions=1 if all_versions else 0, family=f,
                     max_row_bytes=max_row_bytes or 0, column=col,
                     parallel_scans=parallel_scans, shard_index=shard_index,
                     num_shards=num_shards, unordered=0 if ordered else 1,
                     retry_timeout_ms=int(retry_timeout * 1000) if retry_timeout else 0,
                     shuffle_ranges=shuffle_ranges or 0, shuffle_seed=seed, shuffle_epoch=epoch)
    if p == b"":
        o.prefix = None  # an empty prefix is every row
    if keys is not None:
        ptrs, lens, kept = _key_array(list(keys), "keys")
        keep += [ptrs, lens, kept]
        o.keys, o.key_lens, o.n_keys = ptrs, lens, len(kept)
    if ranges is not None:
        arr, kept = _range_array(list(ranges))
        keep += [arr, kept]
        o.ranges, o.n_ranges = arr, len(kept) // 2
    if split_keys is not None:
        ptrs, lens, kept = _key_array(list(split_keys), "split_keys")
        keep += [ptrs, lens, kept]
        o.split_keys, o.split_key_lens, o.n_split_keys = ptrs, lens, len(kept)
    if isinstance(plan, str) and plan == "sample":
        if num_shards > 1 and keys is None and split_keys is None:
            import warnings
            warnings.warn("%s(plan='sample'): shard %d of %d cuts the rows at its own "
                          "SampleRowKeys answer; workers that get different answers lose or "
                          "repeat rows without an error (pass a plan from "
                          "tfrec.bigtable.plan())" % (what, shard_index, num_shards),
                          RuntimeWarning, stacklevel=3)
        o.sample_split = 1
    elif plan is not None:
        if split_keys is not None and (shuffle_ranges or 0) < 2:
            raise ValueError("plan and split_keys are exclusive")
        plan = SplitPlan.of(plan)
        keep.append(plan)
        o.plan = plan._handle()
    elif num_shards > 1 and keys is None and split_keys is None:
        raise ValueError(
            "%s(shard=(%d, %d)) needs the split plan every worker is given: make it once with "
            "tfrec.bigtable.plan(project, instance, table, %d, prefix=...) and pass plan= (a "
            "SplitPlan, or the file it was saved to) to each worker; workers that each ask "
            "SampleRowKeys may lose or repeat rows (plan='sample' accepts that risk)"
            % (what, shard_index, num_shards, num_shards))
    return o, keep


class SplitPlan:
    """A split plan (include/tfrec/bigtable_plan.h): where num_shards workers
    cut a row set, made once and given to every worker, so that their shares
    cover every row exactly once. tfrec.bigtable.plan() makes one;
    SplitPlan.load(path) / .save(path) read and write its file (local or
    gs://), SplitPlan.from_bytes(b) / .text its bytes. It pickles as its
    text, so it can be sent to worker processes. Reader(plan=), Dataset(plan=)
    and export(plan=) refuse a plan made for another table, row set or
    shard count."""

    def __init__(self, handle):
        self._h = handle

    @classmethod
    def of(cls, plan):
        """A SplitPlan from a SplitPlan, its bytes, or the path of its file."""
        if isinstance(plan, SplitPlan):
            return plan
        if isinstance(plan, (bytes, bytearray, memoryview)):
            return cls.from_bytes(bytes(plan))
        if isinstance(plan, (str, os.PathLike)):
            return cls.load(plan)
        raise TypeError("plan must be a SplitPlan, its bytes or a path, not %s"
                        % type(plan).__name__)

    @classmethod
    def from_bytes(cls, text):
        text = bytes(text)
        h = BtPlanHandle()
        rc = lib.tfrec_bt_plan_parse(byref(h), text, len(text))
        if rc < 0:
            _raise(rc)
        return cls(h)

    @classmethod
    def load(cls, path):
        h = BtPlanHandle()
        name = os.fsencode(path)
        rc = lib.tfrec_bt_plan_read(byref(h), None, name)
        if rc < 0:
            _raise(rc)
        return cls(h)

    def save(self, path):
        name = os.fsencode(path)
        rc = lib.tfrec_bt_plan_write(self._handle(), None, name)
        if rc < 0:
            _raise(rc)

    def _handle(self):
        if self._h is None:
            raise ValueError("the split plan is closed")
        return self._h

    @property
    def text(self):
        p, n = c_void_p(), c_size_t()
        lib.tfrec_bt_plan_text(self._handle(), byref(p), byref(n))
        return string_at(p.value, n.value)

    @property
    def id(self):
        """The plan's CRC32C, which part files record."""
        return lib.tfrec_bt_plan_id(self._handle())

    @property
    def num_shards(self):
        return lib.tfrec_bt_plan_num_shards(self._handle())

    @property
    def table(self):
        return lib.tfrec_bt_plan_table(self._handle()).decode("utf-8", "replace")

    def shard(self, i):
        """(start, end) of shard i's window: bytes, b"" for an open side."""
        r = _Range()
        rc = lib.tfrec_bt_plan_shard(self._handle(), i, byref(r))
        if rc < 0:
            _raise(rc)
        return (string_at(r.start, r.start_len) if r.start_len else b"",
                string_at(r.end, r.end_len) if r.end_len else b"")

    def __reduce__(self):
        return (SplitPlan.from_bytes, (self.text,))

    def __eq__(self, other):
        return isinstance(other, SplitPlan) and self.text == other.text

    def __hash__(self):
        return hash(self.text)

    def __repr__(self):
        return "<SplitPlan %08x: %d shards of %s>" % (self.id, self.num_shards, self.table)

    def __del__(self):
        if getattr(self, "_h", None) is not None:
            lib.tfrec_bt_plan_free(self._h)
            self._h = None


def plan(project, instance, table, num_shards, *, prefix=None, start=None, end=None,
         ranges=None, split_keys=None, endpoint=None, app_profile_id=None, rpc_timeout_ms=None,
         credentials_file=None, ca_bundle_file=None, tls=False, user_project=None):
    """Plan num_shards shares of the rows (prefix, [start, end) or ranges, as
    Reader takes them) of table, from the table's SampleRowKeys or from
    split_keys: a SplitPlan to save or pass (pickled) to every worker's
    Reader(plan=, shard=), Dataset(plan=, shard=) or export(plan=, shard=)."""
    if not isinstance(num_shards, int) or not 1 <= num_shards <= 65536:
        raise ValueError("num_shards must be 1 to 65536, not %r" % (num_shards,))
    o, keep = _read_options(prefix=prefix, start=start, end=end, ranges=ranges,
                            split_keys=split_keys, what="plan")
    o.num_shards = num_shards
    client = _Client(project, instance, endpoint, None, app_profile_id, rpc_timeout_ms,
                     credentials_file, ca_bundle_file, tls, user_project)
    try:
        h = BtPlanHandle()
        rc = lib.tfrec_bt_plan_create(byref(h), client.h, _args.text(table, "table"), byref(o))
        if rc < 0:
            _raise(rc)
    finally:
        client.close()
    del keep
    return SplitPlan(h)


class Reader(Closing):
    """Iterate over rows in key order: all rows, those starting with prefix,
    those in [start, end), the union of ranges (pairs (start, end), or dicts
    with start_open / end_closed), or exactly the rows of keys (an empty list
    reads nothing). Latest cell of each column only unless all_versions;
    family restricts to one column family, family and column to one column.

    parallel_scans=N splits the rows into N ranges of about equal size
    (SampleRowKeys, or split_keys) read by N concurrent streams; rows still
    come in key order unless ordered=False (then key order only within each
    range; Row.range says which). task_index=i, num_tasks=n (or shard=(i, n),
    the same) reads task i's share of n: contiguous ranges, so the tasks'
    rows taken by task index are all the rows in key order. Every worker
    must cut at the same keys: pass plan= (a SplitPlan from
    tfrec.bigtable.plan(), made once, or the path of its file) or
    split_keys; without them a split reader raises ValueError, and
    plan="sample" lets each worker plan from its own SampleRowKeys (with a
    RuntimeWarning: shares may overlap or leave rows out).
    shuffle_ranges=N cuts this reader's share into N ranges read in an
    order that depends only on (seed, epoch), parallel_scans at a time,
    rows as they arrive (docs/bigtable.md, "Shuffled reads"); the cuts are
    split_keys when given (with plan= too), else keys spread evenly between
    the share's bounds, never SampleRowKeys.
    A stream that breaks with a retryable status is resumed after its last
    row. A row larger than max_row_bytes (default 256 MiB, Bigtable's own
    limit; counted as the memory it takes, about 150 bytes per cell on top
    of its bytes) stops the scan with a BigtableError naming the row."""

    _h = None  # until __init__ succeeds: __del__ needs it

    def __init__(self, project, instance, table, *, prefix=None, start=None, end=None,
                 limit=None, family=None, all_versions=False, endpoint=None,
                 app_profile_id=None, rpc_timeout_ms=None, credentials_file=None,
                 ca_bundle_file=None, tls=False, user_project=None, max_row_bytes=None,
                 ranges=None, keys=None, column=None, parallel_scans=1, shard=None,
                 ordered=True, split_keys=None, retry_timeout=None, task_index=None,
                 num_tasks=None, plan=None, shuffle_ranges=None, seed=0, epoch=0):
        table = _args.text(table, "table")
        self._closed = False  # by close(), not by reaching the end
        o, self._keep = _read_options(
            prefix=prefix, start=start, end=end, limit=limit, family=family,
            all_versions=all_versions, max_row_bytes=max_row_bytes, ranges=ranges, keys=keys,
            column=column, parallel_scans=parallel_scans, shard=shard, ordered=ordered,
            split_keys=split_keys, retry_timeout=retry_timeout, task_index=task_index,
            num_tasks=num_tasks, plan=plan, shuffle_ranges=shuffle_ranges, seed=seed,
            epoch=epoch)
        self._client = _Client(project, instance, endpoint, None, app_profile_id, rpc_timeout_ms,
                     credentials_file, ca_bundle_file, tls, user_project)
        h = BtReaderHandle()
        rc = lib.tfrec_bt_reader_open(byref(h), self._client.h, table, byref(o))
        if rc < 0:
            self._client.close()
            _raise(rc)
        self._h = h
        self._stats = None

    def __iter__(self):
        if self._closed:
            raise ValueError("bigtable.Reader is closed")
        return self

    def __next__(self):
        if self._h is None:
            if self._closed:
                raise ValueError("bigtable.Reader is closed")
            raise StopIteration  # the scan ended (or failed) earlier
        row = _Row()
        rc = lib.tfrec_bt_reader_next(self._h, byref(row))
        if rc == C.TFREC_END:
            self._release()
            raise StopIteration
        if rc < 0:
            msg = lib.tfrec_bt_reader_errmsg(self._h)
            self._release()
            _raise(rc, msg)
        cells = []
        for i in range(row.ncells):
            c = row.cells[i].contents
            cells.append(Cell(c.family.decode("utf-8", "replace"),
                              string_at(c.qualifier, c.qualifier_len) if c.qualifier_len else b"",
                              c.timestamp_micros,
                              string_at(c.value, c.value_len) if c.value_len else b"",
                              _cell_labels(c)))
        return Row(string_at(row.key, row.key_len), cells, row.range)

    def _value_batches(self):
        """Batches of the values of the reader's column (opened with family
        and column), each an iterator of bytes: one call into the library
        per batch, the bytes sliced out by map() in C. Once values turn out
        large on average, one call per value instead, copied once (as the
        file reader does)."""
        buf = _BatchBuffer()
        nxt = lib.tfrec_bt_reader_next_values
        while self._h is not None:
            rc = nxt(self._h, buf.h, _VALUE_BATCH_VALUES, _VALUE_BATCH_BYTES)
            if rc == C.TFREC_END:
                self._release()
                return
            if rc < 0:
                self._fail(rc)
            values, _, large, _ = _batch_records(buf, False)
            yield values
            if large:
                yield self._large_values()
                return

    def _large_values(self):
        rc = yield from _one_call_each(lib.tfrec_bt_reader_next_value, self._h)
        if rc == C.TFREC_END:
            self._release()
            return
        self._fail(rc)

    def _fail(self, rc):
        msg = lib.tfrec_bt_reader_errmsg(self._h)
        self._release()
        _raise(rc, msg)

    @stats_method
    def stats(self):
        """The scan's figures as a ReadStats dict (rows, bytes, ranges,
        samples, streams, resumed, paused): so far, or the final ones once
        the scan ended or was closed."""
        if self._h is None:
            return dict(self._stats or {})
        st = _ReadStats()
        lib.tfrec_bt_reader_stats_get(self._h, byref(st))
        return {n: getattr(st, n) for n, _ in _ReadStats._fields_[1:]}

    def close(self):
        """Release the scan; using the reader afterwards raises ValueError."""
        self._closed = True
        self._release()

    def _release(self):
        if self._h is not None:
            self._stats = self.stats()
            lib.tfrec_bt_reader_free(self._h)
            self._h = None
            self._client.close()

    def __del__(self):
        if self._h is not None:
            self._release()


class Dataset:
    """The records stored in one column of a row prefix, for training loops:

        ds = tfrec.bigtable.Dataset("p", "i", "imagenet", prefix=b"train_",
                                    parallel_scans=4, shard=(rank, world), parse=True,
                                    shuffle_ranges=256, shuffle_buffer=10000, seed=1)
        for epoch in range(3):
            ds.set_epoch(epoch)
            for example in ds:          # {feature: [values]}
                ...

    Each iteration is one pass (a new scan). Yields the latest value of
    family:column of each row as bytes, or with parse=True the tf.Example
    it holds as a dict. parallel_scans, shard=(i, n) (or task_index=i,
    num_tasks=n), ordered and the row set options (prefix, start/end,
    ranges, keys, limit, split_keys, plan) are those of Reader. Rows without
    that column are not in the scan (the server filters by column). A
    dataset split with shard=(i, n) needs the same plan in every worker:
    plan=tfrec.bigtable.plan(...) made once (a SplitPlan pickles, or save it
    and pass the path), or split_keys; plan="sample" lets each worker cut
    at its own SampleRowKeys answer, with a RuntimeWarning (rows may be lost
    or repeated). shard="auto" is the job's task identity
    (tfrec.task_identity(): TF_CONFIG, CLUSTER_SPEC, RANK/WORLD_SIZE, the
    Indexed Job), resolved where the dataset is iterated: inside a PyTorch
    DataLoader worker, worker w of W takes share i*W+w of n*W, so the plan
    is made for n*W shards there
    (docs/training.md).

    A Bigtable scan has no random access; for training, shuffle_ranges=N
    cuts the worker's share into N ranges read in a random order (new each
    epoch, the same for the same seed and epoch), parallel_scans of them
    interleaved at a time, and shuffle_buffer=M yields each record from a
    buffer of M at a random place (seeded the same way). Every epoch yields
    every record of the share exactly once. The ranges are cut at
    split_keys when given (pass keys spread over your key space, e.g. every
    1000th loader key: they work with plan= too), else evenly between the
    share's bounds, which suits keys that fill their key space evenly;
    docs/bigtable.md, "Shuffled reads", measures the result. Iterating
    yields the epoch set_epoch() chose (0 at first, then one more after
    each complete pass)."""

    def __init__(self, project, instance, table, *, prefix=b"train_", family="tfexample",
                 column=b"example", parse=False, shuffle_ranges=None, shuffle_buffer=None,
                 seed=0, **reader_options):
        if "all_versions" in reader_options:
            raise ValueError("Dataset reads the latest cell only; use Reader for all versions")
        if "epoch" in reader_options:
            raise ValueError("Dataset chooses the epoch with set_epoch()")
        if shuffle_ranges is not None and not (isinstance(shuffle_ranges, int)
                                               and 1 <= shuffle_ranges <= 65536):
            raise ValueError("shuffle_ranges must be 1 to 65536, not %r" % (shuffle_ranges,))
        if not isinstance(seed, int) or not 0 <= seed < 1 << 64:
            raise ValueError("seed must be an integer in [0, 2**64), not %r" % (seed,))
        if shuffle_buffer is not None and not (isinstance(shuffle_buffer, int)
                                               and shuffle_buffer >= 1):
            raise ValueError("shuffle_buffer must be a positive record count, not %r"
                             % (shuffle_buffer,))
        self._args = (project, instance, table)
        self._opts = dict(reader_options, prefix=prefix, family=family, column=column,
                          shuffle_ranges=shuffle_ranges, seed=seed)
        self._parse = bool(parse)
        self._buffer = shuffle_buffer or 0
        self._seed = seed
        self._epoch = 0
        fam = _args.text(family, "family")
        self._family = fam.decode("utf-8") if isinstance(fam, bytes) else fam
        self._column = _b(column, "column")
        if not self._family or not self._column:
            raise ValueError("Dataset needs a family and a column")
        self._last_stats = {}

    @stats_method
    def stats(self):
        """The last finished pass's ReadStats dict ({} before the first)."""
        return dict(self._last_stats)

    def set_epoch(self, epoch):
        """Choose the epoch the next iteration yields (its shuffle order)."""
        if not isinstance(epoch, int) or not 0 <= epoch < 1 << 64:
            raise ValueError("epoch must be a non-negative integer, not %r" % (epoch,))
        self._epoch = epoch

    def __iter__(self):
        from .example import Example
        epoch = self._epoch
        with Reader(*self._args, epoch=epoch, **self._opts) as r:
            # many values per library call (tfrec_bt_reader_next_values)
            values = chain.from_iterable(r._value_batches())
            if self._buffer > 1:
                values = _shuffle_buffer(values, self._buffer, self._seed, epoch)
            if self._parse:
                for v in values:
                    yield Example.parse(v).to_dict()
            else:
                yield from values
            self._last_stats = r.stats()
        if self._epoch == epoch:
            self._epoch = epoch + 1


def _shuffle_buffer(values, size, seed, epoch):
    """values through a buffer of size: each one out from a random place."""
    import random
    rng = random.Random("tfrec.bigtable %d %d" % (seed, epoch))
    buf = []
    for v in values:
        if len(buf) < size:
            buf.append(v)
            continue
        i = rng.randrange(size)
        out, buf[i] = buf[i], v
        yield out
    rng.shuffle(buf)
    yield from buf


_MISSING_CELL = {"error": 0, "skip": 1}


def export_output_name(output, shard_index=0, num_shards=1, parallel_scans=1,
                       output_shards=False, i=0):
    """The name export() gives output i of task shard_index of num_shards
    (the library's tfrec_bt_export_output_name, as bt2tfrec names them)."""
    out = os.fsencode(output)
    n = lib.tfrec_bt_export_output_name(None, 0, out, shard_index, num_shards, parallel_scans,
                                        1 if output_shards else 0, i)
    buf = create_string_buffer(n + 1)
    lib.tfrec_bt_export_output_name(buf, n + 1, out, shard_index, num_shards, parallel_scans,
                                    1 if output_shards else 0, i)
    return os.fsdecode(buf.value)


def export_part_name(output, shard_index=0, num_shards=1):
    """The part file export() writes for task shard_index of num_shards."""
    out = os.fsencode(output)
    n = lib.tfrec_bt_export_part_name(None, 0, out, shard_index, num_shards)
    buf = create_string_buffer(n + 1)
    lib.tfrec_bt_export_part_name(buf, n + 1, out, shard_index, num_shards)
    return os.fsdecode(buf.value)


def export(project, instance, table, output, *, prefix=b"train_", family="tfexample",
           column=b"example", missing_cell="error", compression=None, output_shards=False,
           keys_output=None, part_file=True, endpoint=None, app_profile_id=None,
           rpc_timeout_ms=None, credentials_file=None, ca_bundle_file=None, tls=False,
           user_project=None, **read_options):
    """Export rows into TFRecord files, one record per row (the latest cell
    of family:column), in key order: the library's tfrec_bt_export, the loop
    bt2tfrec runs, so the same rows give the same bytes. read_options are
    Reader's row set and split options (start, end, ranges, keys, limit,
    parallel_scans, shard / task_index + num_tasks, plan, split_keys,
    retry_timeout). Outputs: output itself, output-iiiii-of-nnnnn for task i
    of n, or one per parallel scan with output_shards (export_output_name).
    A row without the cell raises BigtableError naming the row
    (missing_cell="error"), or is skipped and counted (missing_cell="skip").
    Unless part_file=False the task writes its part file
    (export_part_name): its share, row count and each output's size and
    CRC32C, which check_export() verifies across the tasks. Returns the
    stats dict (rows, bytes, rows_skipped, outputs, seconds, ranges,
    samples, streams, resumed) with "outputs_names" and "part_file"."""
    if missing_cell not in _MISSING_CELL:
        raise ValueError("missing_cell must be 'error' or 'skip', not %r" % (missing_cell,))
    ro, keep = _read_options(prefix=prefix, what="export", **read_options)
    out = os.fsencode(output)
    names = [out, _args.text(family, "family"), _b(column, "column"),
             os.fsencode(keys_output) if keys_output is not None else None]
    eo = _ExportOptions(family=names[1], column=names[2],
                        missing_cell=_MISSING_CELL[missing_cell],
                        compression=_compression_code(compression, False),
                        output_shards=1 if output_shards else 0, keys_output=names[3],
                        no_part_file=0 if part_file else 1)
    st = _ExportStats()
    client = _Client(project, instance, endpoint, None, app_profile_id, rpc_timeout_ms,
                     credentials_file, ca_bundle_file, tls, user_project)
    try:
        rc = lib.tfrec_bt_export(client.h, _args.text(table, "table"), out, byref(ro), byref(eo),
                                 byref(st))
        if rc < 0:
            _raise(rc)
    finally:
        client.close()
    del keep
    d = {n: getattr(st, n) for n, _ in _ExportStats._fields_[1:]}
    i, n = ro.shard_index, ro.num_shards
    par = ro.parallel_scans
    d["output_names"] = [export_output_name(output, i, n, par, output_shards, k)
                         for k in range(par if output_shards else 1)]
    d["part_file"] = export_part_name(output, i, n) if part_file and output != "-" else None
    return d


def check_export(parts, plan=None):
    """Check the part files of an export's tasks (a list of names, or a glob
    pattern): every task present once, their shares tiling the row set with
    no gap or overlap, and every output there with its recorded size and
    CRC32C (read through). plan (a SplitPlan or its path), when given, must
    be the plan they ran. Returns {"tasks", "rows", "bytes", "outputs"};
    raises BigtableError (code TFREC_E_STATE, .report: one line per
    problem, each naming the task to run again) otherwise."""
    if isinstance(parts, (str, os.PathLike)):
        parts = _paths.data_glob(os.fspath(parts))
    names = [os.fsencode(p) for p in parts]
    if not names:
        raise BigtableError("check_export: no part files", C.TFREC_E_NOT_FOUND)
    arr = (c_char_p * len(names))(*names)
    pl = SplitPlan.of(plan) if plan is not None else None
    res = _CheckResult()
    rc = lib.tfrec_bt_export_check(None, arr, len(names), pl._handle() if pl else None,
                                   byref(res))
    report = string_at(res.report).decode("utf-8", "replace") if res.report else ""
    if res.report:
        lib.tfrec_bt_free(res.report)
    if rc < 0:
        err = error_for(rc, cls=BigtableError)
        err.report = report
        raise err
    return {"tasks": res.tasks, "rows": res.rows, "bytes": res.bytes, "outputs": res.outputs}


__all__ = ["Writer", "Reader", "Dataset", "Row", "Cell", "FailedRow", "LoadProgress", "row_key",
           "key_width", "SplitPlan", "plan", "export", "check_export", "export_output_name",
           "export_part_name", "WriterStats", "ReadStats"]
