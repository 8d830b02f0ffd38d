"""Training-job input from Python (docs/training.md): the task identity
(tfrec.task_identity, shard="auto"), PyTorch DataLoader workers and
DistributedSampler over tfrec.Dataset / tfrec.MapDataset, tf.io-style
parsing specs cross-checked against Examples built by python3-protobuf,
and what tf.data.TFRecordDataset takes (globs, compression, batches)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from bindings_env import PYTHON_DIR, load_tfrec

TASK_VARS = ("TF_CONFIG", "CLUSTER_SPEC", "RANK", "WORLD_SIZE", "LOCAL_RANK",
             "JOB_COMPLETION_INDEX", "TFREC_NUM_TASKS")


@pytest.fixture(scope="module")
def tfrec(build_dir):
    return load_tfrec(build_dir)


@pytest.fixture
def clean_env(monkeypatch):
    for v in TASK_VARS:
        monkeypatch.delenv(v, raising=False)
    return monkeypatch


def write_files(tfrec, directory, counts, compression=None, suffix=".tfrecord"):
    """Files of Examples {"id": [f * 1000 + r], "label": [r % 5], "text": [b"f:r"]}."""
    paths = []
    for f, n in enumerate(counts):
        p = os.path.join(str(directory), "part-%02d%s" % (f, suffix))
        with tfrec.TFRecordWriter(p, compression=compression) as w:
            for r in range(n):
                w.write(tfrec.Example({"id": [f * 1000 + r], "label": [r % 5],
                                       "text": [b"%d:%d" % (f, r)]}).serialize())
        paths.append(p)
    return paths


def ids_of(tfrec, records):
    return [tfrec.parse_example(r)["id"][0] for r in records]


def all_ids(counts):
    return sorted(f * 1000 + r for f, n in enumerate(counts) for r in range(n))


# ------------------------------------------------------------ task identity

def test_task_identity_sources(tfrec, clean_env):
    assert tuple(tfrec.task_identity()) == (0, 1, None, "none", "")
    clean_env.setenv("TF_CONFIG", json.dumps({
        "cluster": {"chief": ["c:1"], "worker": ["a:1", "b:1"], "evaluator": ["e:1"]},
        "task": {"type": "worker", "index": 1}}))
    t = tfrec.task_identity()
    assert (t.index, t.count, t.source, t.task_type) == (2, 3, "TF_CONFIG", "worker")
    clean_env.setenv("CLUSTER_SPEC", json.dumps({
        "cluster": {"workerpool0": ["c:1"], "workerpool1": ["a:1", "b:1"]},
        "task": {"type": "workerpool1", "index": 1}}))
    assert tfrec.task_identity()[:2] == (2, 3)  # agreeing sources
    clean_env.setenv("RANK", "0")
    clean_env.setenv("WORLD_SIZE", "3")
    with pytest.raises(tfrec.InvalidArgumentError, match="TF_CONFIG.*RANK/WORLD_SIZE"):
        tfrec.task_identity()
    assert tfrec.task_identity(0, 2)[:2] == (0, 2)  # given values win
    for v in TASK_VARS:
        clean_env.delenv(v, raising=False)
    clean_env.setenv("RANK", "3")
    clean_env.setenv("WORLD_SIZE", "4")
    clean_env.setenv("LOCAL_RANK", "1")
    assert tuple(tfrec.task_identity()) == (3, 4, 1, "torch", "")


def test_shard_auto_splits_like_the_ranks(tfrec, tmp_path, clean_env):
    counts = [30, 0, 11]
    paths = write_files(tfrec, tmp_path, counts)
    seen = []
    for rank in range(3):
        clean_env.setenv("JOB_COMPLETION_INDEX", str(rank))
        clean_env.setenv("TFREC_NUM_TASKS", "3")
        with tfrec.Dataset(paths, shard="auto", shuffle=True, seed=5) as ds:
            got = ids_of(tfrec, ds)
            explicit = tfrec.Dataset(paths, shard=(rank, 3), shuffle=True, seed=5)
            assert got == ids_of(tfrec, explicit)
            assert len(ds) == len(got)
            explicit.close()
        seen += got
    assert sorted(seen) == all_ids(counts)
    clean_env.setenv("TFREC_NUM_TASKS", "2")
    with pytest.raises(tfrec.InvalidArgumentError, match="JOB_COMPLETION_INDEX=2"):
        tfrec.Dataset(paths, shard="auto")
    with pytest.raises(ValueError, match="auto"):
        tfrec.Dataset(paths, shard="everything")


def test_dataloader_workers_split_the_share(tfrec, tmp_path, clean_env):
    tud = pytest.importorskip("torch.utils.data")
    counts = [23, 17, 9]
    paths = write_files(tfrec, tmp_path, counts)
    seen = []
    for rank in range(2):
        clean_env.setenv("RANK", str(rank))
        clean_env.setenv("WORLD_SIZE", "2")
        ds = tfrec.Dataset(paths, shard="auto", shuffle=True, seed=9)
        assert isinstance(ds, tud.IterableDataset) and isinstance(ds, tfrec.Dataset)
        share = ids_of(tfrec, ds)  # a pass in this process first: its threads run here
        ds.set_epoch(0)
        loader = tud.DataLoader(ds, batch_size=None, num_workers=2)
        got = [tfrec.parse_example(bytes(r))["id"][0] for r in loader]
        assert sorted(got) == sorted(share)  # the workers read the share once
        ds.close()
        seen += got
    assert sorted(seen) == all_ids(counts)


def test_map_dataset_with_distributed_sampler_across_processes(tfrec, tmp_path, build_dir):
    """Three processes (RANK/WORLD_SIZE set, as torchrun sets them) read two
    epochs through DistributedSampler(shuffle=True): every record once per
    epoch across the ranks, in an order that changes with the epoch."""
    pytest.importorskip("torch")
    counts = [40, 3, 28]
    paths = write_files(tfrec, tmp_path, counts)
    for p in paths:
        tfrec.index_file(p)
    script = r"""
