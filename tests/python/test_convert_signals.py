"""tfrec convert interrupted: SIGINT/SIGTERM while records still arrive, or
while the input is stalled (a read that never returns), leave no output and
no temporary file and exit 130 with a message; a later run removes the
temporary files of runs that were killed outright."""
import glob
import os
import signal
import subprocess
import threading
import time

import pytest

import tfrecord_ref as ref

RECORD = ref.encode_records([b"r" * 1000])


def start(tfrec_bin, out):
    return subprocess.Popen([tfrec_bin, "convert", "-C", "GZIP", "-", str(out)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def temps(out):
    return glob.glob(str(out) + ".tmp-*")


def wait_for_temp(p, out):
    deadline = time.time() + 30
    while not temps(out) and time.time() < deadline and p.poll() is None:
        time.sleep(0.01)
    assert temps(out), "convert never opened its temporary output"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_while_records_arrive(tfrec_bin, tmp_path, sig):
    out = tmp_path / "out.gz"
    p = start(tfrec_bin, out)
    stop = threading.Event()

    def feed():  # a slow producer: a record every few milliseconds
        try:
            while not stop.is_set():
                p.stdin.write(RECORD * 20)
                p.stdin.flush()
                time.sleep(0.005)
        except (BrokenPipeError, ValueError):
            pass
    t = threading.Thread(target=feed)
    t.start()
    try:
        wait_for_temp(p, out)
        time.sleep(0.2)
        p.send_signal(sig)
        p.wait(timeout=30)
    finally:
        stop.set()
        t.join()
    err = p.stderr.read().decode()
    assert p.returncode == 130, err
    name = "SIGINT" if sig == signal.SIGINT else "SIGTERM"
    assert "interrupted by %s" % name in err and "not written" in err, err
    assert "run the same command again" in err, err
    assert not out.exists() and temps(out) == [], os.listdir(tmp_path)


def test_signal_while_the_input_is_stalled(tfrec_bin, tmp_path):
    out = tmp_path / "out.gz"
    p = start(tfrec_bin, out)
    p.stdin.write(RECORD * 100)
    p.stdin.flush()  # and then nothing: convert blocks in read()
    wait_for_temp(p, out)
    time.sleep(0.5)  # everything sent is consumed: the read is now blocked
    t0 = time.time()
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=20)
    finally:
        p.stdin.close()
    err = p.stderr.read().decode()
    assert p.returncode == 130, err
    assert time.time() - t0 < 10
    assert "interrupted by SIGTERM" in err and "partial output removed" in err, err
    assert not out.exists() and temps(out) == [], os.listdir(tmp_path)


def test_stale_temporaries_of_dead_runs_are_removed(tfrec_bin, tmp_path):
    src = tmp_path / "in.tfrecord"
    ref.write_records(str(src), [b"abc"] * 3, "NONE")
    out = tmp_path / "out.tfrecord"
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / ("out.tfrecord.tmp-%d-0" % dead.pid)
    stale.write_bytes(b"partial")
    alive = tmp_path / ("out.tfrecord.tmp-%d-0" % os.getpid())  # a run still going: kept
    alive.write_bytes(b"partial")
    other = tmp_path / ("other.tmp-%d-0" % dead.pid)  # another output's: not ours to judge
    other.write_bytes(b"partial")
    p = subprocess.run([tfrec_bin, "convert", str(src), str(out)], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert not stale.exists() and alive.exists() and other.exists()
    assert "removed %s" % stale in p.stderr and "no longer running" in p.stderr, p.stderr
    assert ref.read_records(str(out)) == [b"abc"] * 3
