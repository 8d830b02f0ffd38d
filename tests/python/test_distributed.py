"""tfrec.distributed on a real Dask cluster (LocalCluster, 2 worker
processes): conversions equal one process's output byte for byte, also
after a worker is killed in the middle of a task; Bigtable loads and exports
through Dask against the official emulator, checked with the `cbt` CLI and
independent TFRecord framing (tfrecord_ref); and the task split itself,
tfrec.task_share, checked as a property over many (units, tasks) pairs."""
# needs: tfrec-image tfrec-bigtable
import logging
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

import tfrecord_ref
from bindings_env import PYTHON_DIR, REPO, load_tfrec_with

sys.path.insert(0, os.path.join(REPO, "tests", "fixtures"))
import make_images  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT, INSTANCE = "daskproj", "daskinst"
OPTS = dict(train_shards=6, validation_shards=2, seed=7)


@pytest.fixture(scope="module")
def tfrec(build_dir):
    return load_tfrec_with(build_dir, "convert_images", "bigtable")


@pytest.fixture(scope="module")
def emulator(bigtable_emulator):
    return bigtable_emulator


@pytest.fixture(scope="module")
def client(tfrec, emulator):
    """Two worker processes, one thread each. They inherit this process's
    environment: the library under test (TFREC_LIBRARY), the emulator's
    address, and PYTHONPATH for tfrec and the test hooks."""
    import distributed
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([PYTHON_DIR, HERE] + ([old] if old else []))
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       dashboard_address=None, silence_logs=logging.CRITICAL)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()
    if old is None:
        del os.environ["PYTHONPATH"]
    else:
        os.environ["PYTHONPATH"] = old


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    root = tmp_path_factory.mktemp("raw")
    assert make_images.cmd_samples(str(root), train=120, validation=24, classes=4, seed=9) == 144
    return root


@pytest.fixture(scope="module")
def one_process(tfrec, samples, tmp_path_factory):
    """The reference: the same conversion in one process, without tasks."""
    out = tmp_path_factory.mktemp("one")
    manifest = tfrec.convert_images(samples, out, **OPTS)
    return out, manifest


def shard_files(out):
    """{relative path: bytes} of every shard file under out."""
    files = {}
    for d, _, names in os.walk(out):
        for n in names:
            if re.search(r"-\d{5}-of-\d{5}$", n):
                p = os.path.join(d, n)
                files[os.path.relpath(p, out)] = open(p, "rb").read()
    return files


def leftovers(out):
    """Anything under out that is neither a shard nor a manifest (staging
    directories and temporary files of killed runs)."""
    odd = []
    for d, dirs, names in os.walk(out):
        odd += [os.path.relpath(os.path.join(d, x), out) for x in dirs
                if x not in ("train", "validation")]
        odd += [os.path.relpath(os.path.join(d, n), out) for n in names
                if not re.search(r"-\d{5}-of-\d{5}$", n) and not n.startswith("manifest")
                and os.path.relpath(os.path.join(d, n), out) != "listing.txt"]
    return odd


def comparable(shards):
    return sorted((dict((k, v) for k, v in s.items() if k != "seconds") for s in shards),
                  key=lambda s: s["file"])


def check_same_as_one_process(out, manifest, one_process):
    ref_out, ref_manifest = one_process
    ref = shard_files(ref_out)
    assert len(ref) == OPTS["train_shards"] + OPTS["validation_shards"]
    assert shard_files(out) == ref  # every shard, byte for byte
    assert comparable(manifest["shards"]) == comparable(ref_manifest["shards"])
    assert sum(s["records"] for s in manifest["shards"]) == 144
    assert leftovers(out) == []


