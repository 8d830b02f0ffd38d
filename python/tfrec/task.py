"""Splitting a long job into deterministic tasks (include/tfrec/task.h).

A job (shards to convert, records to load, key ranges to export) runs as
`count` tasks; task `index` does the contiguous slice task_share(units,
index, count) of the job's units. The slices of one job are disjoint, cover
every unit and differ in size by at most one, so the union of the tasks'
outputs is what one process writes. See docs/scale-out.md.
"""

import operator
import sys
from collections import namedtuple
from ctypes import (POINTER, byref, c_char, c_char_p, c_int, c_int32, c_size_t, c_uint32,
                    c_uint64)

from ._lib import _Sized, _proto, lib
from .errors import error_for

TASK_INDEX_ENV = "JOB_COMPLETION_INDEX"
TASK_COUNT_ENV = "TFREC_NUM_TASKS"
TFREC_TASK_MAX = 1000000  # checked against task.h by tests/python/test_c_layout.py
MAX_TASKS = TFREC_TASK_MAX

_proto("tfrec_task_share", c_int, c_uint64, c_uint32, c_uint32, POINTER(c_uint64),
       POINTER(c_uint64))
_proto("tfrec_task_from_env", c_int, POINTER(c_uint32), POINTER(c_uint32))


def _int(value, name, limit):
    try:
        n = operator.index(value)
    except TypeError:
        raise TypeError("%s must be an int, not %s" % (name, type(value).__name__)) from None
    if not 0 <= n < limit:
        raise ValueError("%s must be 0 to %d, not %d" % (name, limit - 1, n))
    return n


def task_share(units, index, count):
    """(begin, end): the units [begin, end) of 0..units-1 that task index of
    count does. ValueError unless 0 <= index < count <= MAX_TASKS."""
    units = _int(units, "units", 2 ** 64)
    count = _int(count, "count", MAX_TASKS + 1)
    index = _int(index, "index", 2 ** 32)
    if count == 0 or index >= count:
        raise ValueError("task index %d of %d: need 0 <= index < count" % (index, count))
    begin, end = c_uint64(), c_uint64()
    rc = lib.tfrec_task_share(units, index, count, byref(begin), byref(end))
    if rc < 0:
        raise error_for(rc, "tfrec_task_share(%d, %d, %d)" % (units, index, count))
    return begin.value, end.value


def task_from_env():
    """(index, count) from JOB_COMPLETION_INDEX and TFREC_NUM_TASKS; (0, 1)
    when neither is set. InvalidArgumentError naming the variable otherwise."""
    index, count = c_uint32(), c_uint32()
    rc = lib.tfrec_task_from_env(byref(index), byref(count))
    if rc < 0:
        raise error_for(rc)
    return index.value, count.value


__all__ = ["task_share", "task_from_env", "TASK_INDEX_ENV", "TASK_COUNT_ENV", "MAX_TASKS"]


class _TaskOptions(_Sized):
    _c_type_ = "tfrec_task_options"
    _fields_ = [("struct_size", c_size_t), ("has_index", c_int), ("index", c_uint32),
                ("has_count", c_int), ("count", c_uint32), ("index_name", c_char_p),
                ("count_name", c_char_p)]


class _TaskIdentity(_Sized):
    _c_type_ = "tfrec_task_identity"
    _fields_ = [("struct_size", c_size_t), ("index", c_uint32), ("count", c_uint32),
                ("local_rank", c_int32), ("source", c_int32), ("task_type", c_char * 32)]


_proto("tfrec_task_resolve", c_int, POINTER(_TaskOptions), POINTER(_TaskIdentity))
_proto("tfrec_task_source_name", c_char_p, c_int)

_SOURCES = {0: "none", 1: "explicit", 2: "TF_CONFIG", 3: "CLUSTER_SPEC", 4: "torch",
            5: "indexed_job"}


class TaskIdentity(namedtuple("TaskIdentity", "index count local_rank source task_type")):
    """Which of count readers this process is. local_rank: LOCAL_RANK with
    the torch source, else None; source: "none", "explicit", "TF_CONFIG",
    "CLUSTER_SPEC", "torch" or "indexed_job"; task_type: TF_CONFIG's or
    CLUSTER_SPEC's task type ("chief", "worker", "workerpool1", ...) or ""."""


def task_identity(index=None, count=None):
    """This process's task identity in a training job (tfrec_task_resolve):
    index and count when given, else TF_CONFIG (the chief first, then the
    workers), CLUSTER_SPEC (Vertex AI worker pools), RANK/WORLD_SIZE
    (torch.distributed), JOB_COMPLETION_INDEX/TFREC_NUM_TASKS; (0, 1) when
    none is set. InvalidArgumentError naming both sources when two disagree.
    See docs/training.md."""
    o = _TaskOptions(index_name=b"index", count_name=b"count")
    if index is not None:
        o.has_index, o.index = 1, _int(index, "index", MAX_TASKS)
    if count is not None:
        o.has_count, o.count = 1, _int(count, "count", MAX_TASKS + 1)
    out = _TaskIdentity()
    rc = lib.tfrec_task_resolve(byref(o), byref(out))
    if rc < 0:
        raise error_for(rc)
    return TaskIdentity(out.index, out.count, out.local_rank if out.local_rank >= 0 else None,
                        _SOURCES.get(out.source, str(out.source)),
                        out.task_type.decode("utf-8", "replace"))


def _torch_worker():
    """(id, num_workers) of the PyTorch DataLoader worker this code runs in,
    else (0, 1). torch is not imported here: a DataLoader worker has it."""
    data = sys.modules.get("torch.utils.data")
    info = data.get_worker_info() if data is not None else None
    return (info.id, info.num_workers) if info is not None else (0, 1)


def resolve_shard(shard, split_workers=True):
    """(index, count) for a dataset's shard= argument: a pair as given, or
    "auto": task_identity(), then split further among the PyTorch
    DataLoader workers of this process when split_workers (worker w of W
    takes share index * W + w of count * W: the workers' shares together
    are exactly the process's share)."""
    if isinstance(shard, str):
        if shard != "auto":
            raise ValueError("shard must be (index, count) or 'auto', not %r" % (shard,))
        ident = task_identity()
        i, n = ident.index, ident.count
    else:
        try:
            i, n = shard
        except (TypeError, ValueError):
            raise ValueError("shard must be (index, count) or 'auto', not %r" % (shard,)) from None
        if not (isinstance(i, int) and isinstance(n, int) and 0 <= i < n):
            raise ValueError("shard must be (index, count) with 0 <= index < count, not %r"
                             % (shard,))
    if split_workers:
        w, nw = _torch_worker()
        i, n = i * nw + w, n * nw
    return i, n


__all__ += ["task_identity", "TaskIdentity", "resolve_shard"]
