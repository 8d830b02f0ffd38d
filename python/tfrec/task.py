"""Splitting a long job into deterministic tasks (include/tfrec/task.h).

A job (shards to convert, records to load, key ranges to export) runs as
`count` tasks; task `index` does the contiguous slice task_share(units,
index, count) of the job's units. The slices of one job are disjoint, cover
every unit and differ in size by at most one, so the union of the tasks'
outputs is what one process writes. See docs/scale-out.md.
"""

import operator
from ctypes import POINTER, byref, c_int, c_uint32, c_uint64

from ._lib import _proto, lib
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
