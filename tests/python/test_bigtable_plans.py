"""Split plans through the Python bindings against the official emulator
(whose SampleRowKeys answers at random): tfrec.bigtable.plan() made once and
given to Reader(shard=, plan=) / Dataset(shard=, plan=) workers in one
process and in several processes covers every row exactly once; a split
without a plan refuses; plan="sample" warns; a plan for another shard count
or prefix is refused; tfrec.bigtable.export() and bt2tfrec write the same
bytes, with a row lacking the cell under both policies; check_export()
names the task whose output was altered."""
# needs: tfrec-bigtable

import multiprocessing
import os
import pickle
import subprocess
import warnings

import pytest

import tfrecord_ref
from test_bindings_bigtable import INSTANCE, PROJECT

N = 600
TABLE = "plans"


@pytest.fixture(scope="module")
def tfrec(bigtable_tfrec):
    return bigtable_tfrec


@pytest.fixture(scope="module")
def loaded(tfrec, bigtable_emulator, tmp_path_factory):
    d = tmp_path_factory.mktemp("plans")
    records = [b"rec-%d-" % i + bytes(range(i % 200)) for i in range(N)]
    tfrecord_ref.write_records(str(d / "part-00000"), records)
    with tfrec.bigtable.Writer(PROJECT, INSTANCE, TABLE, create_table=True) as w:
        w.write_tfrecords(str(d / "part-*"), num_records=N)
    return records


def keys():
    return [b"train_%03d" % i for i in range(N)]


def test_plan_object_save_load_pickle(tfrec, loaded, tmp_path):
    p = tfrec.bigtable.plan(PROJECT, INSTANCE, TABLE, 4, prefix="train_")
    assert p.num_shards == 4 and p.table.endswith("/tables/" + TABLE)
    assert p.text.startswith(b"tfrec-bigtable-split-plan 1\n")
    p.save(tmp_path / "plan")
    q = tfrec.bigtable.SplitPlan.load(tmp_path / "plan")
    r = pickle.loads(pickle.dumps(p))
    assert p == q == r and p.id == q.id
    windows = [p.shard(i) for i in range(4)]
    assert windows[0][0] == b"train_" and windows[-1][1] == b"train`"
    assert all(windows[i][1] == windows[i + 1][0] for i in range(3))


def read_share(args):
    """One worker: its share's keys (run in this process or a spawned one)."""
    import tfrec
    plan_text, i, n, dataset = args
    if dataset:
        ds = tfrec.bigtable.Dataset(PROJECT, INSTANCE, TABLE, prefix=b"train_", shard=(i, n),
                                    plan=plan_text)
        return list(ds)
    with tfrec.bigtable.Reader(PROJECT, INSTANCE, TABLE, prefix=b"train_", shard=(i, n),
                               plan=tfrec.bigtable.SplitPlan.from_bytes(plan_text),
                               parallel_scans=2) as r:
        return [row.key for row in r]


@pytest.mark.parametrize("n", [3, 7])
def test_workers_in_one_process_cover_every_row_once(tfrec, loaded, n):
    for trial in range(3):
        p = tfrec.bigtable.plan(PROJECT, INSTANCE, TABLE, n, prefix=b"train_")
        got = [read_share((p.text, i, n, False)) for i in range(n)]
        assert [k for g in got for k in g] == keys(), "trial %d" % trial
        vals = [read_share((p.text, i, n, True)) for i in range(n)]
        assert [v for g in vals for v in g] == loaded


def test_workers_in_several_processes_cover_every_row_once(tfrec, loaded, tmp_path):
    p = tfrec.bigtable.plan(PROJECT, INSTANCE, TABLE, 4, prefix=b"train_")
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        got = pool.map(read_share, [(p.text, i, 4, False) for i in range(4)])
        vals = pool.map(read_share, [(p.text, i, 4, True) for i in range(4)])
    assert [k for g in got for k in g] == keys()
    assert [v for g in vals for v in g] == loaded


def test_split_without_plan_refused_sample_warns(tfrec, loaded):
    for cls in (tfrec.bigtable.Reader, tfrec.bigtable.Dataset):
        with pytest.raises(ValueError, match=r"needs the split plan.*tfrec.bigtable.plan"):
            r = cls(PROJECT, INSTANCE, TABLE, prefix=b"train_", shard=(0, 3))
            iter(r).__next__()
    with pytest.warns(RuntimeWarning, match="may|lose or repeat"):
        with tfrec.bigtable.Reader(PROJECT, INSTANCE, TABLE, prefix=b"train_", shard=(0, 3),
                                   plan="sample") as r:
            list(r)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one worker of one: nothing to warn about
        tfrec.bigtable.Reader(PROJECT, INSTANCE, TABLE, prefix=b"train_").close()


