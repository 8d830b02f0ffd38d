#!/usr/bin/python3
"""Python TFRecord throughput: tfrec (ctypes over libtfrec) against a
pure-Python implementation (python3-crc32c + buffered file I/O) and against
C (bench/python_c_peer.c through libtfrec, and the `tfrec count` tool), all
measured in the same run on the same files.

    /usr/bin/python3 bench/python_bench.py [--build DIR] [--quick] [--markdown]

It also times tf.Example parsing into a dict, tfrec against python3-protobuf
(with classes generated from our proto/).

Each figure is the best of --repeat runs, in CPU seconds (user + system) of
the process doing the work: on a small machine shared with other jobs, wall
time mostly measures the others; with the files in the page cache and
nothing else running the two agree. "floor" rows time the kernel alone (the
whole file in one write(), or read into one preallocated buffer), which
bounds every implementation, C included. Targets (issue 5): tfrec >= 5x the
pure-Python implementation for 1 KiB records; within 1.5x of C for 110 KiB.
"""

import argparse
import os
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time

import crc32c as crc32c_mod

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ----------------------------------------------------------------- pure Python peer
_crc = crc32c_mod.crc32c
_len = struct.Struct("<Q")
_u32 = struct.Struct("<I")
_header = struct.Struct("<QI")


def _mask(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def py_write(path, records):
    with open(path, "wb") as f:
        write = f.write
        for r in records:
            n = _len.pack(len(r))
            write(n)
            write(_u32.pack(_mask(_crc(n))))
            write(r)
            write(_u32.pack(_mask(_crc(r))))


def py_read(path):
    with open(path, "rb") as f:
        read = f.read
        while True:
            head = read(12)
            if not head:
                return
            if len(head) < 12:
                raise ValueError("truncated header")
            length, lcrc = _header.unpack(head)
            if lcrc != _mask(_crc(head[:8])):
                raise ValueError("bad length crc")
            data = read(length)
            foot = read(4)
            if len(data) < length or len(foot) < 4:
                raise ValueError("truncated record")
            if _u32.unpack(foot)[0] != _mask(_crc(data)):
                raise ValueError("bad data crc")
            yield data


# ----------------------------------------------------------------- helpers
def cpu_seconds():
    """User + system CPU time of this process (see the module docstring)."""
    return time.process_time()


def best_of(repeat, fn):
    best = None
    for _ in range(repeat):
        t0 = cpu_seconds()
        fn()
        t = cpu_seconds() - t0
        best = t if best is None else min(best, t)
    return best


def consume(it):
    n = total = 0
    for r in it:
        n += 1
        total += len(r)
    return n, total


def make_records(count, size):
    pool = os.urandom(size + 4096)
    return [pool[(i * 61) % 4096:(i * 61) % 4096 + size] for i in range(count)]


def run_c_peer(build, args):
    exe = os.path.join(build, "bench", "python_c_peer")
    out = subprocess.run([exe] + args, check=True, capture_output=True, text=True).stdout
    return float(out.split()[3])


def run_tool_count(build, path):
    exe = os.path.join(build, "bin", "tfrec")
    t0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([exe, "count", path], check=True, capture_output=True)
    t1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (t1.ru_utime - t0.ru_utime) + (t1.ru_stime - t0.ru_stime)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("TFREC_BUILD", os.path.join(ROOT, "build")))
    ap.add_argument("--quick", action="store_true", help="smaller files (smoke run)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    os.environ.setdefault("TFREC_LIBRARY", os.path.join(build, "libtfrec.so"))
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import tfrec

    scale = 10 if args.quick else 1
    cases = [("1 KiB", 1024, 200000 // scale), ("110 KiB", 110 * 1024, 2000 // scale)]
    have_peer = os.access(os.path.join(build, "bench", "python_c_peer"), os.X_OK)
    have_tool = os.access(os.path.join(build, "bin", "tfrec"), os.X_OK)
    tmp = tempfile.mkdtemp(prefix="tfrec-pybench-")
    rows = []  # (case, op, impl, seconds, records, bytes)
    try:
        for label, size, count in cases:
            records = make_records(count, size)
            payload = size * count
            p_py, p_tf, p_c = (os.path.join(tmp, n) for n in ("py.tfrecord", "tf.tfrecord", "c.tfrecord"))

            def tf_write():
                with tfrec.TFRecordWriter(p_tf) as w:
                    for r in records:
                        w.write(r)

            def tf_write_many():
                with tfrec.TFRecordWriter(p_tf) as w:
                    w.write_many(records)

            t_py = best_of(args.repeat, lambda: py_write(p_py, records))
            t_tf = best_of(args.repeat, tf_write)
            t_many = best_of(args.repeat, tf_write_many)
            rows.append((label, "write", "pure Python", t_py, count, payload))
            rows.append((label, "write", "tfrec", t_tf, count, payload))
            rows.append((label, "write", "tfrec write_many", t_many, count, payload))
            if have_peer:
                t_c = min(run_c_peer(build, ["write", p_c, str(count), str(size)])
                          for _ in range(args.repeat))
                rows.append((label, "write", "C (libtfrec)", t_c, count, payload))
            with open(p_py, "rb") as a, open(p_tf, "rb") as b:
                blob = a.read()
                assert blob == b.read(), "pure-Python and tfrec files differ"

            # What the kernel alone costs: the file's bytes in one write() / read().
            def floor_write():
                with open(p_c, "wb") as f:
                    f.write(blob)

            whole = bytearray(len(blob))

            def floor_read():
                with open(p_tf, "rb", buffering=0) as f:
                    f.readinto(whole)
            rows.append((label, "write", "floor: one write() of the file",
                         best_of(args.repeat, floor_write), count, payload))
            blob = None  # release the file's bytes before the reads run

            expect = (count, payload)
            for impl, fn in (
                    ("pure Python", lambda: consume(py_read(p_tf))),
                    ("tfrec", lambda: consume(tfrec.TFRecordReader(p_tf))),
                    ("tfrec zero_copy", lambda: consume(tfrec.TFRecordReader(p_tf, zero_copy=True)))):
                assert fn() == expect, impl
                rows.append((label, "read", impl, best_of(args.repeat, fn), count, payload))
            if have_peer:
                t_c = min(run_c_peer(build, ["read", p_tf]) for _ in range(args.repeat))
                rows.append((label, "read", "C (libtfrec)", t_c, count, payload))
            if have_tool:
                t_tool = min(run_tool_count(build, p_tf) for _ in range(args.repeat))
                rows.append((label, "read", "`tfrec count` tool", t_tool, count, payload))
            rows.append((label, "read", "floor: one read() of the file",
                         best_of(args.repeat, floor_read), count, payload))
        rows += bench_examples(tfrec, tmp, args.repeat, scale)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    report(rows, args.markdown)


def bench_examples(tfrec, tmp, repeat, scale):
    """tf.Example parsing to a dict: tfrec vs python3-protobuf (classes
    generated from our proto/ with protoc into tmp)."""
    subprocess.run(["protoc", "-I" + os.path.join(ROOT, "proto"), "--python_out=" + tmp,
                    os.path.join(ROOT, "proto/tensorflow/core/example/example.proto"),
                    os.path.join(ROOT, "proto/tensorflow/core/example/feature.proto")], check=True)
    sys.path.insert(0, tmp)
    from tensorflow.core.example import example_pb2

    def pb_dict(data):
        m = example_pb2.Example.FromString(data)
        return {k: list(getattr(f, f.WhichOneof("kind")).value) for k, f in m.features.feature.items()}

    rnd = os.urandom
    imagenet = {"image/encoded": [rnd(110 * 1024)], "image/height": [375], "image/width": [500],
                "image/channels": [3], "image/colorspace": [b"RGB"], "image/class/label": [42],
                "image/class/synset": [b"n01440764"], "image/format": [b"JPEG"],
                "image/filename": [b"n01440764_10026.JPEG"]}
    small = {"id": [12345], "weights": [0.5, 1.5, 2.5], "text": [b"a short string"]}
    rows = []
    for label, d, count in (("ImageNet-style", imagenet, 2000 // scale),
                            ("3-feature", small, 20000 // scale)):
        data = tfrec.Example(d).serialize()
        assert tfrec.Example.parse(data).to_dict() == pb_dict(data) == d
        for impl, fn in (("python3-protobuf", pb_dict),
                         ("tfrec", lambda x: tfrec.Example.parse(x).to_dict())):
            t = best_of(repeat, lambda: [fn(data) for _ in range(count)])
            rows.append((label + " Example", "parse", impl, t, count, len(data) * count))
    return rows


def report(rows, markdown):
    base = {}
    for case, op, impl, t, n, b in rows:
        base.setdefault((case, op, impl), t)
    if markdown:
        print("| records | op | implementation | seconds | MB/s | records/s | tfrec speed-up | vs C |")
        print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for case, op, impl, t, n, b in rows:
        py = base.get((case, op, "pure Python")) or base.get((case, op, "python3-protobuf"))
        c = base.get((case, op, "C (libtfrec)"))
        speed = "%.1fx faster than the Python peer" % (py / t) if impl.startswith("tfrec") and py else ""
        vs_c = ("%.2fx C's time" % (t / c) if c and impl != "C (libtfrec)"
                and not impl.startswith("floor") else "")
        if markdown:
            print("| %d x %s | %s | %s | %.4f | %.0f | %.0f | %s | %s |"
                  % (n, case, op, impl, t, b / t / 1e6, n / t,
                     speed.replace(" faster than the Python peer", ""), vs_c.replace(" C's time", "")))
        else:
            print("%-8s %-5s %-20s %8.4f s %8.0f MB/s %10.0f rec/s  %s %s"
                  % (case, op, impl, t, b / t / 1e6, n / t, speed, vs_c))


if __name__ == "__main__":
    main()
