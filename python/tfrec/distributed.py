"""Long tfrec jobs on a Dask cluster: one Dask task per task share.

    import distributed, tfrec.distributed as td
    client = distributed.Client("scheduler:8786")
    manifest = td.convert_images(client, "/data/raw", "gs://bucket/imagenet")
    stats = td.load_bigtable(client, "proj", "inst", "imagenet", "gs://bucket/imagenet/train-*")
    files = td.export_bigtable(client, "proj", "inst", "imagenet", "/data/out/train",
                               num_records=stats["records_read"])

Each job is split into num_tasks deterministic shares (tfrec.task_share,
include/tfrec/task.h): task i of n does exactly what `imagenet2tfrec
--task_index=i --num_tasks=n` (or tfrec2bt, bt2tfrec) does, so the union of
the tasks' outputs is one process's output, and a task re-run after its
worker died rewrites the same files and rows. The functions below submit the
tasks (keys "tfrec-convert-3-of-8-<run>"), print "converted 5/8 tasks" as
they finish, and raise TaskFailedError naming the first task that failed
(after Dask's retries), cancelling the rest. Everything that touches data
runs on the workers: the client only needs this package importable.

The task functions (convert_task, merge_task, load_task, export_task, ...)
are module-level so that workers import them; they are usable alone, for
another scheduler. Dask is imported lazily, here only: `import tfrec`
never needs it. docs/scale-out.md has the task model and the sizing.
"""

import os
import time
import uuid

from . import _args
from . import task as _task

# Tasks per worker thread when num_tasks is not given: enough that a slow
# task does not leave the other threads idle at the end, few enough that
# per-task start-up (listing the input, opening connections) stays small.
TASKS_PER_THREAD = 4

# What the converter plans by default (imagenet2tfrec's --train_shards /
# --validation_shards): more tasks than shards would do nothing.
_DEFAULT_TRAIN_SHARDS, _DEFAULT_VALIDATION_SHARDS = 1024, 128


class TaskFailedError(RuntimeError):
    """A task failed on its worker (after its retries). .kind ("convert",
    "load", ...), .task_index, .num_tasks, .key (the Dask key) and .cause
    (the worker's exception) say which and why."""

    def __init__(self, kind, task_index, num_tasks, key, cause):
        self.kind, self.task_index, self.num_tasks = kind, task_index, num_tasks
        self.key, self.cause = key, cause
        super().__init__("%s task %d of %d (%s) failed: %s: %s"
                         % (kind, task_index, num_tasks, key, type(cause).__name__, cause))


def _dask():
    try:
        import distributed
    except ImportError as e:
        raise ImportError("tfrec.distributed needs Dask's distributed package "
                          "(Debian: python3-distributed; pip: distributed)") from e
    return distributed


def default_num_tasks(client, limit=None):
    """TASKS_PER_THREAD tasks per worker thread of the cluster (at least 1),
    at most limit."""
    threads = sum(client.nthreads().values()) or 1
    n = TASKS_PER_THREAD * threads
    return max(1, min(n, limit) if limit else n)


def _count(num_tasks, client, limit):
    if num_tasks is None:
        return default_num_tasks(client, limit)
    if isinstance(num_tasks, bool) or not isinstance(num_tasks, int) \
            or not 1 <= num_tasks <= _task.MAX_TASKS:
        raise ValueError("num_tasks must be 1 to %d, not %r" % (_task.MAX_TASKS, num_tasks))
    return num_tasks


def _report(progress, verb, done, total, result):
    if progress is True:
        print("%s %d/%d tasks" % (verb, done, total), flush=True)
    elif callable(progress):
        progress(done, total, result)


