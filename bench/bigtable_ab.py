"""A/B of tfrec2bt builds (or environments) on the client CPU of one load.

Usage (from the repository root):
  /usr/bin/python3 bench/bigtable_ab.py WORKDIR ROUNDS CONTENDER...
A contender is a tfrec2bt binary, optionally prefixed "ENV=VALUE:" (one
variable). Each load goes into a fresh emulator (as bench/bigtable.sh
does), the contenders take turns round by round, and every load is checked
with `cbt count`. Prints per contender and row size the median client CPU
per GB [every round] and the median rows/s. ONLY=1k or ONLY=110k runs one
size. Not part of `make bench`: it compares our own builds, not a peer.
"""
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
os.environ.setdefault("TFREC_ROOT", os.path.dirname(HERE))
WORK = sys.argv[1]
sys.argv = [sys.argv[0], WORK] + sys.argv[2:]  # bigtable_bench reads argv[1]
import bigtable_bench as bb  # noqa: E402


def contender(spec, path, common):
    env, binary = {}, spec
    if ":" in spec and "=" in spec.split(":", 1)[0]:
        var, binary = spec.split(":", 1)
        k, v = var.split("=", 1)
        env = {k: v}
    return bb.Contender(spec, [binary, "--source_glob=" + path] + common, env)


def main():
    rounds, specs = int(sys.argv[2]), sys.argv[3:]
    sizes = {"1k": (200000, 1000), "110k": (5000, 110000)}
    only = os.environ.get("ONLY")
    os.makedirs(WORK, exist_ok=True)
    for tag, (n, size) in sizes.items():
        if only and only != tag:
            continue
        path = os.path.join(WORK, "ab-%d-%d.tfrecord" % (n, size))
        if not os.path.exists(path):
            bb.make(path, n, size)
        progress = os.path.join(WORK, "ab.progress")
        common = ["--project=p", "--bigtable_instance=i", "--bigtable_table=t", "--quiet",
                  "--progress_file=" + progress]
        cs = [contender(s, path, common) for s in specs]
        for _ in range(rounds):
            for c in cs:
                if os.path.exists(progress):
                    os.unlink(progress)
                c.runs.append(bb.run_once(c, n))
        gb = n * size / 1e9
        for c in cs:
            cpu = [r[1] / gb for r in c.runs]
            print("%7d B  %-44s client CPU %.3f s/GB [%s]  %.0f rows/s" % (
                size, c.name, statistics.median(cpu), " ".join("%.3f" % v for v in cpu),
                statistics.median(n / r[0] for r in c.runs)), flush=True)


if __name__ == "__main__":
    main()
