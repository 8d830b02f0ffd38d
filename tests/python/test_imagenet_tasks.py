"""imagenet2tfrec split into tasks the way a Kubernetes Indexed Job runs it:
the SAME command line in N processes that differ only in JOB_COMPLETION_INDEX
(TFREC_NUM_TASKS set for all), side by side, then --merge_manifests. The
shards must be those of one process byte for byte, each part's CRC32C is
checked with python3-crc32c, and the merged manifest must be the
one-process manifest but for the timing and the output directory."""
# needs: tfrec-image
import glob
import json
import os
import signal
import subprocess
import sys
import time

import crc32c
import pytest
from PIL import Image

from bindings_env import load_tfrec

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "fixtures"))
import make_images  # noqa: E402

FLAGS = ["--train_shards", 5, "--validation_shards", 3, "--seed", 7, "--num_threads", 2]


@pytest.fixture(scope="module")
def tool(imagenet2tfrec_bin):
    return imagenet2tfrec_bin


def command(tool, raw, out, *extra):
    return [tool, "--quiet", "--raw_data_dir", raw, "--output_dir", out] + \
        [str(a) for a in FLAGS] + [str(a) for a in extra]


def task_env(index, count):
    env = dict(os.environ)
    env.pop("JOB_COMPLETION_INDEX", None)
    env.pop("TFREC_NUM_TASKS", None)
    if index is not None:
        env["JOB_COMPLETION_INDEX"] = str(index)
    if count is not None:
        env["TFREC_NUM_TASKS"] = str(count)
    return env


def run(cmd, env=None):
    return subprocess.run([str(c) for c in cmd], env=env or task_env(None, None),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)


