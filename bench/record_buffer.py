#!/usr/bin/python3
"""CPU time of libtfrec's uncompressed writer and reader against their
buffer size (one write() or read() per buffer): bench/python_c_peer writing
and then reading 200,000 x 1 KiB and 2,000 x 110 KiB records, each buffer
size once per round, rounds interleaved, medians of CPU seconds (user +
system) and of the per-round ratios against the first size.

    /usr/bin/python3 bench/record_buffer.py [--build DIR] [--rounds N] [SIZE ...]

SIZE in KiB, default 256 1024 4096; 0 means the library's default.
"""
import argparse
import os
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def label(k):
    return "%d KiB" % k if k else "default"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("TFREC_BUILD", os.path.join(ROOT, "build")))
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("sizes", nargs="*", type=int, default=[256, 1024, 4096])
    args = ap.parse_args()
    exe = os.path.join(args.build, "bench", "python_c_peer")

    def cpu(argv):
        line = subprocess.run([exe] + argv, check=True, capture_output=True, text=True).stdout
        return float(line.split()[3])

    with tempfile.TemporaryDirectory(prefix="tfrec-rbuf-") as tmp:
        out = os.path.join(tmp, "out.tfrecord")
        for size, count in ((1024, 200000), (110 * 1024, 2000)):
            for op in ("write", "read"):
                if op == "read":  # one file, written with the default settings
                    cpu(["write", out, str(count), str(size)])
                times = {k: [] for k in args.sizes}
                for _ in range(args.rounds):
                    for k in args.sizes:
                        if op == "write":
                            argv = ["write", out, str(count), str(size), "NONE", str(k * 1024)]
                        else:
                            argv = ["read", out, str(k * 1024)]
                        times[k].append(cpu(argv))
                base = times[args.sizes[0]]
                for k in args.sizes:
                    t = times[k]
                    ratio = statistics.median([b / x for b, x in zip(base, t)])
                    print("%-5s %d x %d KiB  buffer %-8s  %.4f s (%.4f-%.4f)  %s's time / this: %.2fx"
                          % (op, count, size // 1024, label(k), statistics.median(t), min(t), max(t),
                             label(args.sizes[0]), ratio))


if __name__ == "__main__":
    main()