def _run(client, kind, verb, fn, args, retries, progress):
    """Submit fn(*args[i], i, n) for every task i of n = len(args); results
    in task order. The first failure cancels the others and raises."""
    dd = _dask()
    n = len(args)
    run = uuid.uuid4().hex[:8]
    futures = []
    for i, a in enumerate(args):
        key = "tfrec-%s-%d-of-%d-%s" % (kind, i, n, run)
        futures.append(client.submit(fn, *a, i, n, key=key, retries=retries, pure=False))
    index = {f.key: i for i, f in enumerate(futures)}
    results = [None] * n
    done = 0
    try:
        for f in dd.as_completed(futures):
            i = index[f.key]
            if f.status != "finished":
                raise TaskFailedError(kind, i, n, f.key, _failure(f))
            results[i] = f.result()
            done += 1
            _report(progress, verb, done, n, results[i])
    finally:
        pending = [f for f in futures if f.status not in ("finished", "error")]
        if pending:
            client.cancel(pending)
    return results


def _failure(future):
    try:
        return future.exception()
    except BaseException as e:  # cancelled, or the scheduler lost it
        return e


def _one(client, kind, fn, args, retries):
    """One helper task (table creation, manifest merge) on a worker."""
    key = "tfrec-%s-%s" % (kind, uuid.uuid4().hex[:8])
    f = client.submit(fn, *args, key=key, retries=retries, pure=False)
    _dask().wait(f)
    if f.status != "finished":
        raise TaskFailedError(kind, 0, 1, key, _failure(f))
    return f.result()


# ---- conversion (imagenet2tfrec --task_index/--num_tasks, then --merge_manifests)

def convert_task(raw_data_dir, output_dir, opts, on_task_start, on_task_progress, index, count):
    """Task index of count of a conversion: its shards and its manifest part
    (output_dir/manifest-task-IIIII-of-NNNNN.json), which it returns."""
    if on_task_start is not None:
        on_task_start("convert", index, count)
    progress = None
    if on_task_progress is not None:
        def progress(done, total, _bytes_in, _bytes_out):
            on_task_progress("convert", index, count, done, total)
    from .imagenet import convert_images as convert
    return convert(raw_data_dir, output_dir, task_index=index, num_tasks=count,
                   progress=progress, **opts)


def merge_task(output_dir, manifest_path):
    """The merge step: output_dir/manifest.json (or manifest_path) from the
    parts, every shard checked present once; returns the merged manifest."""
    from .imagenet import merge_manifests
    return merge_manifests(output_dir, manifest_path=manifest_path)


def convert_images(client, raw_data_dir, output_dir, *, num_tasks=None, retries=3,
                   progress=True, manifest_path=None, on_task_start=None,
                   on_task_progress=None, listing=None, **opts):
    """Convert an image tree as num_tasks Dask tasks, then merge their
    manifests (on a worker); returns the merged manifest (a dict, as
    tfrec.convert_images returns). opts are tfrec.convert_images' options
    (train_shards, seed, verify, ...); every task gets the same ones, which
    is what makes the shares agree. num_threads defaults to 1 per task here:
    the parallelism comes from the tasks (one per worker thread at a time).
    num_tasks defaults to TASKS_PER_THREAD per worker thread, at most one
    per shard. retries: Dask re-runs a failed task up to this many times (a
    task whose worker died is rescheduled on its own, up to the scheduler's
    allowed-failures). progress: True prints "converted 5/8 tasks", a
    callable gets (done, total, task result), False is quiet.
    on_task_start(kind, index, count), if given, runs on the worker before
    each task attempt, and on_task_progress(kind, index, count, done, total)
    a few times a second while it converts (from the first image on; an
    exception in it fails the attempt). Both are for instrumentation and
    must be picklable.

    listing: the input tree is listed once, here on the client, into this
    listing file (default output_dir/listing.txt; it must be readable by
    every worker: a shared file system or gs://), and every task plans from
    it instead of listing the tree itself, so all tasks convert the same
    images even if the tree changes while they run; False: each task scans.
    The tree layouts only (not tarballs or CSV).

    output_dir must be one place for every worker: a shared file system or
    gs://. Raises TaskFailedError naming the task and the worker's error."""
    if "task_index" in opts or "num_tasks" in opts:
        raise TypeError("convert_images: each task's task_index/num_tasks are set here")
    if "listing" in opts:
        raise TypeError("convert_images: pass listing= by name")
    tree = (opts.get("layout", "imagenet") in ("imagenet", "folders") and not opts.get("train_tar")
            and not opts.get("validation_tar"))
    if listing is None and tree:
        listing = output_dir.rstrip("/") + "/listing.txt"
    if listing:
        from .imagenet import write_listing
        from .paths import _is_local
        if _is_local(output_dir):
            os.makedirs(output_dir, exist_ok=True)
        write_listing(raw_data_dir, listing, layout=opts.get("layout", "imagenet"),
                      validation_labels_file=opts.get("validation_labels_file"),
                      extensions=opts.get("extensions"))
        opts["listing"] = listing
    shards = (opts.get("train_shards") or _DEFAULT_TRAIN_SHARDS) + \
        (opts.get("validation_shards") or _DEFAULT_VALIDATION_SHARDS)
    n = _count(num_tasks, client, shards)
    opts.setdefault("num_threads", 1)
    _run(client, "convert", "converted", convert_task,
         [(raw_data_dir, output_dir, opts, on_task_start, on_task_progress)] * n, retries,
         progress)
    return _one(client, "merge", merge_task, (output_dir, manifest_path), retries)


