"""The Kubernetes manifests in docs/k8s, as docs/k8s/run.sh fills and
applies them (run here with a stand-in kubectl that records what it is
given): every ${...} placeholder is filled by that one step, every object a
Job refers to (ServiceAccount, Secret, claims, ConfigMap) is defined, each
container runs the image given as IMAGE, the merge Job is applied only
after `kubectl wait --for=condition=complete` on the conversion Job, the
load's timestamp is a parameter, and the commands' flags are the tools'
(their --helpfull). Indexed Jobs have TFREC_NUM_TASKS equal to their
completions. Each Job's command is also run for real, every index of it as
the pods would (JOB_COMPLETION_INDEX and the manifest's environment), with
local paths in place of the volumes and the bucket: the conversion then the
merge Job give one process's shards byte for byte and its manifest; the load
Job then the export Job (against the Bigtable emulator, split keys from the
ConfigMap run.sh made) give back every record once, in order."""
# needs: tfrec-image tfrec-bigtable
import base64
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
IMAGE = "registry.example/tfrec/libtfrec:1.1.0"
SETTINGS = {"IMAGE": IMAGE, "BUCKET": "bkt", "PROJECT": "PROJECT", "INSTANCE": "INSTANCE",
            "GSA_EMAIL": "tfrec@proj.iam.gserviceaccount.com", "RAW_VOLUME": "raw-pv",
            "NUM_RECORDS": "1000"}
JOBS = {"imagenet2tfrec-job.yaml", "imagenet2tfrec-merge-job.yaml", "tfrec2bt-job.yaml",
        "bt2tfrec-job.yaml"}

FAKE_KUBECTL = r"""#!/bin/bash
# records each call; keeps what `apply -f -` reads; `create configmap
# --dry-run=client -o yaml` prints the ConfigMap as kubectl would
echo "$*" >> "$KUBECTL_LOG/calls"
case "$1 $2" in
"apply -f")
    n=$(ls "$KUBECTL_LOG" | grep -c '\.yaml$')
    cat > "$KUBECTL_LOG/$(printf %03d "$n").yaml" ;;
"create configmap")
    name=$3; spec=${4#--from-file=}; key=${spec%%=*}; file=${spec#*=}
    printf 'apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
data:
  %s: |
' "$name" "$key"
    sed 's/^/    /' "$file" ;;
esac
exit 0
"""


def run_script(tmp_path, build_dir, steps=(), **env):
    """Run docs/k8s/run.sh with the stand-in kubectl: (calls, [applied docs])."""
    log = tmp_path / "kubectl"
    bindir = tmp_path / "bin"
    log.mkdir()
    bindir.mkdir()
    (bindir / "kubectl").write_text(FAKE_KUBECTL)
    (bindir / "kubectl").chmod(0o755)
    e = {k: v for k, v in os.environ.items() if k not in ("TIMESTAMP_MICROS", "KEY_FILE")}
    e.update(SETTINGS)
    e.update(env)
    e.update(PATH=str(bindir) + os.pathsep + os.environ["PATH"], KUBECTL_LOG=str(log),
             PYTHON="/usr/bin/python3", PYTHONPATH=PYTHON_DIR,
             TFREC_LIBRARY=os.path.join(build_dir, "libtfrec.so"))
    r = subprocess.run(["bash", os.path.join(K8S, "run.sh")] + list(steps), capture_output=True,
                       text=True, env=e, timeout=120)
    assert r.returncode == 0, r.stderr
    calls = (log / "calls").read_text().splitlines()
    texts = [open(p).read() for p in sorted(glob.glob(str(log / "*.yaml")))]
    return calls, texts, r.stderr


@pytest.fixture(scope="module")
def applied(build_dir, tmp_path_factory):
    """run.sh with Workload Identity: (calls, texts, {(kind, name): doc})."""
    calls, texts, err = run_script(tmp_path_factory.mktemp("k8s"), build_dir,
                                   TIMESTAMP_MICROS="1767225600000000")
    objects = {}
    for t in texts:
        for d in yaml.safe_load_all(t):
            if d:
                objects[(d["kind"], d["metadata"]["name"])] = d
    return calls, texts, objects


def jobs(objects):
    return {name: d for (kind, name), d in objects.items() if kind == "Job"}


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


