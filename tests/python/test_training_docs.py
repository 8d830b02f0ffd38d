"""The Python blocks of docs/training.md run as written: the trainers under
the environment each job gives its replicas (Vertex AI's CLUSTER_SPEC, AI
Platform's TF_CONFIG with a master, torchrun's RANK/WORLD_SIZE), with
TRAIN_FILES naming local files, read every record once per epoch across
the replicas; the porting example prints what the page shows."""
import ast
import json
import os
import re
import subprocess
import sys

import pytest

from bindings_env import PYTHON_DIR, REPO, load_tfrec

TASK_VARS = ("TF_CONFIG", "CLUSTER_SPEC", "RANK", "WORLD_SIZE", "LOCAL_RANK",
             "JOB_COMPLETION_INDEX", "TFREC_NUM_TASKS")
COUNTS = [70, 45, 33]  # records per file


def doc_text():
    return open(os.path.join(REPO, "docs", "training.md"), encoding="utf-8").read()


def blocks():
    return re.findall(r"```python\n(.*?)```", doc_text(), re.S)


def block_with(text):
    found = [b for b in blocks() if text in b]
    assert len(found) == 1, text
    return found[0]


@pytest.fixture(scope="module")
def files(build_dir, tmp_path_factory):
    tfrec = load_tfrec(build_dir)
    d = tmp_path_factory.mktemp("train")
    for f, n in enumerate(COUNTS):
        p = str(d / ("train-%05d" % f))
        with tfrec.TFRecordWriter(p) as w:
            for r in range(n):
                w.write(tfrec.Example({"image/encoded": [b"%d:%d" % (f, r)],
                                       "image/class/label": [r % 10]}).serialize())
        tfrec.index_file(p)
    return str(d / "train-*")


def start(build_dir, tmp_path, code, env_vars, name):
    script = tmp_path / name
    script.write_text(code)
    env = {k: v for k, v in os.environ.items() if k not in TASK_VARS}
    env.update(PYTHONPATH=PYTHON_DIR, TFREC_LIBRARY=os.path.join(build_dir, "libtfrec.so"))
    env.update(env_vars)
    return subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)


def outputs(procs):
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=240)
        assert p.returncode == 0, stderr
        out.append(stdout)
    return out


def test_every_block_is_python():
    assert len(blocks()) >= 6
    for b in blocks():
        ast.parse(b)


def test_identity_outside_a_job(build_dir, tmp_path):
    (out,) = outputs([start(build_dir, tmp_path, block_with("me = tfrec.task_identity()\nprint"),
                            {}, "who.py")])
    assert out == "0 1 none\n"


def cluster_spec(pool, index):
    return json.dumps({"cluster": {"workerpool0": ["cmle-training-workerpool0-0:2222"],
                                   "workerpool1": ["w0:2222", "w1:2222"]},
                       "environment": "cloud", "task": {"type": pool, "index": index}})


def tf_config(kind, index):
    return json.dumps({"cluster": {"master": ["m:2222"], "worker": ["w0:2222", "w1:2222"]},
                       "environment": "cloud", "task": {"type": kind, "index": index}})


def test_vertex_and_ai_platform_trainers(build_dir, tmp_path, files):
    code = block_with("examples in 2 epochs")
    replicas = [("CLUSTER_SPEC", cluster_spec("workerpool0", 0)),
                ("CLUSTER_SPEC", cluster_spec("workerpool1", 0)),
                ("CLUSTER_SPEC", cluster_spec("workerpool1", 1)),
                ("TF_CONFIG", tf_config("master", 0)),
                ("TF_CONFIG", tf_config("worker", 0)),
                ("TF_CONFIG", tf_config("worker", 1))]
    procs = [start(build_dir, tmp_path, code, {var: value, "TRAIN_FILES": files}, "trainer.py")
             for var, value in replicas]
    out = outputs(procs)
    for job, source in ((out[:3], "CLUSTER_SPEC"), (out[3:], "TF_CONFIG")):
        seen = {}
        for line in job:
            m = re.match(r"task (\d) of 3 \((\w+)\): (\d+) examples in 2 epochs\n$", line)
            assert m and m.group(2) == source, line
            seen[int(m.group(1))] = int(m.group(3))
        assert sorted(seen) == [0, 1, 2]
        assert sum(seen.values()) == 2 * sum(COUNTS)
        assert max(seen.values()) - min(seen.values()) <= 2  # shares differ by <= 1 record


def test_torchrun_recipes(build_dir, tmp_path, files):
    pytest.importorskip("torch")
    iterable = block_with("tfrec.Dataset(files, shard=\"auto\", shuffle=True, seed=1")
    mapped = block_with("tfrec.MapDataset(files")
    # Both recipes in one process per rank: torch is imported once per rank.
    procs = [start(build_dir, tmp_path, iterable + "\n" + mapped,
                   {"RANK": str(rank), "WORLD_SIZE": "2", "LOCAL_RANK": str(rank),
                    "TRAIN_FILES": files}, "ddp.py")
             for rank in range(2)]
    out = [o.splitlines() for o in outputs(procs)]
    total = sum(COUNTS)
    read = [int(re.match(r"rank %d read (\d+)$" % r, out[r][0]).group(1)) for r in range(2)]
    assert sum(read) == 2 * total  # two epochs, every record once per epoch
    for r in range(2):
        assert out[r][1] == "rank %d of 2 has %d positions per epoch" % (r, -(-total // 2))


def test_porting_example_output(build_dir, tmp_path):
    code = block_with("parse_example_batch([a, b], spec)")
    shown = re.search(r"```text\n(.*?)```", doc_text()[doc_text().index(code):], re.S).group(1)
    (out,) = outputs([start(build_dir, tmp_path, code, {}, "port.py")])
    assert out == shown