# ---- Bigtable load (tfrec2bt --task_index/--num_tasks)

_LOAD_OPTIONS = ("reversed_keys", "compression", "max_rows_per_sec", "progress_interval")
_TABLE_OPTIONS = ("family", "column", "endpoint", "admin_endpoint", "app_profile_id",
                  "rpc_timeout_ms")


def ensure_table_task(project, instance, table, table_opts):
    """Create the table and its family if missing (once, before the loads:
    concurrent creations by every task would race)."""
    from . import bigtable
    bigtable.Writer(project, instance, table, create_table=True, **table_opts).close()
    return True


def load_task(project, instance, table, source_glob, row_prefix, num_records, load_opts,
              writer_opts, on_task_start, on_task_progress, index, count):
    """Task index of count of a load: its share of the records of the files
    matching source_glob, with the keys one process gives them. Returns
    {"task_index", "num_tasks", "load": load stats, "writer": writer stats}."""
    if on_task_start is not None:
        on_task_start("load", index, count)
    progress = None
    if on_task_progress is not None:
        def progress(p):
            on_task_progress("load", index, count, p.rows_acked, p.records_read)
    from . import bigtable
    with bigtable.Writer(project, instance, table, **writer_opts) as w:
        w.write_tfrecords(source_glob, row_prefix=row_prefix, num_records=num_records,
                          task_index=index, num_tasks=count, progress=progress, **load_opts)
    return {"task_index": index, "num_tasks": count, "load": w.load_stats, "writer": w.stats()}


# Per-task figures that mean nothing summed (each task's own position),
# and figures every task has the same value of (or, for seconds, the tasks
# ran side by side: the longest one).
_PER_TASK = ("next_index", "share_begin", "share_end", "total_source")
_SAME_OR_MAX = ("seconds", "total_records")


def _sum(dicts):
    out = {}
    for d in dicts:
        for k, v in (d or {}).items():
            if isinstance(v, bool) or not isinstance(v, (int, float)) or k in _PER_TASK:
                continue
            out[k] = max(out.get(k, 0), v) if k in _SAME_OR_MAX else out.get(k, 0) + v
    return out


