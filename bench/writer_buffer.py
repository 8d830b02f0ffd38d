#!/usr/bin/python3
"""CPU time of libtfrec's uncompressed writer against its output buffer size
(one write() per buffer): bench/python_c_peer writing 200,000 x 1 KiB and
2,000 x 110 KiB records to a file, each buffer size once per round, rounds
interleaved, medians of CPU seconds (user + system).

    /usr/bin/python3 bench/writer_buffer.py [--build DIR] [--rounds N] [SIZE ...]

SIZE in KiB, default 256 1024 4096; 0 means the library's default.
"""
import argparse
import os
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("TFREC_BUILD", os.path.join(ROOT, "build")))
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("sizes", nargs="*", type=int, default=[256, 1024, 4096])
    args = ap.parse_args()
    exe = os.path.join(args.build, "bench", "python_c_peer")
    with tempfile.TemporaryDirectory(prefix="tfrec-wbuf-") as tmp:
        out = os.path.join(tmp, "out.tfrecord")
        for size, count in ((1024, 200000), (110 * 1024, 2000)):
            times = {k: [] for k in args.sizes}
            for _ in range(args.rounds):
                for k in args.sizes:
                    line = subprocess.run([exe, "write", out, str(count), str(size), "NONE",
                                           str(k * 1024)], check=True, capture_output=True,
                                          text=True).stdout
                    times[k].append(float(line.split()[3]))
            base = times[args.sizes[0]]
            for k in args.sizes:
                t = times[k]
                ratio = statistics.median([b / x for b, x in zip(base, t)])
                print("%d x %d KiB  buffer %s  %.4f s (%.4f-%.4f)  %s's time / this: %.2fx"
                      % (count, size // 1024, "%d KiB" % k if k else "default", statistics.median(t),
                         min(t), max(t), "%d KiB" % args.sizes[0] if args.sizes[0] else "default",
                         ratio))


if __name__ == "__main__":
    main()
