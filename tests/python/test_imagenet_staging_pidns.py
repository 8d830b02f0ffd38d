"""Stale staging cleanup across PID namespaces: two imagenet2tfrec runs on
one output directory, each PID 1 of its own namespace (two pods on a shared
volume). A running converter's staging directory survives the other's
start-up cleanup; a dead one's is removed. Needs root and unshare(1)."""
# needs: tfrec-image
import glob
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "fixtures"))
import make_images  # noqa: E402

UNSHARE = shutil.which("unshare")


def _can_unshare():
    if not UNSHARE or os.geteuid() != 0:
        return False
    r = subprocess.run([UNSHARE, "-p", "-f", "--mount-proc", "sh", "-c", "test $$ = 1"],
                       capture_output=True)
    return r.returncode == 0


pytestmark = pytest.mark.skipif(not _can_unshare(),
                                reason="needs root and unshare -p -f --mount-proc")


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """~3000 train images (hard links): a long run with --verify=full."""
    root = str(tmp_path_factory.mktemp("big"))
    make_images.cmd_samples(root, train=8, validation=4, classes=2, seed=9)
    make_images.link_train_copies(root, 1500)
    return root


def staging_dirs(out):
    return sorted(glob.glob(os.path.join(out, ".tfrec-staging-*")))


def in_namespace(tool, *args):
    """imagenet2tfrec as PID 1 of a new PID namespace, in its own process
    group (so the group can be stopped, resumed or killed from here)."""
    return subprocess.Popen([UNSHARE, "-p", "-f", "--mount-proc", tool] + [str(a) for a in args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def args(raw, out, tasks, slow=True):
    """A slow run (to be caught mid-run) or a quick one over the same set."""
    speed = ["--verify=full", "--num_threads=1"] if slow else ["--verify=header"]
    return ["--raw_data_dir", raw, "--output_dir", out, "--train_shards=40",
            "--validation_shards=2"] + speed + tasks


def wait_mid_run(p, out):
    """Until the run's staging directory holds a finished shard."""
    deadline = time.time() + 120
    while time.time() < deadline and p.poll() is None:
        for st in staging_dirs(out):
            try:
                if any(n.startswith("train-") and ".tmp-" not in n for n in os.listdir(st)):
                    return st
            except FileNotFoundError:
                pass
        time.sleep(0.02)
    raise AssertionError("the run ended before it could be caught mid-run: %s"
                         % (p.communicate()[1] if p.poll() is not None else ""))


TASKS = [[], ["--task_index=0", "--num_tasks=2"]]


@pytest.mark.parametrize("tasks", TASKS, ids=["one-process", "task"])
def test_running_converters_staging_survives_another_pid_1(imagenet2tfrec_bin, big, tmp_path,
                                                            tasks):
    out = str(tmp_path / "out")
    a = in_namespace(imagenet2tfrec_bin, *args(big, out, tasks))
    try:
        staging = wait_mid_run(a, out)
        os.killpg(a.pid, signal.SIGSTOP)  # A holds its lock, and its pid 1
        b = in_namespace(imagenet2tfrec_bin, *args(big, out, tasks, slow=False))
        b_out, b_err = b.communicate(timeout=600)
        assert b.returncode == 0, b_err
        assert os.path.isdir(staging), "B removed the staging directory of running A"
        assert "removed" not in b_err, b_err
    finally:
        os.killpg(a.pid, signal.SIGCONT)
    _, a_err = a.communicate(timeout=600)
    assert a.returncode == 0, a_err
    assert staging_dirs(out) == []


@pytest.mark.parametrize("tasks", TASKS, ids=["one-process", "task"])
def test_dead_converters_staging_is_removed_by_another_pid_1(imagenet2tfrec_bin, big, tmp_path,
                                                              tasks):
    out = str(tmp_path / "out")
    a = in_namespace(imagenet2tfrec_bin, *args(big, out, tasks))
    staging = wait_mid_run(a, out)
    os.killpg(a.pid, signal.SIGKILL)  # no cleanup of its own
    a.communicate(timeout=60)
    assert os.path.isdir(staging)
    b = in_namespace(imagenet2tfrec_bin, *args(big, out, tasks, slow=False))
    _, b_err = b.communicate(timeout=600)
    assert b.returncode == 0, b_err
    assert not os.path.exists(staging), "B kept the staging directory of dead A"
    assert "removed %s" % staging in b_err, b_err
    assert staging_dirs(out) == []