def load_bigtable(client, project, instance, table, source_glob, *, num_tasks=None,
                  row_prefix="train_", num_records=None, retries=3, progress=True,
                  create_table=False, on_task_start=None, on_task_progress=None,
                  **writer_opts):
    """Load the records of the files matching source_glob into table as
    num_tasks Dask tasks (each a disjoint, balanced share of the records,
    keyed row_prefix + global index exactly as one tfrec2bt process keys
    them). writer_opts: tfrec.bigtable.Writer's options (family, column,
    batch_rows, batch_bytes, max_inflight, timestamp_micros, endpoint, ...)
    plus write_tfrecords' reversed_keys, compression, max_rows_per_sec,
    progress_interval. on_task_start(kind, index, count) and
    on_task_progress(kind, index, count, rows_acked, records_read) run on
    the worker (every progress_interval seconds), as for convert_images.
    create_table: create the table / family first (one task, before the
    loads). Returns the tasks' load and writer figures summed
    (records_read, rows_acked, ...; "seconds" is the longest task) with
    "writer": the summed writer stats and "tasks": each task's own dict.

    A retried task writes its whole share again. Every task writes its cells
    with one timestamp chosen here for the whole job (the time of this call,
    in milliseconds, unless timestamp_micros is given), so a rewrite
    replaces the cells it had written instead of adding a second version;
    timestamp_micros=-1 asks for server time and gives up that guarantee."""
    load_opts = {k: writer_opts.pop(k) for k in _LOAD_OPTIONS if k in writer_opts}
    if not writer_opts.get("timestamp_micros"):
        writer_opts["timestamp_micros"] = int(time.time() * 1000) * 1000
    if create_table:
        table_opts = {k: writer_opts[k] for k in _TABLE_OPTIONS if k in writer_opts}
        _one(client, "create-table", ensure_table_task, (project, instance, table, table_opts),
             retries)
    n = _count(num_tasks, client, num_records if num_records else None)
    results = _run(client, "load", "loaded", load_task,
                   [(project, instance, table, source_glob, row_prefix, num_records, load_opts,
                     writer_opts, on_task_start, on_task_progress)] * n, retries, progress)
    total = _sum(r["load"] for r in results)
    total["writer"] = _sum(r["writer"] for r in results)
    total["tasks"] = results
    return total


# ---- Bigtable export (bt2tfrec --task_index/--num_tasks)

def export_split_keys(prefix, num_records, num_tasks, reversed_keys=False):
    """Where the tasks' shares of a table loaded by tfrec2bt / load_bigtable
    (keys prefix + zero-padded index, num_records of them) begin: the keys of
    records task_share(num_records, i, num_tasks)[0] for i >= 1. Computed,
    not sampled, so every task plans the same shares."""
    from . import bigtable
    width = bigtable.key_width(num_records)
    keys = []
    for i in range(1, num_tasks):
        begin = _task.task_share(num_records, i, num_tasks)[0]
        if 0 < begin < num_records:
            keys.append(bigtable.row_key(prefix, begin, width, reversed_keys))
    return sorted(set(keys))


def _split_keys(keys):
    """A list of split keys as bytes: str (UTF-8) or bytes-like each."""
    return [_args.key(k, "split_keys[%d]" % i) for i, k in enumerate(keys)]


def export_task(project, instance, table, output_prefix, read_opts, family, column,
                compression, on_task_start, index, count):
    """Task index of count of an export: its share of the rows (read_opts
    carries the plan every task is given, and missing_cell), the latest family:column value of
    each in key order, into output_prefix-IIIII-of-NNNNN, with its part file
    output_prefix.part-IIIII-of-NNNNN: tfrec.bigtable.export, the loop
    bt2tfrec runs. Returns {"path", "records", "rows_skipped", "part_file"}."""
    if on_task_start is not None:
        on_task_start("export", index, count)
    from . import bigtable
    path = bigtable.export_output_name(output_prefix, index, count)
    if "://" not in path and os.path.dirname(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)  # this worker may be its first user
    st = bigtable.export(project, instance, table, output_prefix, family=family, column=column,
                         compression=compression, shard=(index, count), **read_opts)
    return {"path": path, "records": st["rows"], "rows_skipped": st["rows_skipped"],
            "part_file": st["part_file"]}


def check_task(parts, plan_text):
    """The merge step of an export: check_export over the tasks' part files."""
    from . import bigtable
    return bigtable.check_export(parts, bigtable.SplitPlan.from_bytes(plan_text))