def run_tasks(tool, raw, out, n):
    """N processes at once, as the pods of an Indexed Job."""
    procs = [subprocess.Popen([str(c) for c in command(tool, raw, out)], env=task_env(i, n),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(n)]
    for i, p in enumerate(procs):
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, "task %d of %d: %s" % (i, n, err)


def shard_files(out):
    found = {}
    for d, _, files in os.walk(out):
        for f in files:
            if "-of-" in f and not f.startswith("manifest"):
                rel = os.path.relpath(os.path.join(d, f), out)
                with open(os.path.join(d, f), "rb") as fh:
                    found[rel] = fh.read()
    return found


def normalized(manifest):
    m = json.loads(json.dumps(manifest))
    m["counts"]["seconds"] = 0
    m["options"]["output_dir"] = "OUT"
    return m


def load(path):
    with open(path) as f:
        return json.load(f)


def share(units, index, count):
    return units * index // count, units * (index + 1) // count


@pytest.fixture(scope="module")
def raw(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("tree"))
    make_images.cmd_tree(root)
    return root


@pytest.fixture(scope="module")
def one(tool, raw, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("one"))
    p = run(command(tool, raw, out))
    assert p.returncode == 0, p.stderr
    return out


@pytest.mark.parametrize("n", [2, 3, 9])
def test_parallel_tasks_then_merge_equal_one_process(tool, raw, one, tmp_path, n):
    out = str(tmp_path / "out")
    run_tasks(tool, raw, out, n)
    want = shard_files(one)
    assert len(want) == 8
    assert shard_files(out) == want
    assert not os.path.exists(os.path.join(out, "manifest.json"))  # only the merge writes it
    listed = []
    for i in range(n):
        part = load(os.path.join(out, "manifest-task-%05d-of-%05d.json" % (i, n)))
        assert part["task"]["index"] == i and part["task"]["count"] == n
        b, e = share(8, i, n)
        assert (part["task"]["shards_begin"], part["task"]["shards_end"]) == (b, e)
        assert len(part["shards"]) == e - b
        for s in part["shards"]:
            assert s["crc32c"] == crc32c.crc32c(want[s["file"]]), s["file"]
            assert s["bytes"] == len(want[s["file"]])
        listed += [s["file"] for s in part["shards"]]
    assert sorted(listed) == sorted(want) and len(set(listed)) == len(listed)
    p = run([tool, "--merge_manifests", "--output_dir", out])
    assert p.returncode == 0, p.stderr
    assert "merged: 8 shards" in p.stderr
    assert normalized(load(os.path.join(out, "manifest.json"))) == \
        normalized(load(os.path.join(one, "manifest.json")))


def test_summary_names_the_share(tool, raw, tmp_path):
    out = str(tmp_path / "out")
    p = run([tool, "--raw_data_dir", raw, "--output_dir", out] + [str(a) for a in FLAGS] +
            ["--task_index", 2, "--num_tasks", 3])
    assert p.returncode == 0, p.stderr
    assert "task 2 of 3: shards 5..7 of 8" in p.stderr


def test_index_without_count_is_a_usage_error(tool, raw, tmp_path):
    p = run(command(tool, raw, tmp_path / "out"), env=task_env(1, None))
    assert p.returncode == 2
    assert "TFREC_NUM_TASKS" in p.stderr
    assert not os.path.exists(tmp_path / "out")


def test_merge_names_the_missing_task(tool, raw, tmp_path):
    out = str(tmp_path / "out")
    for i in (0, 2):
        p = run(command(tool, raw, out), env=task_env(i, 3))
        assert p.returncode == 0, p.stderr
    p = run([tool, "--merge_manifests", "--output_dir", out])
    assert p.returncode == 1
    assert "task 1 of 3 has no manifest part" in p.stderr and "--task_index=1" in p.stderr
    assert not os.path.exists(os.path.join(out, "manifest.json"))


def big_tree(root, n=240):
    """Enough images that a task is still converting when it is killed."""
    for i in range(n):
        d = os.path.join(root, "train", "n%02d" % (i % 4))
        os.makedirs(d, exist_ok=True)
        Image.new("RGB", (160, 120), (i % 256, 50, 100)).save(
            os.path.join(d, "img_%04d.JPEG" % i), quality=90)
    os.makedirs(os.path.join(root, "validation"), exist_ok=True)
    for i in range(4):
        Image.new("RGB", (64, 64), (10, i, 20)).save(
            os.path.join(root, "validation", "v%d.JPEG" % i))
    with open(os.path.join(root, "synset_labels.txt"), "w") as f:
        f.write("n00\nn01\nn02\nn03\n")


def test_task_killed_mid_run_then_rerun_alone(tool, tmp_path):
    raw = str(tmp_path / "raw")
    big_tree(raw)
    ref = str(tmp_path / "ref")
    p = run(command(tool, raw, ref, "--num_threads", 1))
    assert p.returncode == 0, p.stderr
    out = str(tmp_path / "out")
    for i in (0, 2):
        p = run(command(tool, raw, out, "--num_threads", 1), env=task_env(i, 3))
        assert p.returncode == 0, p.stderr
    # Kill task 1 once its staging directory holds a finished shard; if it
    # finished before that was seen, start over in a fresh directory.
    for attempt in range(20):
        proc = subprocess.Popen([str(c) for c in command(tool, raw, out, "--num_threads", 1)],
                                env=task_env(1, 3), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        pattern = os.path.join(out, ".tfrec-staging-task-00001-%d-*" % proc.pid)
        killed = False
        while proc.poll() is None:
            try:
                staging = (glob.glob(pattern) or [pattern])[0]
                names = os.listdir(staging)
            except FileNotFoundError:
                time.sleep(0.001)  # not a timing assumption: only how often to look
                continue
            if any(not n.startswith(".") and ".tmp-" not in n for n in names):
                proc.send_signal(signal.SIGKILL)
                killed = True
                break
            time.sleep(0.001)
        proc.wait()
        if killed:
            break
        # Finished: undo it (its part and shards) and try again.
        os.remove(os.path.join(out, "manifest-task-00001-of-00003.json"))
        b, e = share(8, 1, 3)
        for f in sorted(shard_files(ref))[b:e]:  # plan order: train-*, then validation-*
            os.remove(os.path.join(out, f))
    assert killed, "task 1 always finished before it could be killed"
    assert os.path.isdir(staging)
    assert not os.path.exists(os.path.join(out, "manifest-task-00001-of-00003.json"))
    p = run([tool, "--merge_manifests", "--output_dir", out])
    assert p.returncode == 1 and "task 1 of 3 has no manifest part" in p.stderr
    # The killed task alone again: its stale staging directory goes, the
    # output is the one-process output.
    p = run(command(tool, raw, out, "--num_threads", 1), env=task_env(1, 3))
    assert p.returncode == 0, p.stderr
    assert not os.path.exists(staging)
    part = load(os.path.join(out, "manifest-task-00001-of-00003.json"))
    assert part["stale_removed"] == [{"path": staging}]
    assert shard_files(out) == shard_files(ref)
    p = run([tool, "--merge_manifests", "--output_dir", out])
    assert p.returncode == 0, p.stderr
    merged, single = load(os.path.join(out, "manifest.json")), load(os.path.join(ref, "manifest.json"))
    assert merged["counts"]["stale_removed"] == 1
    merged["counts"]["stale_removed"], merged["stale_removed"] = 0, []
    assert normalized(merged) == normalized(single)


def test_python_tasks_and_merge(build_dir, raw, tmp_path):
    tfrec = load_tfrec(build_dir)
    if not tfrec.features()["convert_images"]:
        pytest.fail("libtfrec-image was not built or not found: %s" % tfrec.parts())
    kw = dict(train_shards=5, validation_shards=3, seed=7, num_threads=2)
    whole = tfrec.convert_images(raw, tmp_path / "one", **kw)
    out = tmp_path / "out"
    parts = [tfrec.convert_images(raw, out, task_index=i, num_tasks=2, **kw) for i in range(2)]
    assert [p["task"]["index"] for p in parts] == [0, 1]
    assert [s["file"] for p in parts for s in p["shards"]] == [s["file"] for s in whole["shards"]]
    merged = tfrec.merge_manifests(out)
    assert normalized(merged) == normalized(dict(whole, options=dict(whole["options"])))
    assert normalized(load(out / "manifest.json")) == normalized(merged)
    with pytest.raises(ValueError):
        tfrec.convert_images(raw, out, task_index=1, **kw)
    os.remove(out / "manifest-task-00001-of-00002.json")
    with pytest.raises(tfrec.NotFoundError) as e:
        tfrec.merge_manifests(out)
    assert "task 1 of 2" in str(e.value)
