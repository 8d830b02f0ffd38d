"""tfrec.bigtable.Dataset(shard="auto") against the Bigtable emulator: the
job's task identity (RANK/WORLD_SIZE here) picks each worker's share of a
split plan, the shares cover every row once, and a split without a plan is
refused as with shard=(i, n)."""
# needs: tfrec-bigtable

import pytest

import tfrecord_ref
from test_bindings_bigtable import INSTANCE, PROJECT

N = 120
TABLE = "auto_shards"
TASK_VARS = ("TF_CONFIG", "CLUSTER_SPEC", "RANK", "WORLD_SIZE", "LOCAL_RANK",
             "JOB_COMPLETION_INDEX", "TFREC_NUM_TASKS")


@pytest.fixture(scope="module")
def tfrec(bigtable_tfrec):
    return bigtable_tfrec


@pytest.fixture(scope="module")
def loaded(tfrec, bigtable_emulator, tmp_path_factory):
    d = tmp_path_factory.mktemp("auto")
    records = [b"rec-%d" % i for i in range(N)]
    tfrecord_ref.write_records(str(d / "part-00000"), records)
    with tfrec.bigtable.Writer(PROJECT, INSTANCE, TABLE, create_table=True) as w:
        w.write_tfrecords(str(d / "part-*"), num_records=N)
    return records


@pytest.fixture
def clean_env(monkeypatch):
    for v in TASK_VARS:
        monkeypatch.delenv(v, raising=False)
    return monkeypatch


def test_shard_auto_reads_each_row_once(tfrec, loaded, clean_env):
    plan = tfrec.bigtable.plan(PROJECT, INSTANCE, TABLE, 3, prefix="train_")
    seen = []
    for rank in range(3):
        clean_env.setenv("CLUSTER_SPEC",
                         '{"cluster": {"workerpool0": ["c"], "workerpool1": ["a", "b"]}, '
                         '"task": {"type": "%s", "index": %d}}'
                         % ("workerpool0" if rank == 0 else "workerpool1", max(0, rank - 1)))
        got = list(tfrec.bigtable.Dataset(PROJECT, INSTANCE, TABLE, shard="auto", plan=plan))
        # a share may be empty: the plan cuts at the emulator's SampleRowKeys,
        # which it answers at random; exactly once is what counts (below)
        seen += got
    assert sorted(seen) == sorted(loaded)


def test_shard_auto_needs_a_plan(tfrec, loaded, clean_env):
    clean_env.setenv("RANK", "1")
    clean_env.setenv("WORLD_SIZE", "2")
    with pytest.raises(ValueError, match="split plan"):
        list(tfrec.bigtable.Dataset(PROJECT, INSTANCE, TABLE, shard="auto"))
    plan = tfrec.bigtable.plan(PROJECT, INSTANCE, TABLE, 3, prefix="train_")
    with pytest.raises(tfrec.Error, match="3|shard"):  # a plan for another shard count
        list(tfrec.bigtable.Dataset(PROJECT, INSTANCE, TABLE, shard="auto", plan=plan))
    clean_env.delenv("RANK")
    clean_env.delenv("WORLD_SIZE")  # one task: the whole table, no plan needed
    assert len(list(tfrec.bigtable.Dataset(PROJECT, INSTANCE, TABLE, shard="auto"))) == N
