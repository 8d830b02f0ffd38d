"""The Kubernetes manifests in docs/k8s parse (python3-yaml), describe
Indexed Jobs whose TFREC_NUM_TASKS equals their completions, and run
commands whose flags the tools accept (their --helpfull). Each Job's
command is also run for real, every index of it as the pods would
(JOB_COMPLETION_INDEX and the manifest's environment), with local paths in
place of the volumes and the bucket: the conversion then the merge Job
give one process's shards byte for byte and its manifest; the load Job
then the export Job (against the Bigtable emulator, split keys made as the
manifest says) give back every record once, in order."""
# needs: tfrec-image tfrec-bigtable
import glob
import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from bindings_env import PYTHON_DIR, REPO

sys.path.insert(0, os.path.join(REPO, "tests", "fixtures"))
import make_images  # noqa: E402

K8S = os.path.join(REPO, "docs", "k8s")
TOOLS = ("imagenet2tfrec", "tfrec2bt", "bt2tfrec")


def manifests():
    out = {}
    for path in sorted(glob.glob(os.path.join(K8S, "*.yaml"))):
        with open(path, encoding="utf-8") as f:
            docs = [d for d in yaml.safe_load_all(f) if d is not None]
        assert len(docs) == 1, path
        out[os.path.basename(path)] = docs[0]
    return out


def container(job):
    (c,) = job["spec"]["template"]["spec"]["containers"]
    return c


def env_of(c):
    return {e["name"]: e["value"] for e in c.get("env", [])}


@pytest.fixture(scope="module")
def helps(build_dir):
    out = {}
    for tool in TOOLS:
        r = subprocess.run([os.path.join(build_dir, "bin", tool), "--helpfull"],
                           capture_output=True, text=True, timeout=60)
        out[tool] = r.stdout + r.stderr
        assert "--flagfile" in out[tool], (tool, out[tool][:500])
    return out


def test_every_manifest_is_a_job_of_a_tool(helps):
    found = manifests()
    assert set(found) == {"imagenet2tfrec-job.yaml", "imagenet2tfrec-merge-job.yaml",
                          "tfrec2bt-job.yaml", "bt2tfrec-job.yaml"}
    for name, job in found.items():
        assert job["apiVersion"] == "batch/v1" and job["kind"] == "Job", name
        spec = job["spec"]
        assert spec["template"]["spec"]["restartPolicy"] == "Never", name
        c = container(job)
        tool = c["command"][0]
        assert tool in TOOLS, name
        for arg in c["command"][1:]:
            assert arg.startswith("--"), (name, arg)
            flag = arg[2:].split("=", 1)[0]
            # listed as --flag=..., --flag  ... or --[no]flag
            assert re.search(r"--(\[no\])?%s\b" % re.escape(flag), helps[tool]), \
                "%s: %s does not accept --%s" % (name, tool, flag)
        if name == "imagenet2tfrec-merge-job.yaml":
            assert "completionMode" not in spec and spec["completions"] == 1
            continue
        assert spec["completionMode"] == "Indexed", name
        assert 1 <= spec["parallelism"] <= spec["completions"], name
        assert env_of(c)["TFREC_NUM_TASKS"] == str(spec["completions"]), name