def test_task_share_property(tfrec):
    rnd = random.Random(5)
    pairs = [(u, n) for u in range(0, 40) for n in range(1, 12)]
    pairs += [(rnd.randrange(0, 2 ** 64), rnd.randrange(1, 5000)) for _ in range(200)]
    pairs += [(2 ** 64 - 1, tfrec.task.MAX_TASKS), (10 ** 6, 10 ** 6 - 1), (7, 1000)]
    for units, count in pairs:
        indexes = range(count) if count <= 5000 else \
            sorted({0, 1, count - 2, count - 1} | {rnd.randrange(count) for _ in range(50)})
        shares = {i: tfrec.task_share(units, i, count) for i in indexes}
        for i, (b, e) in shares.items():
            assert 0 <= b <= e <= units
            # contiguous and disjoint: each share starts where the one before ends
            if i + 1 in shares:
                assert shares[i + 1][0] == e
            # balanced: sizes floor(units / count) or one more
            assert units // count <= e - b <= units // count + 1
        if count <= 5000:
            assert shares[0][0] == 0 and shares[count - 1][1] == units  # cover everything
            assert sum(e - b for b, e in shares.values()) == units
    for bad in [(10, 3, 3), (10, 0, 0), (10, -1, 3), (-1, 0, 1), (10, 0, tfrec.task.MAX_TASKS + 1)]:
        with pytest.raises(ValueError):
            tfrec.task_share(*bad)


def test_convert_through_dask_equals_one_process(tfrec, client, samples, one_process, tmp_path,
                                                 capsys):
    from tfrec import distributed as td
    out = tmp_path / "dask"
    manifest = td.convert_images(client, str(samples), str(out), num_tasks=8, **OPTS)
    printed = capsys.readouterr().out.splitlines()
    assert ["converted %d/8 tasks" % i for i in range(1, 9)] == printed
    check_same_as_one_process(out, manifest, one_process)
    # the merged manifest was written where the tools put it
    assert os.path.exists(out / "manifest.json")


def kill_held_attempt(hold, hook, call, before_kill):
    """Run call() in a thread. When the first attempt of the task `hook`
    (a dask_hooks.HoldOnce over the directory `hold`) holds, note
    before_kill(), SIGKILL that attempt's worker, wait for the scheduler to
    start another attempt (which does not hold), then let everything go on.
    Returns ({"value": call's result} or {"error": exception}, the killed
    worker's PID, what before_kill returned)."""
    result = {}

    def run():
        try:
            result["value"] = call()
        except BaseException as e:  # reported by the caller
            result["error"] = e

    t = threading.Thread(target=run)
    t.start()
    try:
        while not hook.attempts() and t.is_alive():
            time.sleep(0.02)
        first = hook.attempts()
        assert first, result.get("error")
        pid = int(first[0].split("-")[1])
        assert pid != os.getpid()
        noted = before_kill()
        os.kill(pid, signal.SIGKILL)
        while len(hook.attempts()) < 2 and t.is_alive():
            time.sleep(0.02)
    finally:
        (hold / "go").write_text("go\n")
        t.join(300)
    assert not t.is_alive()
    return result, pid, noted


def test_killed_worker_task_is_retried(tfrec, client, samples, one_process, tmp_path):
    from tfrec import distributed as td
    import dask_hooks
    hold = tmp_path / "hold"
    hold.mkdir()
    hook = dask_hooks.HoldOnce(str(hold), "convert", 3)
    out = tmp_path / "dask"
    # the worker running task 3 is killed one image into its first shard
    result, pid, staged = kill_held_attempt(
        hold, hook,
        lambda: td.convert_images(client, str(samples), str(out), num_tasks=8, retries=0,
                                  progress=False, on_task_progress=hook, **OPTS),
        lambda: [os.path.join(d, n) for d, _, names in os.walk(out) for n in names])
    assert "error" not in result, result.get("error")
    attempts = hook.attempts()
    assert len(attempts) >= 2 and int(attempts[1].split("-")[1]) != pid
    # retries=0: only the worker's death made Dask run task 3 again
    check_same_as_one_process(out, result["value"], one_process)
    # the killed attempt had begun writing (its staging area held its files)
    # and nothing of it is left
    assert any(".tfrec-staging" in p for p in staged), staged