import json, os, sys
import torch.utils.data as tud
import tfrec
ds = tfrec.MapDataset(sys.argv[1:], features={"id": tfrec.FixedLenFeature([], "int64")})
me = tfrec.task_identity()
sampler = tud.DistributedSampler(ds, num_replicas=me.count, rank=me.index, shuffle=True, seed=7)
loader = tud.DataLoader(ds, sampler=sampler, batch_size=4)
epochs = []
for epoch in range(2):
    sampler.set_epoch(epoch)
    epochs.append([int(i) for batch in loader for i in batch["id"]])
print(json.dumps(epochs))
"""
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR,
               TFREC_LIBRARY=os.path.join(build_dir, "libtfrec.so"), WORLD_SIZE="3")
    for v in ("TF_CONFIG", "CLUSTER_SPEC", "JOB_COMPLETION_INDEX", "TFREC_NUM_TASKS"):
        env.pop(v, None)
    procs = [subprocess.Popen([sys.executable, "-c", script] + paths,
                              env=dict(env, RANK=str(r), LOCAL_RANK=str(r)),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for r in range(3)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
        results.append(json.loads(out))
    total = sum(counts)  # 71: DistributedSampler pads to 72, one record twice
    for epoch in range(2):
        got = [i for r in results for i in r[epoch]]
        assert len(got) == 3 * -(-total // 3)
        assert sorted(set(got)) == all_ids(counts)
        assert len(got) - len(set(got)) == 3 * -(-total // 3) - total
    assert results[0][0] != results[0][1]


def test_map_dataset_by_position(tfrec, tmp_path):
    counts = [5, 0, 3]
    paths = write_files(tfrec, tmp_path, counts)
    ds = tfrec.MapDataset(str(tmp_path / "part-*.tfrecord"))
    assert len(ds) == 8
    assert ids_of(tfrec, [ds[k] for k in range(8)]) == all_ids(counts)
    assert ids_of(tfrec, [ds[-1]]) == [2002]
    with pytest.raises(IndexError):
        ds[8]
    ds.close()


# ------------------------------------------------------- parsing with a spec

@pytest.fixture(scope="module")
def examples(pb2):
    """Serialized Examples built by protobuf, with features missing here and there."""
    out = []
    for k in range(6):
        ex = pb2.Example()
        f = ex.features.feature
        f["label"].int64_list.value.append(k)
        f["xy"].float_list.value.extend([k + 0.5, -k])
        f["tags"].bytes_list.value.extend([b"t%d" % j for j in range(k % 3)])
        if k % 2 == 0:
            f["weight"].float_list.value.append(k / 4)
        f["ids"].int64_list.value.extend(range(k))
        out.append(ex.SerializeToString())
    return out


SPEC = None


def spec(tfrec):
    return {"label": tfrec.FixedLenFeature([], "int64"),
            "xy": tfrec.FixedLenFeature([2], np.float32),
            "weight": tfrec.FixedLenFeature([], np.float32, default_value=-1.0),
            "tags": tfrec.VarLenFeature(bytes),
            "ids": tfrec.VarLenFeature(np.int64)}


def test_parse_example_with_a_spec(tfrec, examples, pb2):
    for k, data in enumerate(examples):
        got = tfrec.parse_example(data, features=spec(tfrec))
        ex = pb2.Example.FromString(data).features.feature
        assert got["label"] == ex["label"].int64_list.value[0]
        assert got["xy"].dtype == np.float32 and got["xy"].shape == (2,)
        assert list(got["xy"]) == list(ex["xy"].float_list.value)
        want_w = ex["weight"].float_list.value[0] if "weight" in ex else -1.0
        assert got["weight"] == np.float32(want_w)
        assert list(got["tags"]) == list(ex["tags"].bytes_list.value)
        assert got["ids"].dtype == np.int64 and list(got["ids"]) == list(ex["ids"].int64_list.value)
    assert tfrec.parse_example(examples[1]) == {
        "label": [1], "xy": [1.5, -1.0], "tags": [b"t0"], "ids": [0]}


def test_parse_example_batch_is_dense(tfrec, examples, pb2):
    got = tfrec.parse_example_batch(examples, spec(tfrec))
    assert got["label"].tolist() == list(range(6))
    assert got["xy"].shape == (6, 2)
    assert got["weight"].tolist() == [0.0, -1.0, 0.5, -1.0, 1.0, -1.0]
    assert got["tags"].shape == (6, 2)  # padded to the longest with b""
    assert got["tags"][2].tolist() == [b"t0", b"t1"] and got["tags"][0].tolist() == [b"", b""]
    assert got["ids"].shape == (6, 5) and got["ids"][3].tolist() == [0, 1, 2, 0, 0]
    for k, data in enumerate(examples):  # the same as one at a time
        one = tfrec.parse_example(data, spec(tfrec))
        assert one["xy"].tolist() == got["xy"][k].tolist()


def test_parse_errors_name_the_feature(tfrec, examples):
    with pytest.raises(tfrec.InvalidArgumentError, match="'weight' is missing"):
        tfrec.parse_example(examples[1], {"weight": tfrec.FixedLenFeature([], "float32")})
    with pytest.raises(tfrec.InvalidArgumentError, match="'xy': 2 values.*needs 3"):
        tfrec.parse_example(examples[1], {"xy": tfrec.FixedLenFeature([3], "float32")})
    with pytest.raises(tfrec.InvalidArgumentError, match="'label'.*int64.*float32"):
        tfrec.parse_example(examples[1], {"label": tfrec.FixedLenFeature([], "float32")})
    with pytest.raises(tfrec.ParseError, match="record 1 of 2"):
        tfrec.parse_example_batch([examples[0], b"\xff\xff"], spec(tfrec))
    with pytest.raises(ValueError, match="dtype"):
        tfrec.FixedLenFeature([], "int32")


# ------------------------------------------- what tf.data.TFRecordDataset takes

def test_globs_lists_and_batches(tfrec, tmp_path):
    counts = [10, 7]
    write_files(tfrec, tmp_path, counts)
    ds = tfrec.Dataset(str(tmp_path / "part-*.tfrecord"), batch_size=4,
                       features={"id": tfrec.FixedLenFeature([], "int64"),
                                 "text": tfrec.FixedLenFeature([], bytes)})
    batches = list(ds)
    assert [len(b["id"]) for b in batches] == [4, 4, 4, 4, 1] and len(ds) == 5
    assert sorted(int(i) for b in batches for i in b["id"]) == all_ids(counts)
    assert batches[0]["text"].dtype == object
    ds.close()
    ds = tfrec.Dataset([str(tmp_path / "part-01.tfrecord")], batch_size=3, drop_remainder=True)
    assert [len(b) for b in ds] == [3, 3] and len(ds) == 2
    ds.close()
    with pytest.raises(FileNotFoundError, match="no file matches"):
        tfrec.Dataset(str(tmp_path / "nothing-*"))


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_compressed_files(tfrec, tmp_path, compression):
    counts = [9, 4]
    paths = write_files(tfrec, tmp_path, counts, compression=compression, suffix=".gz")
    ds = tfrec.Dataset(paths, compression_type=compression)
    assert ids_of(tfrec, ds) == all_ids(counts) and len(ds) == 13
    parts = [ids_of(tfrec, tfrec.Dataset(paths, compression_type=compression, shard=(i, 3)))
             for i in range(3)]
    assert sorted(sum(parts, [])) == all_ids(counts)
    assert [len(p) for p in parts] == [5, 4, 4]
    with pytest.raises(ValueError, match="shuffle"):
        tfrec.Dataset(paths, compression_type=compression, shuffle=True)
    with pytest.raises(ValueError, match="compression_type"):
        tfrec.Dataset(paths, compression_type="BZ2")
    assert ids_of(tfrec, tfrec.tf_record_iterator(paths[1], compression)) == all_ids([0, 4])


def test_tf_record_iterator_plain(tfrec, tmp_path):
    p = write_files(tfrec, tmp_path, [6])[0]
    assert ids_of(tfrec, tfrec.tf_record_iterator(p)) == list(range(6))


def test_dataset_pickles_as_its_arguments(tfrec, tmp_path, clean_env):
    """What a spawned DataLoader worker gets: the same files, shard and epoch."""
    import pickle
    counts = [12, 5]
    paths = write_files(tfrec, tmp_path, counts)
    ds = tfrec.Dataset(paths, shuffle=True, seed=3, shard=(1, 2))
    ds.set_epoch(4)
    copy = pickle.loads(pickle.dumps(ds))
    assert isinstance(copy, tfrec.Dataset) and copy is not ds
    assert ids_of(tfrec, copy) == ids_of(tfrec, ds)
    ds.set_epoch(4)
    assert ids_of(tfrec, copy) != ids_of(tfrec, ds)  # the copy went on to epoch 5
    ds.close()
    copy.close()
    m = tfrec.MapDataset(paths)
    assert [m[k] for k in range(17)] == [pickle.loads(pickle.dumps(m))[k] for k in range(17)]