def test_split_keys_command_in_the_export_job(build_dir):
    job = manifests()["bt2tfrec-job.yaml"]
    n = job["spec"]["completions"]
    text = open(os.path.join(K8S, "bt2tfrec-job.yaml"), encoding="utf-8").read()
    m = re.search(r"--num_records=(\d+) --num_tasks=(\d+)", text)
    assert m and int(m.group(2)) == n
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR,
               TFREC_LIBRARY=os.path.join(build_dir, "libtfrec.so"))
    r = subprocess.run([sys.executable, "-m", "tfrec.distributed", "split-keys",
                        "--prefix=train_", "--num_records=" + m.group(1),
                        "--num_tasks=" + m.group(2)],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    keys = r.stdout.split()
    total = int(m.group(1))
    width = len(str(total - 1))  # the loader's key width
    # task i of n begins at record floor(total * i / n): computed here independently
    assert keys == ["train_%0*d" % (width, total * i // n) for i in range(1, n)]


def run_as_pods(build_dir, job, substitute, index_env=True, extra_env=None, cwd=None):
    c = container(job)
    argv = [os.path.join(build_dir, "bin", c["command"][0])] + \
        [substitute(a) for a in c["command"][1:]]
    env = dict(os.environ, **env_of(c), **(extra_env or {}))
    env.pop("JOB_COMPLETION_INDEX", None)
    results = []
    indexes = range(job["spec"]["completions"]) if index_env else [None]
    for i in indexes:
        if i is not None:
            env["JOB_COMPLETION_INDEX"] = str(i)
        results.append(subprocess.run(argv, capture_output=True, text=True, env=env,
                                      timeout=300, cwd=cwd))
    return results


def test_conversion_job_then_merge_job_equal_one_process(build_dir, tmp_path):
    raw, out, one = tmp_path / "raw", tmp_path / "bucket", tmp_path / "one"
    make_images.cmd_samples(str(raw), train=40, validation=10, classes=3, seed=4)
    found = manifests()
    job, merge = found["imagenet2tfrec-job.yaml"], found["imagenet2tfrec-merge-job.yaml"]

    def local(arg):
        return arg.replace("/data/raw", str(raw)).replace("gs://BUCKET/imagenet", str(out))

    n = job["spec"]["completions"]
    for i, r in enumerate(run_as_pods(build_dir, job, local)):
        assert r.returncode == 0, (i, r.stderr)
    parts = sorted(os.listdir(out))
    assert ["manifest-task-%05d-of-%05d.json" % (i, n) for i in range(n)] == \
        [p for p in parts if p.startswith("manifest-task-")]
    (m,) = run_as_pods(build_dir, merge, local, index_env=False)
    assert m.returncode == 0, m.stderr
    manifest = json.load(open(out / "manifest.json"))
    # the same command without the task environment: one process, everything
    c = container(job)
    argv = [os.path.join(build_dir, "bin", c["command"][0])] + \
        [local(a).replace(str(out), str(one)) for a in c["command"][1:]]
    env = {k: v for k, v in os.environ.items()
           if k not in ("JOB_COMPLETION_INDEX", "TFREC_NUM_TASKS")}
    r = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    reference = json.load(open(one / "manifest.json"))
    files = [s["file"] for s in reference["shards"]]
    assert len(files) == 1024 + 128
    assert [s["file"] for s in manifest["shards"]] == files
    for f in files:
        assert open(out / f, "rb").read() == open(one / f, "rb").read(), f
    assert sum(s["records"] for s in manifest["shards"]) == 50


@pytest.fixture(scope="module")
def emulator(bigtable_emulator):
    return bigtable_emulator


def test_load_and_export_jobs_against_the_emulator(build_dir, emulator, tmp_path):
    """The tfrec2bt Job's command as its 32 pods, then the bt2tfrec Job's
    as its 16 pods with the split keys made as the manifest says: every
    record comes back once, in order, in the files of the 16 tasks."""
    import random
    import tfrecord_ref
    found = manifests()
    load, export = found["tfrec2bt-job.yaml"], found["bt2tfrec-job.yaml"]
    rnd = random.Random(8)
    records = [b"rec %04d " % i + rnd.randbytes(rnd.randrange(0, 2000)) for i in range(1000)]
    (tmp_path / "train").mkdir()
    for f in range(5):  # 5 shards of 200 records
        tfrecord_ref.write_records(str(tmp_path / "train" / ("train-%05d-of-00005" % f)),
                                   records[200 * f:200 * (f + 1)])
    env = {"BIGTABLE_EMULATOR_HOST": emulator}
    cbt = ["cbt", "-project", "PROJECT", "-instance", "INSTANCE"]
    for args in (["createtable", "imagenet"], ["createfamily", "imagenet", "tfexample"]):
        r = subprocess.run(cbt + args, capture_output=True, text=True,
                           env=dict(os.environ, **env), timeout=60)
        assert r.returncode == 0, r.stderr

    def local(arg):
        return arg.replace("gs://BUCKET/imagenet", str(tmp_path)) \
            .replace("--num_records=1281167", "--num_records=1000") \
            .replace("gs://BUCKET/export", str(tmp_path / "export")) \
            .replace("/etc/tfrec/split_keys.txt", str(tmp_path / "split_keys.txt"))

    # each task's progress file goes to the working directory, as in a pod
    for i, r in enumerate(run_as_pods(build_dir, load, local, extra_env=env, cwd=tmp_path)):
        assert r.returncode == 0, (i, r.stderr)
    n = export["spec"]["completions"]
    keys = subprocess.run([sys.executable, "-m", "tfrec.distributed", "split-keys",
                           "--prefix=train_", "--num_records=1000", "--num_tasks=%d" % n],
                          capture_output=True, env=dict(os.environ, PYTHONPATH=PYTHON_DIR,
                          TFREC_LIBRARY=os.path.join(build_dir, "libtfrec.so")), timeout=60)
    assert keys.returncode == 0, keys.stderr
    (tmp_path / "split_keys.txt").write_bytes(keys.stdout)
    (tmp_path / "export").mkdir()
    for i, r in enumerate(run_as_pods(build_dir, export, local, extra_env=env, cwd=tmp_path)):
        assert r.returncode == 0, (i, r.stderr)
    files = ["train-%05d-of-%05d" % (i, n) for i in range(n)]
    parts = ["train.part-%05d-of-%05d" % (i, n) for i in range(n)]  # each task's part file
    assert sorted(os.listdir(tmp_path / "export")) == sorted(files + parts)
    got = [tfrecord_ref.read_records(str(tmp_path / "export" / f)) for f in files]
    # task i's file holds records [floor(1000 * i / n), floor(1000 * (i + 1) / n))
    assert [len(g) for g in got] == [1000 * (i + 1) // n - 1000 * i // n for i in range(n)]
    assert [r for g in got for r in g] == records
