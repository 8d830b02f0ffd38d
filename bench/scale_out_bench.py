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

A second tree (--listing_files hard links to those JPEGs in 1,000 synsets)
measures the listing + planning cost per input file at a larger scale, from
which the per-task cost at ImageNet's 1.33 M files follows.

RATIO lines (value >= target is met): empty-task CPU / extra CPU per task
>= 0.67: a task costs at most 1.5x its fixed start-up + listing + planning
beyond its share of the work (nothing grows with the task count).
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


def listing_tree(n, samples):
    """A tree of n images in 1,000 synsets (hard links to the benchmark's
    JPEGs, a file system allows only so many links to one: only the listing
    is measured), with 1,000 validation images; made once."""
    root = os.path.join(tempfile.gettempdir(), "tfrec-bench-listing-%d" % n)
    stamp = os.path.join(root, ".complete")
    if os.path.exists(stamp):
        return root
    shutil.rmtree(root, ignore_errors=True)
    synsets = ["n%08d" % (1440000 + 7 * i) for i in range(1000)]
    for k, syn in enumerate(synsets):
        d = os.path.join(root, "train", syn)
        os.makedirs(d)
        for j in range(n * (k + 1) // 1000 - n * k // 1000):
            os.link(samples[(k * 131 + j) % len(samples)], os.path.join(d, "%s_%d.JPEG" % (syn, j)))
    os.makedirs(os.path.join(root, "validation"))
    for j in range(1000):
        os.link(samples[j % len(samples)],
                os.path.join(root, "validation", "ILSVRC2012_val_%08d.JPEG" % (j + 1)))
    with open(os.path.join(root, "synset_labels.txt"), "w") as f:
        f.write("".join(synsets[j % 1000] + "\n" for j in range(1000)))
    open(stamp, "w").close()
    return root


def dask_row(a, root, work, reference, ref_list):
    """The same split through tfrec.distributed on a LocalCluster of
    --parallel single-thread worker processes (started before the clock):
    wall time only (the workers' CPU is not this process's children's until
    they exit)."""
    import logging
    os.environ["TFREC_LIBRARY"] = os.path.abspath(os.path.join(a.build, "libtfrec.so"))
    python_dir = os.path.join(os.path.dirname(HERE), "python")
    os.environ["PYTHONPATH"] = python_dir
    sys.path.insert(0, python_dir)
    import distributed
    import tfrec.distributed as td
    with distributed.LocalCluster(n_workers=a.parallel, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=logging.CRITICAL) as cl, \
            distributed.Client(cl) as client:
        for t in [int(x) for x in a.tasks.split(",")]:
            out = os.path.join(work, "dask-%d" % t)
            walls = []
            for _ in range(1 if a.quick else a.rounds):
                shutil.rmtree(out, ignore_errors=True)
                t0 = time.perf_counter()
                manifest = td.convert_images(client, root, out, num_tasks=t, progress=False,
                                             train_shards=TRAIN_SHARDS,
                                             validation_shards=VALIDATION_SHARDS, num_threads=1)
                walls.append(time.perf_counter() - t0)
            if shard_digests(out) != reference or \
                    [(s["file"], s["records"]) for s in manifest["shards"]] != ref_list:
                sys.exit("Dask, %d tasks: the output differs from one process's" % t)
            print("| %d tasks through Dask (%d workers), merge included | %.2f | | | | identical |"
                  % (t, a.parallel, min(walls)))


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
    ap.add_argument("--listing_files", type=int, default=200000,
                    help="train images of the tree whose listing cost is measured")
    ap.add_argument("--quick", action="store_true", help="1 round, 50,000-file listing")
    ap.add_argument("--no-dask", dest="dask", action="store_false",
                    help="leave out the tfrec.distributed rows")
    a = ap.parse_args()
    rounds = 1 if a.quick else a.rounds
    if a.quick:
        a.listing_files = min(a.listing_files, 50000)
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

        big = listing_tree(a.listing_files, list_images(root))
        big_out = os.path.join(work, "listing")

        def big_run():  # the same empty-share task over a tree of a.listing_files images
            shutil.rmtree(big_out, ignore_errors=True)
            return run_all([convert_cmd(tool, big, big_out,
                                        ["--task_index=%d" % shards,
                                         "--num_tasks=%d" % (shards + 1)])], 1)
        big_run()  # warm the directory cache
        big_wall, big_cpu = best_of(rounds, big_run)
        big_files = a.listing_files + 1000

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
        if a.dask:
            dask_row(a, root, work, reference, ref_list)
        print()
        print("per-task fixed costs: process start-up %.1f ms CPU (`--version`); start-up + "
              "listing %d files + planning %d shards %.1f ms CPU, %.1f ms wall (a task with an "
              "empty share), i.e. %.2f us CPU per input file beyond start-up"
              % (startup_cpu * 1000, files, shards, empty_cpu * 1000, empty_wall * 1000,
                 (empty_cpu - startup_cpu) / files * 1e6))
        per_file = (big_cpu - startup_cpu) / big_files
        print("the same empty-share task over %d files (hard links): %.3f s CPU, %.3f s wall: "
              "%.2f us CPU per input file; at ImageNet's 1,331,167 files %.1f s CPU per task"
              % (big_files, big_cpu, big_wall, per_file * 1e6, per_file * 1331167))
        for t, r, per_task in ratios:
            print("one-process CPU / CPU of %d tasks: %.3f" % (t, r))
        # Every task pays start-up + listing + planning and nothing more: the
        # extra CPU per task is within 1.5x of what an empty task costs.
        for t, r, per_task in ratios:
            print("RATIO fixed_cost_share_%d_tasks %.3f 0.67 empty-task CPU / extra CPU per task "
                  "(%.1f vs %.1f ms)" % (t, empty_cpu / per_task if per_task > 0 else 99.0,
                                         empty_cpu * 1000, per_task * 1000))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