def test_failed_task_names_itself(tfrec, client, tmp_path):
    from tfrec import distributed as td
    # The listing, written on the client first, finds the tree missing.
    with pytest.raises(tfrec.NotFoundError, match="missing"):
        td.convert_images(client, str(tmp_path / "missing"), str(tmp_path / "out"), num_tasks=2,
                          retries=0, progress=False, **OPTS)
    # Tasks that scan for themselves fail on the workers, naming themselves.
    with pytest.raises(td.TaskFailedError) as e:
        td.convert_images(client, str(tmp_path / "missing"), str(tmp_path / "out"), num_tasks=2,
                          retries=0, progress=False, listing=False, **OPTS)
    assert e.value.kind == "convert" and e.value.num_tasks == 2
    assert "convert task %d of 2" % e.value.task_index in str(e.value)
    assert "missing" in str(e.value)  # the worker's message names the directory
    assert isinstance(e.value.cause, tfrec.Error)


def cbt_cells(addr, table):
    """{row key: number of cells} and {row key: latest value} as cbt reads them
    (`cbt read` prints every cell version of every row)."""
    env = dict(os.environ, BIGTABLE_EMULATOR_HOST=addr)
    out = subprocess.run(["cbt", "-project", PROJECT, "-instance", INSTANCE, "read", table],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    from test_bindings_bigtable import go_unquote
    cells, values, key = {}, {}, None
    for line in out.stdout.splitlines():
        if line.startswith("----"):
            key = None
        elif key is None and line.strip():
            key = line.strip()
            assert key not in cells, "row %s printed twice" % key
            cells[key] = 0
        elif re.match(r"^  \S+:\S*\s+@", line):
            cells[key] += 1
        elif line.startswith("    \"") and key not in values:
            values[key] = go_unquote(line.strip())
    return cells, values


@pytest.fixture(scope="module")
def loaded(tfrec, client, emulator, tmp_path_factory):
    """250 records in 3 files loaded by 4 Dask tasks (250 is not a multiple of 4)."""
    from tfrec import distributed as td
    src = tmp_path_factory.mktemp("src")
    rnd = random.Random(3)
    records = [b"record %03d " % i + rnd.randbytes(rnd.randrange(0, 3000)) for i in range(250)]
    for f, (a, b) in enumerate([(0, 100), (100, 101), (101, 250)]):
        tfrecord_ref.write_records(str(src / ("part-%d" % f)), records[a:b],
                                   "GZIP" if f == 2 else "NONE")
    stats = td.load_bigtable(client, PROJECT, INSTANCE, "loaded", str(src / "part-*"),
                             num_tasks=4, row_prefix="train_", num_records=250,
                             create_table=True, batch_rows=16, progress=False)
    return records, stats


def test_load_through_dask_every_row_once(tfrec, emulator, loaded):
    records, stats = loaded
    assert stats["records_read"] == 250 and stats["rows_acked"] == 250
    assert stats["rows_failed"] == 0 and len(stats["tasks"]) == 4
    assert stats["total_records"] == 250 and "share_begin" not in stats
    # each task's share: [floor(250 * i / 4), floor(250 * (i + 1) / 4))
    assert [(t["load"]["share_begin"], t["load"]["share_end"]) for t in stats["tasks"]] == \
        [(250 * i // 4, 250 * (i + 1) // 4) for i in range(4)]
    assert sorted(t["load"]["rows_acked"] for t in stats["tasks"]) == [62, 62, 63, 63]
    cells, values = cbt_cells(emulator, "loaded")
    # keys padded to the digits of 249, as one process writes them
    assert sorted(cells) == ["train_%03d" % i for i in range(250)]
    assert set(cells.values()) == {1}  # one cell each: no row written twice
    assert values == {"train_%03d" % i: records[i] for i in range(250)}


def test_export_through_dask_every_row_once(tfrec, client, emulator, loaded, tmp_path):
    from tfrec import distributed as td
    records, _ = loaded
    files = td.export_bigtable(client, PROJECT, INSTANCE, "loaded", str(tmp_path / "out" / "exp"),
                               num_tasks=3, prefix="train_", num_records=250, progress=False)
    assert files == [str(tmp_path / "out" / ("exp-%05d-of-00003" % i)) for i in range(3)]
    # each task's outputs and its part file (checked by the merge step)
    assert sorted(os.listdir(tmp_path / "out")) == sorted(
        [os.path.basename(f) for f in files] + ["exp.part-%05d-of-00003" % i for i in range(3)])
    got = [tfrecord_ref.read_records(f) for f in files]
    # the shares of 250 rows in 3: floor(250 * i / 3) .. floor(250 * (i + 1) / 3)
    assert [len(g) for g in got] == [250 * (i + 1) // 3 - 250 * i // 3 for i in range(3)]
    assert [r for g in got for r in g] == records  # key order = record order
    # explicit split keys (not the loader's share boundaries) cut elsewhere, same union
    files = td.export_bigtable(client, PROJECT, INSTANCE, "loaded", str(tmp_path / "b" / "exp"),
                               num_tasks=2, prefix="train_", split_keys=[b"train_200"],
                               progress=False)
    got = [tfrecord_ref.read_records(f) for f in files]
    assert [len(g) for g in got] == [200, 50] and got[0] + got[1] == records
    with pytest.raises(ValueError, match="num_records or split_keys"):
        td.export_bigtable(client, PROJECT, INSTANCE, "loaded", str(tmp_path / "c"))


def test_dask_is_imported_only_by_tfrec_distributed(build_dir):
    code = ("import sys, tfrec\n"
            "assert 'distributed' not in sys.modules and 'dask' not in sys.modules\n"
            "import tfrec.distributed as td\n"
            "assert 'distributed' not in sys.modules  # not until a job is submitted\n"
            "print(td.TASKS_PER_THREAD)\n")
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR,
               TFREC_LIBRARY=os.path.join(build_dir, "libtfrec.so"))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=60)
    assert r.returncode == 0 and r.stdout == "4\n", r.stderr


def test_load_worker_killed_mid_load_rewrites_its_share(tfrec, client, emulator, tmp_path):
    """A worker killed after its task had rows acknowledged: Dask runs the
    task again, which writes its whole share again. The job's one timestamp
    (chosen by load_bigtable, none given here) makes the rewrite replace the
    cells: every row once, one cell each."""
    from tfrec import distributed as td
    import dask_hooks
    records = [b"row %04d" % i for i in range(400)]
    tfrecord_ref.write_records(str(tmp_path / "data-0"), records)
    hold = tmp_path / "hold"
    hold.mkdir()
    hook = dask_hooks.HoldOnce(str(hold), "load", 1, min_done=20)
    # rows of task 1 (records 200..399) are in the table before the kill
    result, _, before = kill_held_attempt(
        hold, hook,
        lambda: td.load_bigtable(
            client, PROJECT, INSTANCE, "rewritten", str(tmp_path / "data-*"), num_tasks=2,
            row_prefix="k", num_records=400, create_table=True, batch_rows=10,
            max_inflight=1, progress_interval=-1, retries=0,
            progress=False, on_task_progress=hook),
        lambda: [k for k in cbt_cells(emulator, "rewritten")[0] if int(k[1:]) >= 200])
    assert "error" not in result, result.get("error")
    assert len(before) >= 20
    assert len(hook.attempts()) >= 2
    stats = result["value"]
    assert stats["rows_acked"] == 400 and stats["rows_failed"] == 0  # the attempts that finished
    cells, values = cbt_cells(emulator, "rewritten")
    assert sorted(cells) == ["k%03d" % i for i in range(400)]
    assert set(cells.values()) == {1}  # rewritten in place, not a second version
    assert values == {"k%03d" % i: records[i] for i in range(400)}