def export_bigtable(client, project, instance, table, output_prefix, *, num_tasks=None,
                    prefix=b"train_", num_records=None, split_keys=None, family="tfexample",
                    column=b"example", compression=None, retries=3, progress=True,
                    on_task_start=None, missing_cell="error", check=True, **read_opts):
    """Export the rows starting with prefix (family:column, latest cell) as
    num_tasks Dask tasks; task i writes output_prefix-iiiii-of-nnnnn (local
    path on a shared file system, or gs://) and its part file. Returns the
    list of files in task order; the concatenation of their records is the
    rows in key order.

    The tasks must cut the rows at the same keys: one split plan is made
    here, before the tasks, and given to each (tfrec.bigtable.plan): from
    num_records (the table was loaded by tfrec2bt / load_bigtable with this
    prefix: the cuts are computed from the keys, export_split_keys), from
    split_keys (sorted keys, one fewer than the tasks for balanced shares),
    or with split_keys="sample" from the table's SampleRowKeys, asked once
    here. A row without the cell fails its task (missing_cell="error") or
    is skipped (missing_cell="skip"). With check (default) the part files
    are checked at the end on a worker (tfrec.bigtable.check_export: shares
    tile the rows, outputs intact), raising TaskFailedError otherwise.
    read_opts: tfrec.bigtable.Reader's (parallel_scans, endpoint,
    app_profile_id, rpc_timeout_ms, ...)."""
    if split_keys is None:
        if num_records is None:
            raise ValueError("export_bigtable needs num_records or split_keys so that every task "
                             "cuts the rows at the same keys (split_keys='sample' plans once from "
                             "the table's SampleRowKeys; see docs/scale-out.md)")
    n = _count(num_tasks, client, None)
    if split_keys is None:
        split_keys = export_split_keys(prefix, num_records, n,
                                       read_opts.pop("reversed_keys", False))
    if isinstance(split_keys, str):
        if split_keys != "sample":
            raise ValueError("split_keys must be a list of keys or 'sample', not %r" % split_keys)
        split_keys = None
    else:
        split_keys = [k.encode("utf-8") if isinstance(k, str) else bytes(k) for k in split_keys]
    from . import bigtable
    conn = {k: read_opts[k] for k in ("endpoint", "app_profile_id", "rpc_timeout_ms")
            if k in read_opts}
    plan = bigtable.plan(project, instance, table, n, prefix=prefix, split_keys=split_keys,
                         **conn)
    read_opts = dict(read_opts, prefix=prefix, plan=plan.text, missing_cell=missing_cell)
    output_prefix = os.fspath(output_prefix)
    results = _run(client, "export", "exported", export_task,
                   [(project, instance, table, output_prefix, read_opts, family,
                     column, compression, on_task_start)] * n, retries, progress)
    if check:
        parts = [r["part_file"] for r in results]
        _one(client, "export-check", check_task, (parts, plan.text), retries)
    return [r["path"] for r in results]


def main(argv=None):
    """python3 -m tfrec.distributed split-keys --prefix=P --num_records=N
    --num_tasks=T: the export_split_keys, one per line (bt2tfrec
    --split_keys_file for T tasks of a table loaded with N records)."""
    import argparse
    import sys
    ap = argparse.ArgumentParser(prog="python3 -m tfrec.distributed")
    sub = ap.add_subparsers(dest="command", required=True)
    sk = sub.add_parser("split-keys", help="where the shares of T export tasks begin")
    sk.add_argument("--prefix", default="train_")
    sk.add_argument("--num_records", type=int, required=True)
    sk.add_argument("--num_tasks", type=int, required=True)
    sk.add_argument("--reversed_keys", action="store_true")
    a = ap.parse_args(argv)
    if a.num_records < 1 or not 1 <= a.num_tasks <= _task.MAX_TASKS:
        ap.error("need --num_records >= 1 and --num_tasks 1 to %d" % _task.MAX_TASKS)
    for k in export_split_keys(a.prefix, a.num_records, a.num_tasks, a.reversed_keys):
        sys.stdout.buffer.write(k + b"\n")
    return 0


__all__ = ["convert_images", "load_bigtable", "export_bigtable", "TaskFailedError",
           "default_num_tasks", "export_split_keys", "convert_task", "merge_task", "load_task",
           "ensure_table_task", "export_task", "check_task", "TASKS_PER_THREAD", "main"]


if __name__ == "__main__":
    raise SystemExit(main())