def test_every_placeholder_is_filled_by_the_documented_step(applied):
    calls, texts, objects = applied
    script = open(os.path.join(K8S, "run.sh"), encoding="utf-8").read()
    listed = set(re.findall(r"\$\{(\w+)\}", script[script.index("VARS='"):].split("'")[1]))
    templates = set()
    for path in glob.glob(os.path.join(K8S, "*.yaml")):
        body = "\n".join(l for l in open(path, encoding="utf-8").read().splitlines()
                         if not l.lstrip().startswith("#"))
        templates |= set(re.findall(r"\$\{(\w+)\}", body))
    assert templates and templates <= listed, templates - listed
    for var in listed:  # each one the script sets or requires
        assert re.search(r"(export |: \"\$\{)%s\b|\b%s=" % (var, var), script), var
    for t in texts:
        body = "\n".join(l for l in t.splitlines() if not l.lstrip().startswith("#"))
        assert "${" not in body, body[:300]
    # the documented step: run.sh, with envsubst, in docs/scale-out.md
    doc = open(os.path.join(REPO, "docs", "scale-out.md"), encoding="utf-8").read()
    assert "k8s/run.sh" in doc and "envsubst" in doc


def test_run_script_applies_everything_and_merges_after_the_conversion(applied):
    calls, texts, objects = applied
    assert set(jobs(objects)) == {"imagenet2tfrec", "imagenet2tfrec-merge", "tfrec2bt", "bt2tfrec"}
    found = {os.path.basename(p) for p in glob.glob(os.path.join(K8S, "*.yaml"))}
    assert found == JOBS | {"serviceaccount.yaml", "key-secret.yaml", "volumes.yaml"}
    applies = [i for i, c in enumerate(calls) if c == "apply -f -"]
    job_order = [json.dumps(sorted(jobs({k: v for t in [texts[n]] for v in yaml.safe_load_all(t)
                                          if v for k in [(v["kind"], v["metadata"]["name"])]})))
                 for n in range(len(texts))]
    index = {}
    for n, names in enumerate(job_order):
        for name in json.loads(names):
            index[name] = applies[n]
    wait = calls.index("wait --for=condition=complete --timeout=24h job/imagenet2tfrec")
    assert index["imagenet2tfrec"] < wait < index["imagenet2tfrec-merge"]
    assert calls.index("wait --for=condition=complete --timeout=24h job/imagenet2tfrec-merge") > \
        index["imagenet2tfrec-merge"]
    # the export's split keys exist before its Job
    cm = [i for i, c in enumerate(calls) if c.startswith("create configmap bt2tfrec-split-keys")]
    assert cm and cm[0] < index["bt2tfrec"]


def test_every_referenced_object_is_defined(applied):
    calls, texts, objects = applied
    for name, job in jobs(objects).items():
        pod = job["spec"]["template"]["spec"]
        assert ("ServiceAccount", pod["serviceAccountName"]) in objects, name
        sa = objects[("ServiceAccount", pod["serviceAccountName"])]
        assert sa["metadata"]["annotations"]["iam.gke.io/gcp-service-account"] == \
            SETTINGS["GSA_EMAIL"]
        mounts = {m["name"] for m in container(job).get("volumeMounts", [])}
        for v in pod.get("volumes", []):
            assert v["name"] in mounts, (name, v["name"])
            if "secret" in v:
                # with Workload Identity the key Secret is not made: optional
                sec = v["secret"]
                assert ("Secret", sec["secretName"]) in objects or sec.get("optional"), name
            if "persistentVolumeClaim" in v:
                assert ("PersistentVolumeClaim", v["persistentVolumeClaim"]["claimName"]) in \
                    objects, name
            if "configMap" in v:
                assert ("ConfigMap", v["configMap"]["name"]) in objects, name
        assert container(job)["image"] == IMAGE, name
        assert env_of(container(job))["GOOGLE_APPLICATION_CREDENTIALS"] == "", name
    claim = objects[("PersistentVolumeClaim", "imagenet-raw")]
    assert claim["spec"]["volumeName"] == "raw-pv"


def test_key_secret_alternative(build_dir, tmp_path):
    key = tmp_path / "key.json"
    key.write_text('{"type": "service_account", "client_email": "a@b.c"}')
    calls, texts, err = run_script(tmp_path, build_dir, steps=("load",), KEY_FILE=str(key),
                                   GSA_EMAIL="")
    objects = {}
    for t in texts:
        for d in yaml.safe_load_all(t):
            if d:
                objects[(d["kind"], d["metadata"]["name"])] = d
    secret = objects[("Secret", "tfrec-key")]
    assert base64.b64decode(secret["data"]["key.json"]) == key.read_bytes()
    job = objects[("Job", "tfrec2bt")]
    c = container(job)
    (mount,) = [m for m in c["volumeMounts"] if m["name"] == "key"]
    (vol,) = [v for v in job["spec"]["template"]["spec"]["volumes"] if v["name"] == "key"]
    assert vol["secret"]["secretName"] == "tfrec-key"
    assert env_of(c)["GOOGLE_APPLICATION_CREDENTIALS"] == mount["mountPath"] + "/key.json"


