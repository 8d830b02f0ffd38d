"""imagenet2tfrec runs as a user lives them: interrupted by SIGINT/SIGTERM,
killed outright and run again, rerun into a directory holding another set,
the reference's output layout, and what the log says (stderr not a tty)."""
# needs: tfrec-image
import fcntl
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

import tfrecord_ref

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "fixtures"))
import make_images  # noqa: E402

STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ imagenet2tfrec: ")


@pytest.fixture(scope="module")
def tool(imagenet2tfrec_bin):
    return imagenet2tfrec_bin


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("small"))
    make_images.cmd_samples(root, train=12, validation=4, classes=3, seed=3)
    return root


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """~3000 train images (hard links of a few real JPEGs): long enough with
    --verify=full on one thread to be interrupted in the middle."""
    root = str(tmp_path_factory.mktemp("big"))
    make_images.cmd_samples(root, train=8, validation=4, classes=2, seed=9)
    make_images.link_train_copies(root, 1500)
    return root


def run(tool, *args):
    return subprocess.run([tool] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=600)


def out_files(out):
    found = []
    for d, _, files in os.walk(out):
        found += [os.path.relpath(os.path.join(d, f), out) for f in files]
    return sorted(found)


def staging_dirs(out):
    return sorted(glob.glob(os.path.join(out, ".tfrec-staging-*")))


def dead_pid():
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


# ------------------------------------------------------------- signals

