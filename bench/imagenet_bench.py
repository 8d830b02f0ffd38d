"""Benchmark: JPEG tree -> sharded tf.Example TFRecords.

Peers measured in the same run on the same files (page cache warm):
  * cat       - `cat` of every image to /dev/null: the I/O bound.
  * python    - what imagenet_to_gcs.py does per image, without TensorFlow:
                read the file, full decode with PIL (the reference decodes
                every image to check it is RGB), build the tf.Example with
                python3-protobuf (classes generated from our proto/), frame
                it with python3-crc32c, write shards. Single-threaded, like
                the reference.
  * imagenet2tfrec at --verify=header|fast|full with 1 and 2 threads.

Images/s per core = images / (user + sys CPU seconds) of the process, so a
2-thread run is not credited for using two cores. The dataset (>= 2,000
photo-like JPEGs, ~110 KB and ~400x350 on average like ImageNet) is
generated once into /tmp and reused.
"""
import argparse
import importlib
import os
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures"))


def dataset(n):
    import make_images
    cache = os.path.join(tempfile.gettempdir(), "tfrec-bench-imagenet-%d" % n)
    stamp = os.path.join(cache, ".complete")
    if not os.path.exists(stamp):
        shutil.rmtree(cache, ignore_errors=True)
        os.makedirs(cache)
        val = n // 10
        print("generating %d images into %s (once) ..." % (n, cache), flush=True)
        make_images.cmd_samples(cache, n - val, val, 20, 2024)
        open(stamp, "w").close()
    return cache


def list_images(root):
    files = []
    for d, _, names in os.walk(root):
        files += [os.path.join(d, x) for x in names if x.endswith(".JPEG")]
    return sorted(files)


def measure(cmd, repeat=2, cleanup=None):
    """Run cmd `repeat` times; returns the best (wall seconds, cpu seconds of
    the child). The machine is shared, so the best run is the least noisy."""
    best = None
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(cmd, check=True)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if cleanup:
            cleanup()
        best = (wall, cpu) if best is None else (min(best[0], wall), min(best[1], cpu))
    return best