def test_load_timestamp_is_a_parameter(build_dir, tmp_path, applied):
    calls, texts, objects = applied
    cmd = container(jobs(objects)["tfrec2bt"])["command"]
    assert "--timestamp_micros=1767225600000000" in cmd
    # not given: the script picks the current time, and says so
    calls, texts, err = run_script(tmp_path, build_dir, steps=("load",))
    (ts,) = re.findall(r"--timestamp_micros=(\d+)", "".join(texts))
    import time
    assert abs(int(ts) / 1e6 - time.time()) < 120 and int(ts) % 1000000 == 0
    assert "TIMESTAMP_MICROS=" + ts in err


def test_load_progress_files_on_the_shared_claim(applied):
    calls, texts, objects = applied
    job = jobs(objects)["tfrec2bt"]
    c = container(job)
    assert "--resume" in c["command"] and not any(a.startswith("--progress_file") for a in c["command"])
    # the default progress file is in the working directory: a claim's mount
    (mount,) = [m for m in c["volumeMounts"] if m["mountPath"] == c["workingDir"]]
    (vol,) = [v for v in job["spec"]["template"]["spec"]["volumes"] if v["name"] == mount["name"]]
    claim = objects[("PersistentVolumeClaim", vol["persistentVolumeClaim"]["claimName"])]
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]


def test_every_job_runs_a_tool_with_its_flags(applied, helps):
    calls, texts, objects = applied
    for name, job in jobs(objects).items():
        assert job["apiVersion"] == "batch/v1", name
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
        if name == "imagenet2tfrec-merge":
            assert "completionMode" not in spec and spec["completions"] == 1
            continue
        assert spec["completionMode"] == "Indexed", name
        assert 1 <= spec["parallelism"] <= spec["completions"], name
        assert env_of(c)["TFREC_NUM_TASKS"] == str(spec["completions"]), name


def test_split_keys_in_the_configmap(applied):
    calls, texts, objects = applied
    n = jobs(objects)["bt2tfrec"]["spec"]["completions"]
    keys = objects[("ConfigMap", "bt2tfrec-split-keys")]["data"]["split_keys.txt"].split()
    total = int(SETTINGS["NUM_RECORDS"])
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


def test_conversion_job_then_merge_job_equal_one_process(build_dir, tmp_path, applied):
    raw, out, one = tmp_path / "raw", tmp_path / "bucket", tmp_path / "one"
    make_images.cmd_samples(str(raw), train=40, validation=10, classes=3, seed=4)
    found = jobs(applied[2])
    job, merge = found["imagenet2tfrec"], found["imagenet2tfrec-merge"]

    def local(arg):
        return arg.replace("/data/raw", str(raw)).replace("gs://bkt/imagenet", str(out))

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


def test_load_and_export_jobs_against_the_emulator(build_dir, emulator, tmp_path, applied):
    """The tfrec2bt Job's command as its 32 pods, then the bt2tfrec Job's
    as its 16 pods with the split keys made as the manifest says: every
    record comes back once, in order, in the files of the 16 tasks."""
    import random
    import tfrecord_ref
    found = jobs(applied[2])
    load, export = found["tfrec2bt"], found["bt2tfrec"]
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
        return arg.replace("gs://bkt/imagenet", str(tmp_path)) \
            .replace("gs://bkt/export", str(tmp_path / "export")) \
            .replace("/etc/tfrec/split_keys.txt", str(tmp_path / "split_keys.txt"))

    # each task's progress file goes to the working directory, the claim's
    # mount in a pod
    progress = tmp_path / "progress"
    progress.mkdir()
    for i, r in enumerate(run_as_pods(build_dir, load, local, extra_env=env, cwd=progress)):
        assert r.returncode == 0, (i, r.stderr)
    n = export["spec"]["completions"]
    keys = applied[2][("ConfigMap", "bt2tfrec-split-keys")]["data"]["split_keys.txt"]
    (tmp_path / "split_keys.txt").write_text(keys)
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
