# needs: tfrec-storage tfrec-bigtable
"""The Python blocks of docs/training.md run as written: the trainers under
the environment each job gives its replicas (Vertex AI's CLUSTER_SPEC, AI
Platform's TF_CONFIG with a master, torchrun's RANK/WORLD_SIZE, the
Indexed Job's JOB_COMPLETION_INDEX), with TRAIN_FILES naming local files,
read every record once per epoch across the replicas; the porting example
prints what the page shows. The page's shell lines (tfrec index / ls,
tfrec2bt) and its Bigtable block run as written too, gs://my-bucket being
the storage test server and the instance the Bigtable emulator: the files
trainer on its default gs:// glob and the Bigtable replicas (shard="auto"
on the saved plan) yield every record once. gcloud, a two-node torchrun
and kubectl need the services themselves: their jobs' environments are
what the trainers get here."""
import ast
import glob
import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from bindings_env import PYTHON_DIR, REPO, load_tfrec
from storage_server import server  # noqa: F401 (the module's storage test server)

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
        p = str(d / ("train-%05d-of-%05d" % (f, len(COUNTS))))
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
    env = {k: v for k, v in env.items() if v is not None}  # None: unset
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


# ------------------------- the page's shell lines and gs:// / Bigtable blocks

def shell_lines():
    """Every command of the page's ```sh blocks, continuation lines joined."""
    out = []
    for block in re.findall(r"```sh\n(.*?)```", doc_text(), re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            if line and not line.startswith("#"):
                out.append(line)
    return out


# Records, in each replica, what a tfrec.bigtable.Dataset yields (the
# image/encoded value of each row) into $SEEN_FILE, the block itself
# running unchanged after it.
RECORD_YIELDS = '''
import atexit, json, os, tfrec, tfrec.bigtable
_seen = []
_iter = tfrec.bigtable.Dataset.__iter__
def _recording(self):
    for x in _iter(self):
        _seen.append(x["image/encoded"][0].decode())
        yield x
tfrec.bigtable.Dataset.__iter__ = _recording
atexit.register(lambda: open(os.environ["SEEN_FILE"], "w").write(json.dumps(_seen)))
'''


@pytest.fixture(scope="module")
def services(build_dir, files, server, bigtable_emulator):  # noqa: F811
    """The environment a job's replicas and the page's commands get here:
    gs://my-bucket is the storage test server, the Bigtable instance the
    emulator, the tools first on PATH, no credentials; the training files
    are uploaded to gs://my-bucket/imagenet/ (without their indexes: the
    page's `tfrec index` writes them)."""
    env = {"STORAGE_EMULATOR_HOST": server[0], "BIGTABLE_EMULATOR_HOST": bigtable_emulator,
           "PATH": os.path.join(build_dir, "bin") + os.pathsep + os.environ["PATH"]}
    for name in ("GOOGLE_APPLICATION_CREDENTIALS", "TFREC_USER_PROJECT", "TRAIN_FILES"):
        env[name] = None
    base = {k: v for k, v in os.environ.items() if k not in env}
    full = dict(base, **{k: v for k, v in env.items() if v is not None})
    for data in sorted(glob.glob(files)):
        if data.endswith(".idx"):
            continue
        res = subprocess.run(["tfrec", "convert", "-q", data,
                              "gs://my-bucket/imagenet/" + os.path.basename(data)],
                             env=full, capture_output=True, text=True, timeout=60)
        assert res.returncode == 0, res.stderr
    return env


def run_job_env(build_dir, tmp_path, code, services, extra, name):
    return start(build_dir, tmp_path, code, dict(services, **extra), name)


def test_shell_lines_and_the_bigtable_block_against_the_emulators(build_dir, tmp_path,
                                                                   services):
    drop = [k for k, v in services.items() if v is None]
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update({k: v for k, v in services.items() if v is not None})
    lines = shell_lines()
    assert [l.split()[0] for l in lines] == ["tfrec", "tfrec", "tfrec2bt"], lines
    outs = []
    for line in lines:
        res = subprocess.run(line, shell=True, env=env, cwd=tmp_path, capture_output=True,
                             text=True, timeout=120)
        assert res.returncode == 0, line + "\n" + res.stderr
        outs.append(res.stdout)
    # tfrec index: one count per file; tfrec ls: the files with those counts.
    assert sorted(int(l.split()[0]) for l in outs[0].splitlines()) == sorted(COUNTS), outs[0]
    for n in COUNTS:
        assert re.search(r"\b%d\b" % n, outs[1]), outs[1]

    # The files trainer with its default gs:// glob, three Vertex AI replicas.
    code = block_with("examples in 2 epochs")
    procs = [run_job_env(build_dir, tmp_path, code, services,
                         {"CLUSTER_SPEC": cluster_spec(pool, i)}, "trainer.py")
             for pool, i in (("workerpool0", 0), ("workerpool1", 0), ("workerpool1", 1))]
    seen = [int(re.search(r": (\d+) examples", o).group(1)) for o in outputs(procs)]
    assert sum(seen) == 2 * sum(COUNTS) and min(seen) > 0, seen

    # The Bigtable block: the plan once, then the replica part in three tasks.
    block = block_with("tfrec.bigtable.plan(")
    once, replica = block.split("# in every replica", 1)
    outputs([run_job_env(build_dir, tmp_path, once, services, {}, "plan.py")])
    replica = RECORD_YIELDS + replica.split("\n", 1)[1]
    procs = [run_job_env(build_dir, tmp_path, replica, services,
                         {"CLUSTER_SPEC": cluster_spec(pool, i),
                          "SEEN_FILE": str(tmp_path / ("seen-%d" % k))}, "replica.py")
             for k, (pool, i) in enumerate((("workerpool0", 0), ("workerpool1", 0),
                                            ("workerpool1", 1)))]
    outputs(procs)
    shares = [json.loads((tmp_path / ("seen-%d" % k)).read_text()) for k in range(3)]
    # A share may be empty (the plan cuts at the emulator's random
    # SampleRowKeys); together they yield every record exactly once.
    every = sorted(sum(shares, []))
    assert every == sorted("%d:%d" % (f, r) for f, n in enumerate(COUNTS) for r in range(n))


def test_indexed_job_pods(build_dir, tmp_path, files):
    # The Indexed Job manifest as its pods see it: JOB_COMPLETION_INDEX
    # 0..completions-1 and the manifest's TFREC_NUM_TASKS, running the
    # files trainer.
    manifest = next(m for m in re.findall(r"```yaml\n(.*?)```", doc_text(), re.S)
                    if "completionMode: Indexed" in m)
    job = yaml.safe_load(manifest)
    pods = job["spec"]["completions"]
    container = job["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert container["command"] == ["python3", "trainer.py"]
    code = block_with("examples in 2 epochs")
    procs = [start(build_dir, tmp_path, code,
                   dict(env, JOB_COMPLETION_INDEX=str(i), TRAIN_FILES=files), "trainer.py")
             for i in range(pods)]
    seen = {}
    for line in outputs(procs):
        m = re.match(r"task (\d) of %d \(\w+\): (\d+) examples in 2 epochs\n$" % pods, line)
        assert m, line
        seen[int(m.group(1))] = int(m.group(2))
    assert sorted(seen) == list(range(pods))
    assert sum(seen.values()) == 2 * sum(COUNTS)


def test_vertex_job_spec_makes_three_tasks():
    # job.yaml's pools: one chief and the workers the CLUSTER_SPEC of the
    # trainers' test above stands for.
    spec = next(m for m in re.findall(r"```yaml\n(.*?)```", doc_text(), re.S)
                if "workerPoolSpecs" in m)
    pools = yaml.safe_load(spec)["workerPoolSpecs"]
    assert [p["replicaCount"] for p in pools] == [1, 2]
    assert all(p["containerSpec"]["command"] == ["python3", "trainer.py"] for p in pools)
