"""Benchmark: ImageNet-shaped tarballs -> sharded tf.Example TFRecords.

Three ways from the same tarballs (an outer tar of per-synset tars like
ILSVRC2012_img_train.tar, a flat validation tar; written by
tests/fixtures/make_tars.py from >= 2,000 photo-like ~110 KB JPEGs), all in
the page cache:
  * tar       - imagenet2tfrec --train_tar/--validation_tar: header pass,
                then conversion reading the images in place.
  * extract   - `tar -xf` of the outer tar, of each synset tar (each then
                removed, as imagenet_to_gcs.py does) and of the validation tar.
  * extract+convert - the same extraction, then imagenet2tfrec on the tree.
Rounds are interleaved (tar, extract+convert, ...) so a slower stretch of the
shared machine hits every variant; the medians are compared. Output
directories are removed between rounds, outside the timings.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures"))


def dataset(n):
    import make_images
    import make_tars
    cache = os.path.join(tempfile.gettempdir(), "tfrec-bench-imagenet-tar-%d" % n)
    stamp = os.path.join(cache, ".complete")
    if not os.path.exists(stamp):
        shutil.rmtree(cache, ignore_errors=True)
        os.makedirs(cache)
        print("generating %d images and their tarballs into %s (once) ..." % (n, cache),
              flush=True)
        tree = os.path.join(cache, "tree")
        val = n // 10
        make_images.cmd_samples(tree, n - val, val, 20, 2024)
        make_tars.official(tree, os.path.join(cache, "tars"))
        shutil.rmtree(tree)
        open(stamp, "w").close()
    return os.path.join(cache, "tars")


def warm(paths):
    for p in paths:
        with open(p, "rb") as f:
            while f.read(1 << 20):
                pass


def extract(tars, dest):
    train = os.path.join(dest, "train")
    os.makedirs(train)
    subprocess.run(["tar", "-xf", os.path.join(tars, "ILSVRC2012_img_train.tar"), "-C", train],
                   check=True)
    for name in sorted(os.listdir(train)):
        d = os.path.join(train, name[:-4])
        os.mkdir(d)
        subprocess.run(["tar", "-xf", os.path.join(train, name), "-C", d], check=True)
        os.unlink(os.path.join(train, name))
    val = os.path.join(dest, "validation")
    os.makedirs(val)
    subprocess.run(["tar", "-xf", os.path.join(tars, "ILSVRC2012_img_val.tar"), "-C", val],
                   check=True)
    shutil.copy(os.path.join(tars, "synset_labels.txt"), dest)


def convert(tool, args, out):
    subprocess.run([tool, "--quiet", "--output_dir", out, "--train_shards=16",
                    "--validation_shards=4"] + args, check=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--images", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    if a.quick:
        a.images, a.rounds = min(a.images, 1000), 3
    tool = os.path.join(a.build, "bin", "imagenet2tfrec")
    tars = dataset(a.images)
    train = os.path.join(tars, "ILSVRC2012_img_train.tar")
    val = os.path.join(tars, "ILSVRC2012_img_val.tar")
    mb = (os.path.getsize(train) + os.path.getsize(val)) / 1e6
    work = tempfile.mkdtemp(prefix="tfrec-bench-tar-")
    times = {"tar": [], "extract": [], "convert_tree": [], "extract+convert": []}
    try:
        for r in range(a.rounds):
            warm([train, val])
            out = os.path.join(work, "out-tar")
            t0 = time.monotonic()
            convert(tool, ["--train_tar", train, "--validation_tar", val, "--validation_labels",
                           os.path.join(tars, "synset_labels.txt")], out)
            times["tar"].append(time.monotonic() - t0)
            shutil.rmtree(out)
            warm([train, val])
            x = os.path.join(work, "x")
            t0 = time.monotonic()
            extract(tars, x)
            t1 = time.monotonic()
            out = os.path.join(work, "out-tree")
            convert(tool, ["--raw_data_dir", x], out)
            t2 = time.monotonic()
            times["extract"].append(t1 - t0)
            times["convert_tree"].append(t2 - t1)
            times["extract+convert"].append(t2 - t0)
            shutil.rmtree(out)
            shutil.rmtree(x)
            print("round %d: %s" % (r + 1, "  ".join("%s %.3f s" % (k, v[-1])
                                                    for k, v in times.items())), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    print("%d images, %.0f MB of tarballs, %d rounds (medians):" % (a.images, mb, a.rounds))
    for k, v in med.items():
        print("  %-16s %7.3f s  %7.1f MB/s" % (k, v, mb / v))
    print("RATIO imagenet_tar_vs_extract %.2f 1.0 extract alone / convert from tar (target: "
          "converting takes less than extracting)" % (med["extract"] / med["tar"]))
    print("RATIO imagenet_tar_vs_extract_convert %.2f 2.0 (extract + tree convert) / convert "
          "from tar (target: at most half)" % (med["extract+convert"] / med["tar"]))


if __name__ == "__main__":
    main()