def test_plan_for_another_count_or_prefix_refused(tfrec, loaded):
    p = tfrec.bigtable.plan(PROJECT, INSTANCE, TABLE, 4, prefix=b"train_")
    with pytest.raises(tfrec.BigtableError, match="has 4 shards, this read is split into 3"):
        tfrec.bigtable.Reader(PROJECT, INSTANCE, TABLE, prefix=b"train_", shard=(0, 3), plan=p)
    with pytest.raises(tfrec.BigtableError, match="same prefix"):
        tfrec.bigtable.Reader(PROJECT, INSTANCE, TABLE, prefix=b"validation_", shard=(0, 4),
                              plan=p)
    with pytest.raises(tfrec.BigtableError, match="checksum mismatch"):
        tfrec.bigtable.SplitPlan.from_bytes(p.text.replace(b"shards 4", b"shards 5"))


def bt2tfrec(build_dir, *args):
    return subprocess.run([os.path.join(build_dir, "bin", "bt2tfrec"), "--project=" + PROJECT,
                           "--bigtable_instance=" + INSTANCE, "--bigtable_table=" + TABLE,
                           "--quiet"] + list(args), capture_output=True, text=True, timeout=120)


def test_cli_and_python_exports_identical(tfrec, loaded, build_dir, tmp_path):
    (tmp_path / "cli").mkdir()
    (tmp_path / "py").mkdir()
    p = tfrec.bigtable.plan(PROJECT, INSTANCE, TABLE, 3, prefix=b"train_")
    p.save(tmp_path / "plan")
    for i in range(3):
        out = bt2tfrec(build_dir, "--output=%s" % (tmp_path / "cli" / "x"), "--num_shards=3",
                       "--shard_index=%d" % i, "--split_plan=%s" % (tmp_path / "plan"))
        assert out.returncode == 0, out.stderr
        st = tfrec.bigtable.export(PROJECT, INSTANCE, TABLE, str(tmp_path / "py" / "x"),
                                   shard=(i, 3), plan=p)
        name = os.path.basename(st["output_names"][0])
        assert name == "x-%05d-of-00003" % i
        assert (tmp_path / "cli" / name).read_bytes() == (tmp_path / "py" / name).read_bytes()
        part = "x.part-%05d-of-00003" % i
        assert (tmp_path / "cli" / part).read_bytes() == (tmp_path / "py" / part).read_bytes()
    res = tfrec.bigtable.check_export(str(tmp_path / "py" / "x.part-*"), plan=p)
    assert res == {"tasks": 3, "rows": N, "bytes": sum(map(len, loaded)), "outputs": 3}
    cat = b"".join((tmp_path / "py" / ("x-%05d-of-00003" % i)).read_bytes() for i in range(3))
    assert tfrecord_ref.parse_records(cat) == loaded
    # an output rewritten with the same size: the CRC32C check names its task
    f = tmp_path / "py" / "x-00001-of-00003"
    b = bytearray(f.read_bytes())
    b[20] ^= 0xff
    f.write_bytes(bytes(b))
    with pytest.raises(tfrec.BigtableError) as e:
        tfrec.bigtable.check_export(str(tmp_path / "py" / "x.part-*"))
    assert "task 1 of 3: output" in e.value.report and "run task 1 again" in e.value.report


def test_row_without_cell_both_policies_cli_and_python(tfrec, loaded, build_dir, tmp_path):
    with tfrec.bigtable.Writer(PROJECT, INSTANCE, TABLE) as w:
        w.put(b"train_300x", b"zz", column=b"other")
    try:
        out = bt2tfrec(build_dir, "--output=%s" % (tmp_path / "cli-err"))
        assert out.returncode == 1 and "row train_300x has no tfexample:example cell" in out.stderr
        assert not (tmp_path / "cli-err").exists()
        with pytest.raises(tfrec.BigtableError, match="row train_300x has no tfexample:example"):
            tfrec.bigtable.export(PROJECT, INSTANCE, TABLE, str(tmp_path / "py-err"))
        assert not (tmp_path / "py-err").exists()
        out = bt2tfrec(build_dir, "--output=%s" % (tmp_path / "cli-skip"), "--missing_cell=skip")
        assert out.returncode == 0, out.stderr
        st = tfrec.bigtable.export(PROJECT, INSTANCE, TABLE, str(tmp_path / "py-skip"),
                                   missing_cell="skip")
        assert st["rows"] == N and st["rows_skipped"] == 1
        assert (tmp_path / "cli-skip").read_bytes() == (tmp_path / "py-skip").read_bytes()
        assert tfrecord_ref.read_records(str(tmp_path / "py-skip")) == loaded
    finally:
        subprocess.run(["cbt", "-project", PROJECT, "-instance", INSTANCE, "deleterow", TABLE,
                        "train_300x"], capture_output=True, timeout=60)
