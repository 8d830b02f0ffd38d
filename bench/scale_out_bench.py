"""Benchmark: what splitting a conversion into tasks costs.

The same imagenet2tfrec conversion (generated photo-like JPEGs, 256 train +
32 validation shards) run as:
  * one     - one process, --num_threads=1: the peer;
  * T tasks - T = 64 and 256 processes `--task_index=i --num_tasks=T`
              (--num_threads=1 each), at most --parallel at a time (default:
              the machine's CPUs), then `--merge_manifests`.
Figures: wall and CPU seconds (user + sys of the processes), the CPU every
task adds over the one-process run ((CPU of the T tasks - CPU of one) / T),
and what that is made of: process start-up (`imagenet2tfrec --version`),
input listing + plan (a task whose share is empty: it scans the tree and
plans every shard, then writes nothing), and the merge. Every split run is
checked: the union of the tasks' shards equals the one-process output byte
for byte and the merged manifest lists the same shards.

RATIO lines (value >= target is met): one-process CPU / T-task CPU >= 0.8
(the tasks together spend at most 1.25x one process's CPU).
"""
import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from imagenet_bench import dataset, list_images  # noqa: E402

TRAIN_SHARDS, VALIDATION_SHARDS = 256, 32


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_all(cmds, parallel):
    """Run every argv of cmds, at most `parallel` at a time; (wall, cpu)."""
    cpu0, t0 = children_cpu(), time.perf_counter()
    pending, running = list(cmds), []
    while pending or running:
        while pending and len(running) < parallel:
            argv = pending.pop(0)
            running.append((argv, subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                                   stderr=subprocess.PIPE)))
        argv, p = running.pop(0)
        _, err = p.communicate()
        if p.returncode != 0:
            for _, q in running:
                q.kill()
                q.wait()
            sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(argv), err.decode()))
    return time.perf_counter() - t0, children_cpu() - cpu0


def convert_cmd(tool, root, out, extra=()):
    return [tool, "--raw_data_dir=" + root, "--output_dir=" + out, "--nogcs_upload",
            "--train_shards=%d" % TRAIN_SHARDS, "--validation_shards=%d" % VALIDATION_SHARDS,
            "--num_threads=1", "--quiet"] + list(extra)


def shard_digests(out):
    d = {}
    for split in ("train", "validation"):
        for n in sorted(os.listdir(os.path.join(out, split))):
            with open(os.path.join(out, split, n), "rb") as f:
                d[split + "/" + n] = hashlib.sha256(f.read()).hexdigest()
    return d


def shard_list(manifest_path):
    with open(manifest_path) as f:
        m = json.load(f)
    return [(s["file"], s["records"]) for s in m["shards"]]


def best_of(rounds, fn):
    runs = [fn() for _ in range(rounds)]
    return min(r[0] for r in runs), min(r[1] for r in runs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--images", type=int, default=2000)
    ap.add_argument("--tasks", default="64,256")
    ap.add_argument("--parallel", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="1 round")
    a = ap.parse_args()
    rounds = 1 if a.quick else a.rounds
    tool = os.path.abspath(os.path.join(a.build, "bin", "imagenet2tfrec"))
    if not os.access(tool, os.X_OK):
        sys.exit("%s not built" % tool)
    root = dataset(a.images)
    files = len(list_images(root))
    print("dataset: %d images in %s; %d + %d shards; at most %d processes at a time; best of %d"
          % (files, root, TRAIN_SHARDS, VALIDATION_SHARDS, a.parallel, rounds))
    work = tempfile.mkdtemp(prefix="tfrec-bench-scale-out-")
    try:
        one = os.path.join(work, "one")

        def one_run():
            shutil.rmtree(one, ignore_errors=True)
            return run_all([convert_cmd(tool, root, one)], 1)
        one_run()  # warm the page cache
        one_wall, one_cpu = best_of(rounds, one_run)
        reference = shard_digests(one)
        ref_list = shard_list(os.path.join(one, "manifest.json"))

        startup = best_of(rounds, lambda: run_all([[tool, "--version"]] * 20, 1))
        startup_cpu = startup[1] / 20
        shards = TRAIN_SHARDS + VALIDATION_SHARDS
        empty_out = os.path.join(work, "empty")

        def empty_run():  # task `shards` of shards+1 has no shard: scan + plan only
            shutil.rmtree(empty_out, ignore_errors=True)
            return run_all([convert_cmd(tool, root, empty_out,
                                        ["--task_index=%d" % shards,
                                         "--num_tasks=%d" % (shards + 1)])] * 1, 1)
        empty_wall, empty_cpu = best_of(rounds, empty_run)

        print()
        print("| run | wall s | CPU s | CPU per task over one process | merge s | output |")
        print("| --- | ---: | ---: | ---: | ---: | --- |")
        print("| one process (peer) | %.2f | %.2f | | | reference |" % (one_wall, one_cpu))
        ratios = []
        for t in [int(x) for x in a.tasks.split(",")]:
            out = os.path.join(work, "tasks-%d" % t)

            def tasks_run():
                shutil.rmtree(out, ignore_errors=True)
                return run_all([convert_cmd(tool, root, out, ["--task_index=%d" % i,
                                                              "--num_tasks=%d" % t])
                                for i in range(t)], a.parallel)
            wall, cpu = best_of(rounds, tasks_run)
            merge_wall, _ = run_all([[tool, "--merge_manifests", "--output_dir=" + out]], 1)
            same = shard_digests(out) == reference and \
                shard_list(os.path.join(out, "manifest.json")) == ref_list
            if not same:
                sys.exit("%d tasks: the union of the shards differs from one process's" % t)
            per_task = (cpu - one_cpu) / t
            print("| %d tasks | %.2f | %.2f | %.1f ms | %.3f | identical |"
                  % (t, wall, cpu, per_task * 1000, merge_wall))
            ratios.append((t, one_cpu / cpu, per_task))
        print()
        print("per-task fixed costs: process start-up %.1f ms CPU (`--version`); start-up + "
              "listing %d files + planning %d shards %.1f ms CPU, %.1f ms wall (a task with an "
              "empty share), i.e. %.2f us CPU per input file beyond start-up"
              % (startup_cpu * 1000, files, shards, empty_cpu * 1000, empty_wall * 1000,
                 (empty_cpu - startup_cpu) / files * 1e6))
        for t, r, per_task in ratios:
            print("RATIO cpu_one_vs_%d_tasks %.3f 0.8 one-process CPU / CPU of %d tasks "
                  "(%.1f ms extra per task)" % (t, r, t, per_task * 1000))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