def _start_and_wait_mid_run(tool, big, out):
    """A long run, returned once finished shards sit in its staging directory."""
    p = subprocess.Popen([tool, "--raw_data_dir", big, "--output_dir", out, "--train_shards=40",
                          "--validation_shards=2", "--verify=full", "--num_threads=1"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Wait until finished shards sit in the staging directory: mid-run.
    deadline = time.time() + 120
    while time.time() < deadline and p.poll() is None:
        st = staging_dirs(out)
        try:
            if st and any(n.startswith("train-") and ".tmp-" not in n for n in os.listdir(st[0])):
                break
        except FileNotFoundError:
            pass
        time.sleep(0.02)
    assert p.poll() is None, "the run ended before it could be interrupted"
    return p


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_mid_run_removes_staging_and_exits_130(tool, big, tmp_path, sig):
    out = str(tmp_path / "out")
    p = _start_and_wait_mid_run(tool, big, out)
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    name = "SIGINT" if sig == signal.SIGINT else "SIGTERM"
    assert "interrupted by %s" % name in err, err
    assert "run the same command again" in err, err
    assert staging_dirs(out) == [], "staging directory left behind"
    # no shard, no temporary file anywhere: only the failed run's manifest
    assert out_files(out) == ["manifest.json"], out_files(out)
    with open(os.path.join(out, "manifest.json")) as f:
        man = json.load(f)
    assert man["status"] == "failed" and man["shards"] == []


def test_second_signal_stops_at_once_and_still_cleans_up(tool, big, tmp_path):
    out = str(tmp_path / "out")
    p = _start_and_wait_mid_run(tool, big, out)
    p.send_signal(signal.SIGINT)  # an impatient user: Ctrl-C twice
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "interrupted by SIGINT" in err, err
    assert staging_dirs(out) == [], "staging directory left behind"
    assert not [f for f in out_files(out) if f != "manifest.json"], out_files(out)


def test_stale_staging_of_dead_process_is_removed_and_reported(tool, small, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    pid = dead_pid()
    stale = out / (".tfrec-staging-%d" % pid)
    stale.mkdir()
    (stale / "train-00000-of-00002").write_bytes(b"x" * 100)
    (stale / ("train-00001-of-00002.tmp-%d-0" % pid)).write_bytes(b"y")
    alive = out / (".tfrec-staging-%d" % dead_pid())  # a run still going: kept
    alive.mkdir()  # (its lock held, whatever pid its name carries)
    held = open(alive / ".lock", "w")
    fcntl.flock(held, fcntl.LOCK_EX)
    p = run(tool, "--raw_data_dir", small, "--output_dir", out, "--train_shards=2",
            "--validation_shards=1", "--quiet")
    assert p.returncode == 0, p.stderr
    assert not stale.exists()
    assert alive.is_dir()
    assert "removed %s" % stale in p.stderr and "no longer running" in p.stderr, p.stderr
    with open(out / "manifest.json") as f:
        man = json.load(f)
    assert man["stale_removed"] == [{"path": str(stale)}]
    assert man["counts"]["stale_removed"] == 1
    held.close()
    shutil.rmtree(alive)


# ------------------------------------------------------------- layout

def test_reference_layout_and_readme_verify_command(tool, small, tmp_path, tfrec_bin):
    out = tmp_path / "out"
    p = run(tool, "--raw_data_dir", small, "--local_scratch_dir", out, "--train_shards=3",
            "--validation_shards=2", "--quiet")
    assert p.returncode == 0, p.stderr
    assert out_files(out) == ["manifest.json", "train/train-00000-of-00003",
                              "train/train-00001-of-00003", "train/train-00002-of-00003",
                              "validation/validation-00000-of-00002",
                              "validation/validation-00001-of-00002"]
    with open(out / "manifest.json") as f:
        man = json.load(f)
    assert [s["file"] for s in man["shards"]][0] == "train/train-00000-of-00003"
    # The README's commands: every shard, and no manifest, matches the globs.
    v = subprocess.run([tfrec_bin, "verify", "%s/*/*" % out], capture_output=True, text=True)
    assert v.returncode == 0, v.stdout + v.stderr
    assert "5 files: 5 ok, 0 bad" in v.stdout + v.stderr
    c = subprocess.run([tfrec_bin, "count", "%s/train/train-*" % out], capture_output=True,
                       text=True)
    assert c.returncode == 0 and c.stdout.splitlines()[-1] == "12\ttotal", c.stdout


def test_flat_output_flag(tool, small, tmp_path):
    out = tmp_path / "flat"
    p = run(tool, "--raw_data_dir", small, "--output_dir", out, "--train_shards=2",
            "--validation_shards=1", "--flat_output", "--quiet")
    assert p.returncode == 0, p.stderr
    assert out_files(out) == ["manifest.json", "train-00000-of-00002", "train-00001-of-00002",
                              "validation-00000-of-00001"]


# ------------------------------------------------------------- reruns

def _snapshot(out):
    return {f: open(os.path.join(out, f), "rb").read() for f in out_files(out)}


@pytest.mark.parametrize("second", [["--train_shards=2"], ["--train_shards=3", "--flat_output"]])
def test_rerun_with_another_set_is_refused_and_changes_nothing(tool, small, tmp_path, second):
    out = tmp_path / "out"
    p = run(tool, "--raw_data_dir", small, "--output_dir", out, "--train_shards=3",
            "--validation_shards=1", "--quiet")
    assert p.returncode == 0, p.stderr
    before = _snapshot(out)
    p = run(tool, "--raw_data_dir", small, "--output_dir", out, "--validation_shards=1", *second)
    assert p.returncode == 2, p.stderr
    assert "train/train-00000-of-00003" in p.stderr and "--overwrite" in p.stderr, p.stderr
    assert _snapshot(out) == before  # old shards and their manifest untouched
    assert staging_dirs(out) == []


def test_rerun_of_the_same_set_replaces_it(tool, small, tmp_path):
    out = tmp_path / "out"
    for seed in (1, 2):
        p = run(tool, "--raw_data_dir", small, "--output_dir", out, "--train_shards=3",
                "--validation_shards=1", "--seed=%d" % seed, "--quiet")
        assert p.returncode == 0, p.stderr
    with open(out / "manifest.json") as f:
        assert json.load(f)["options"]["seed"] == 2
    assert len(out_files(out)) == 5


def test_overwrite_replaces_the_old_set(tool, small, tmp_path):
    out = tmp_path / "out"
    run(tool, "--raw_data_dir", small, "--output_dir", out, "--train_shards=3",
        "--validation_shards=1", "--flat_output", "--quiet")
    p = run(tool, "--raw_data_dir", small, "--output_dir", out, "--train_shards=2",
            "--validation_shards=1", "--overwrite", "--quiet")
    assert p.returncode == 0, p.stderr
    assert out_files(out) == ["manifest.json", "train/train-00000-of-00002",
                              "train/train-00001-of-00002", "validation/validation-00000-of-00001"]
    total = sum(len(tfrecord_ref.read_records(os.path.join(out, f)))
                for f in out_files(out) if f != "manifest.json")
    assert total == 16


def test_python_bindings_layout_conflict_and_overwrite(small, tmp_path, build_dir):
    from bindings_env import load_tfrec
    tfrec = load_tfrec(build_dir)
    out = tmp_path / "py"
    m = tfrec.convert_images(small, out, train_shards=2, validation_shards=1, flat_output=True)
    assert [s["file"] for s in m["shards"]] == ["train-00000-of-00002", "train-00001-of-00002",
                                                "validation-00000-of-00001"]
    with pytest.raises(tfrec.StateError) as e:
        tfrec.convert_images(small, out, train_shards=2, validation_shards=1)
    assert "train-00000-of-00002" in str(e.value)
    m = tfrec.convert_images(small, out, train_shards=2, validation_shards=1, overwrite=True)
    assert m["shards"][0]["file"] == "train/train-00000-of-00002"
    assert not (out / "train-00000-of-00002").exists()


# ------------------------------------------------------------- log lines

def test_log_lines_carry_time_and_tool_and_name_the_output(tool, small, tmp_path):
    out = tmp_path / "out"
    p = run(tool, "--raw_data_dir", small, "--output_dir", out, "--train_shards=2",
            "--validation_shards=1")
    assert p.returncode == 0, p.stderr
    lines = p.stderr.splitlines()
    assert lines and all(STAMP.match(line) for line in lines), p.stderr
    assert any("output: %s/" % out in line for line in lines), p.stderr
    assert any(line.endswith("manifest: %s/manifest.json" % out) for line in lines), p.stderr


def test_failed_run_prints_no_rate(tool, tmp_path):
    root = str(tmp_path / "bad")
    make_images.cmd_bad(root)
    p = run(tool, "--raw_data_dir", root, "--output_dir", tmp_path / "o", "--train_shards=1",
            "--validation_shards=1")
    assert p.returncode == 1
    assert "images/s" not in p.stderr and "FAILED after" in p.stderr, p.stderr
    # every line stamped, the list of rejected images too
    assert all(STAMP.match(line) for line in p.stderr.splitlines()), p.stderr
    assert any(re.match(STAMP.pattern + "  rejected ", line)
               for line in p.stderr.splitlines()), p.stderr