REF_SCRIPT = r'''
import importlib, io, os, struct, sys
import crc32c
from PIL import Image
pb_dir, out_dir, root = sys.argv[1:4]
sys.path.insert(0, pb_dir)
ex_pb2 = importlib.import_module("tensorflow.core.example.example_pb2")
def mask(c):
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF
def frame(rec):
    h = struct.pack("<Q", len(rec))
    return h + struct.pack("<I", mask(crc32c.crc32c(h))) + rec + struct.pack("<I", mask(crc32c.crc32c(rec)))
def example(data, name, synset, label, h, w):
    ex = ex_pb2.Example()
    f = ex.features.feature
    f["image/encoded"].bytes_list.value.append(data)
    f["image/height"].int64_list.value.append(h)
    f["image/width"].int64_list.value.append(w)
    f["image/colorspace"].bytes_list.value.append(b"RGB")
    f["image/channels"].int64_list.value.append(3)
    f["image/class/label"].int64_list.value.append(label)
    f["image/class/synset"].bytes_list.value.append(synset.encode())
    f["image/format"].bytes_list.value.append(b"JPEG")
    f["image/filename"].bytes_list.value.append(name.encode())
    return ex.SerializeToString()
train = []
for s in sorted(os.listdir(os.path.join(root, "train"))):
    for n in sorted(os.listdir(os.path.join(root, "train", s))):
        train.append((os.path.join(root, "train", s, n), s))
vdir = os.path.join(root, "validation")
vsyn = open(os.path.join(root, "synset_labels.txt")).read().split()
val = list(zip([os.path.join(vdir, n) for n in sorted(os.listdir(vdir))], vsyn))
labels = {s: i + 1 for i, s in enumerate(sorted({s for _, s in train + val}))}
for split, items, shards in (("train", train, 16), ("validation", val, 2)):
    for k in range(shards):
        part = items[k * len(items) // shards:(k + 1) * len(items) // shards]
        os.makedirs(os.path.join(out_dir, split), exist_ok=True)  # OUT/train/train-*, as the reference
        with open(os.path.join(out_dir, split, "%s-%05d-of-%05d" % (split, k, shards)), "wb") as out:
            for path, syn in part:
                data = open(path, "rb").read()
                img = Image.open(io.BytesIO(data))
                img = img.convert("RGB")  # full decode, as the reference's decode_jpeg
                w, h = img.size
                out.write(frame(example(data, os.path.basename(path), syn, labels[syn], h, w)))
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--images", type=int, default=2000)
    a = ap.parse_args()
    tool = os.path.join(a.build, "bin", "imagenet2tfrec")
    if not os.access(tool, os.X_OK):
        sys.exit("%s not built" % tool)
    root = dataset(a.images)
    files = list_images(root)
    n = len(files)
    mb = sum(os.path.getsize(f) for f in files) / 1e6
    print("dataset: %d images, %.1f MB (%.0f KB average) in %s" % (n, mb, mb * 1000 / n, root))
    work = tempfile.mkdtemp(prefix="tfrec-bench-imagenet-out-")
    rows = []
    try:
        # cat: the I/O bound; run twice, the first warms the page cache for everyone
        listing = os.path.join(work, "files.txt")
        with open(listing, "w") as f:
            f.write("\0".join(files))
        cat = ["sh", "-c", "xargs -0 cat < '%s' > /dev/null" % listing]
        measure(cat, 1)
        wall, cpu = measure(cat, 3)
        rows.append(("cat > /dev/null (read bound)", 1, wall, cpu))
        catw = os.path.join(work, "cat.out")
        wall, cpu = measure(["sh", "-c", "xargs -0 cat < '%s' > '%s'" % (listing, catw)], 3,
                            lambda: os.unlink(catw))
        rows.append(("cat > file (read + write bound)", 1, wall, cpu))

        pb_dir = os.path.join(work, "pb2")
        os.makedirs(pb_dir)
        subprocess.run(["protoc", "-I" + os.path.join(ROOT, "proto"), "--python_out=" + pb_dir,
                        os.path.join(ROOT, "proto/tensorflow/core/example/example.proto"),
                        os.path.join(ROOT, "proto/tensorflow/core/example/feature.proto")], check=True)
        ref = os.path.join(work, "ref.py")
        with open(ref, "w") as f:
            f.write(REF_SCRIPT)
        out = os.path.join(work, "py")
        os.makedirs(out)
        wall, cpu = measure(["/usr/bin/python3", ref, pb_dir, out, root], 1)
        rows.append(("python reference (PIL + protobuf + crc32c)", 1, wall, cpu))
        shutil.rmtree(out)

        for verify in ("header", "fast", "full"):
            for threads in (1, 2):
                out = os.path.join(work, "c")
                wall, cpu = measure([tool, "--quiet", "--raw_data_dir", root, "--output_dir", out,
                                     "--train_shards", "16", "--validation_shards", "2",
                                     "--verify", verify, "--num_threads", str(threads)],
                                    2 if verify == "header" else 1, lambda: shutil.rmtree(out))
                label = "imagenet2tfrec --verify=%s%s" % (verify, " (default)" if verify == "header" else "")
                rows.append((label, threads, wall, cpu))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    py_core = n / rows[2][3]
    cat_rate = n / rows[0][2]
    catw_rate = n / rows[1][2]
    print()
    print("| run | threads | wall s | images/s | MB/s | CPU s | images/s per core | vs python per core | vs cat>/dev/null | vs cat>file |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, threads, wall, cpu in rows:
        rate = n / wall
        core = n / cpu if cpu > 0 else float("inf")
        print("| %s | %d | %.2f | %.0f | %.0f | %.2f | %.0f | %.1fx | %.2fx | %.2fx |" % (
            name, threads, wall, rate, mb / wall, cpu, core, core / py_core, rate / cat_rate,
            rate / catw_rate))
    # The targets (bench/run.sh collects these lines): default mode, one
    # thread, per core vs Python; its rate vs cat; --verify=full per core.
    per_core = lambda r: n / r[3] / py_core if r[3] > 0 else float("inf")
    print("RATIO imagenet_default_vs_python_per_core %.2f 20 images per CPU-second" % per_core(rows[3]))
    print("RATIO imagenet_default_vs_cat %.2f 0.333 rate vs cat >/dev/null (within 3x)"
          % (n / rows[3][2] / cat_rate))
    print("RATIO imagenet_full_vs_python_per_core %.2f 2 --verify=full"
          % max(per_core(rows[7]), per_core(rows[8])))


if __name__ == "__main__":
    main()
