"""Benchmark: decoded 224x224 image batches into a torch DataLoader loop.

Peers, on the same JPEGs (page cache warm), 2 CPU workers each:
  * tfrec     - tfrec.ImagePipeline over the imagenet2tfrec shards: decode
                (DCT-scaled), Resize(256) + CenterCrop(224) on 2 C threads of
                the dataset, batches handed to DataLoader(batch_size=None,
                num_workers=0); tfrec_full the same without DCT scaling
                (the pixels of the torchvision peer).
  * torchvision - ImageFolder over the JPEG tree with Resize(256),
                CenterCrop(224), PILToTensor() (uint8, like ours and cheaper
                than ToTensor's float conversion), DataLoader(num_workers=1
                and 2, batch_size=64).
  * tfrec+PIL - tfrec.Dataset yielding the records' bytes, the Example
                parsed and the JPEG decoded with PIL in Python, same
                transforms, DataLoader(num_workers=2).

Each measurement runs in a fresh process that times only its loop: wall
seconds and CPU seconds (getrusage SELF + CHILDREN, so DataLoader workers,
reaped when the loop ends, are counted). Rounds interleave the peers;
medians are reported. The images (~110 KB, ~400x350 like ImageNet's) come
from bench/imagenet_bench.py's generator and are converted once with
imagenet2tfrec; both are cached in /tmp.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
BATCH = 64
WORKERS = 2


def cpu_seconds():
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def load_tfrec(build):
    os.environ["TFREC_LIBRARY"] = os.path.join(build, "libtfrec.so")
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import tfrec
    return tfrec


def pil_transform():
    from torchvision import transforms
    return transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224),
                               transforms.PILToTensor()])


def make_loader(mode, build, tree, shards):
    import torch
    if mode in ("tfrec", "tfrec_full"):
        tfrec = load_tfrec(build)
        pipe = tfrec.ImagePipeline(shards, size=224, resize=256, batch_size=BATCH,
                                   num_parallel_reads=WORKERS, dct_scaling=mode == "tfrec")
        return torch.utils.data.DataLoader(pipe, batch_size=None, num_workers=0)
    if mode.startswith("torchvision"):
        from torchvision import datasets
        ds = datasets.ImageFolder(tree, transform=pil_transform())
        return torch.utils.data.DataLoader(ds, batch_size=BATCH, num_workers=int(mode[-1]))
    if mode == "tfrec_pil":
        tfrec = load_tfrec(build)
        return torch.utils.data.DataLoader(pil_over_records(tfrec, shards), batch_size=BATCH,
                                           num_workers=WORKERS)
    raise SystemExit("unknown mode %s" % mode)


def pil_over_records(tfrec, shards):
    """tfrec.Dataset's bytes, parsed and decoded with PIL in the workers
    (the Dataset splits its records among the DataLoader's workers)."""
    import io

    from PIL import Image
    from torch.utils.data import IterableDataset

    class PilOverRecords(IterableDataset):
        def __init__(self):
            self.ds = tfrec.Dataset(shards)

        def __iter__(self):
            t = pil_transform()
            for rec in self.ds:
                f = tfrec.Example.parse(rec).to_dict()
                img = Image.open(io.BytesIO(f["image/encoded"][0])).convert("RGB")
                yield t(img), f["image/class/label"][0]

    return PilOverRecords()


def run_one(a):
    """Child process: one loop over every image, JSON on stdout."""
    import torch
    torch.set_num_threads(1)
    loader = make_loader(a.mode, a.build, a.tree, a.shards)
    c0, t0, n = cpu_seconds(), time.perf_counter(), 0
    for images, labels in loader:
        assert images.shape[1:] in ((224, 224, 3), (3, 224, 224)), images.shape
        n += len(labels)
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    print(json.dumps({"images": n, "wall": wall, "cpu": cpu}))


def mean_abs_diff(build, shards, n, dct_scaling):
    """ImagePipeline's center crops against torchvision's transforms on PIL
    for the first n records (the same order: the plan does not depend on
    threads)."""
    import io

    import numpy as np
    from PIL import Image
    tfrec = load_tfrec(build)
    t = pil_transform()
    diffs = []
    records = iter(tfrec.Dataset(shards, block_records=16))  # ImagePipeline's order
    for images, _ in tfrec.ImagePipeline(shards, batch_size=BATCH, dct_scaling=dct_scaling):
        for img in images:
            f = tfrec.Example.parse(next(records)).to_dict()
            ref = t(Image.open(io.BytesIO(f["image/encoded"][0])).convert("RGB"))
            ref = ref.permute(1, 2, 0).numpy()
            diffs.append(float(np.abs(img.astype(np.int16) - ref.astype(np.int16)).mean()))
        if len(diffs) >= n:
            break
    return statistics.mean(diffs[:n]), max(diffs[:n])


def prepare(build, n):
    import imagenet_bench
    # The generator keeps a tenth for validation: at least n for train/.
    root = imagenet_bench.dataset(-(-n * 10 // 900) * 100)
    out = os.path.join(tempfile.gettempdir(), "tfrec-bench-image-pipeline-%d" % n)
    stamp = os.path.join(out, ".complete")
    if not os.path.exists(stamp):
        subprocess.run([os.path.join(build, "bin", "imagenet2tfrec"), "--quiet", "--raw_data_dir",
                        root, "--output_dir", out, "--train_shards", "8", "--validation_shards",
                        "1"], check=True)
        open(stamp, "w").close()
    shards = sorted(os.path.join(out, "train", f) for f in os.listdir(os.path.join(out, "train"))
                    if not f.endswith(".idx"))
    return os.path.join(root, "train"), shards


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--images", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--mode")  # internal: run one measurement
    ap.add_argument("--tree")
    ap.add_argument("--shards", nargs="*")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    if a.mode:
        return run_one(a)
    if a.quick:
        a.images, a.rounds = 600, 2
    tree, shards = prepare(a.build, a.images)
    modes = ["tfrec", "tfrec_full", "torchvision_w1", "torchvision_w2", "tfrec_pil"]
    results = {m: [] for m in modes}
    for r in range(a.rounds):
        for m in modes:
            out = subprocess.run([sys.executable, os.path.abspath(__file__), "--build", a.build,
                                  "--mode", m, "--tree", tree, "--shards"] + shards,
                                 check=True, stdout=subprocess.PIPE, text=True).stdout
            res = json.loads(out.strip().splitlines()[-1])
            results[m].append(res)
            print("round %d %-15s %5d images %6.2f s wall %6.2f s CPU" % (
                r + 1, m, res["images"], res["wall"], res["cpu"]), flush=True)
    mad = {d: mean_abs_diff(a.build, shards, 256, d) for d in (True, False)}
    names = {"tfrec": "tfrec.ImagePipeline (2 C threads)",
             "tfrec_full": "tfrec.ImagePipeline, dct_scaling=False",
             "torchvision_w1": "torchvision ImageFolder + PIL, 1 worker",
             "torchvision_w2": "torchvision ImageFolder + PIL, 2 workers",
             "tfrec_pil": "tfrec.Dataset bytes + PIL, 2 workers"}
    rate, per_cpu = {}, {}
    print()
    print("| loader | images | images/s (median) | images per CPU-second (median) |")
    print("|---|---:|---:|---:|")
    for m in modes:
        rate[m] = statistics.median(x["images"] / x["wall"] for x in results[m])
        per_cpu[m] = statistics.median(x["images"] / x["cpu"] for x in results[m])
        print("| %s | %d | %.0f | %.0f |" % (names[m], results[m][0]["images"], rate[m],
                                             per_cpu[m]))
    best_tv = max(per_cpu["torchvision_w1"], per_cpu["torchvision_w2"])
    print()
    for d, label in ((True, "DCT-scaled decode"), (False, "full-size decode")):
        print("mean abs diff vs torchvision on PIL, %s (256 center crops, 0..255): "
              "mean %.2f, worst image %.2f" % (label, mad[d][0], mad[d][1]))
    print("RATIO image_pipeline_vs_torchvision_per_core %.2f 2.0 images per CPU-second"
          % (per_cpu["tfrec"] / best_tv))
    print("RATIO image_pipeline_vs_torchvision_rate %.2f 1.0 images/s, 2 workers each"
          % (rate["tfrec"] / max(rate["torchvision_w1"], rate["torchvision_w2"])))


if __name__ == "__main__":
    main()
