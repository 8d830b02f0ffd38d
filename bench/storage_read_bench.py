#!/usr/bin/python3
"""gs:// sequential and dataset reads against peers on the same storage
test server (run by bench/storage_read.sh under tests/storage/with_emulator.sh).

One object of 64 MiB (TFRecord, 100 KiB records), read by
  verify     `tfrec verify -q gs://...` (every CRC checked)
  read_bytes tfrec.storage.read_bytes (the whole object into Python)
  dataset    one tfrec.Dataset epoch in order (bytes yielded to Python)
and by the official Node.js client (node_peer.js download, one GET, CRC32C
validated) as the peer: RATIO peer seconds / ours, target >= 1.0.

16 shards of 4 MiB, read as tfrec.Dataset epochs in order and shuffled
(4 reader threads), against curl fetching the same objects (4 transfers in
parallel, bodies dropped: what the server gives any client): RATIO target
>= 0.8. The shards have no FILE.idx, so opening the Dataset scans them
first (included); the same shards with their indexes in the bucket are
timed too (ds_seq_idx, ds_shuf_idx; printed, no target).

Interleaved rounds (the order rotates every round), medians.
Environment: BENCH_QUICK=1 (2 rounds), BENCH_ROUNDS.
"""
import os
import statistics
import struct
import subprocess
import sys
import time
import urllib.parse

import crc32c

ROOT = os.environ.get("TFREC_ROOT", os.getcwd())
BUILD = os.environ.get("TFREC_BUILD", os.path.join(ROOT, "build"))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("TFREC_LIBRARY", os.path.join(BUILD, "libtfrec.so"))
import tfrec  # noqa: E402
import tfrec.storage  # noqa: E402

WORK = sys.argv[1]
QUICK = os.environ.get("BENCH_QUICK", "0") not in ("", "0")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2" if QUICK else "5"))
ENDPOINT = os.environ["STORAGE_EMULATOR_HOST"]
TFREC = os.path.join(BUILD, "bin", "tfrec")
PEER = ["node", os.path.join(ROOT, "tests", "storage", "node_peer.js")]
MIB = 1 << 20
BUCKET = "bench"


def masked(data):
    c = crc32c.crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def tfrecord(path, size, rec, seed):
    block = os.urandom(4 * MIB)
    out = bytearray()
    j = 0
    while len(out) + 16 + rec <= size:
        off = (seed * 7919 + j * 104729) % (len(block) - rec)
        data = block[off:off + rec]
        hdr = struct.pack("<Q", rec)
        out += hdr + struct.pack("<I", masked(hdr)) + data + struct.pack("<I", masked(data))
        j += 1
    with open(path, "wb") as fp:
        fp.write(out)
    return j


def run(cmd):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def media_url(name):
    b, o = name[len("gs://"):].split("/", 1)
    return "%s/download/storage/v1/b/%s/o/%s?alt=media" % (ENDPOINT, b, urllib.parse.quote(o, safe=""))


def main():
    big_local = os.path.join(WORK, "big.tfrecord")
    nbig = tfrecord(big_local, 64 * MIB, 100 * 1024, 1)
    big = "gs://%s/seq/big.tfrecord" % BUCKET
    shards_local, shards = [], []
    nshard = 0
    for i in range(16):
        p = os.path.join(WORK, "train-%05d-of-00016" % i)
        nshard += tfrecord(p, 4 * MIB, 100 * 1024, i + 2)
        shards_local.append(p)
        shards.append("gs://%s/ds/train-%05d-of-00016" % (BUCKET, i))
    indexed = [s.replace("/ds/", "/ds-idx/") for s in shards]
    for src, dst in [(big_local, big)] + list(zip(shards_local, shards)) + \
            list(zip(shards_local, indexed)):
        with open(src, "rb") as fp:
            tfrec.storage.write_bytes(dst, fp.read())
    for name in indexed:
        tfrec.index_file(name)
    want = open(big_local, "rb").read()
    if tfrec.storage.read_bytes(big) != want:
        sys.exit("read_bytes gave other bytes than the file")
    peer_out = os.path.join(WORK, "peer.out")
    curl_list = os.path.join(WORK, "curl.cfg")
    with open(curl_list, "w") as fp:
        for s in shards:
            fp.write('url = "%s"\noutput = "/dev/null"\n' % media_url(s))

    def ds_epoch(files, shuffle, n):
        ds = tfrec.Dataset(files, shuffle=shuffle, seed=1, num_parallel_reads=4)
        k = sum(1 for _ in ds)
        ds.close()
        if k != n:
            sys.exit("dataset epoch gave %d records, not %d" % (k, n))

    cases = {
        "verify": lambda: run([TFREC, "verify", "-q", big]),
        "read_bytes": lambda: timed(lambda: tfrec.storage.read_bytes(big)),
        "dataset": lambda: timed(lambda: ds_epoch([big], False, nbig)),
        "node": lambda: run(PEER + ["download", big, peer_out]),
        "ds_seq": lambda: timed(lambda: ds_epoch(shards, False, nshard)),
        "ds_shuf": lambda: timed(lambda: ds_epoch(shards, True, nshard)),
        "ds_seq_idx": lambda: timed(lambda: ds_epoch(indexed, False, nshard)),
        "ds_shuf_idx": lambda: timed(lambda: ds_epoch(indexed, True, nshard)),
        "curl": lambda: run(["curl", "-sf", "--no-progress-meter", "--parallel", "--parallel-max", "4", "-K", curl_list]),
    }
    times = {k: [] for k in cases}
    names = list(cases)
    for r in range(ROUNDS):
        order = names[r % len(names):] + names[:r % len(names)]
        for k in order:
            times[k].append(cases[k]())
    if open(peer_out, "rb").read() != want:
        sys.exit("the Node client downloaded other bytes")
    med = {k: statistics.median(v) for k, v in times.items()}
    print("64 MiB object (%d records of 100 KiB), %d rounds, median seconds [min-max]:" % (nbig, ROUNDS))
    for k in ("verify", "read_bytes", "dataset", "node"):
        print("  %-11s %7.3f s  %7.1f MB/s  [%.3f-%.3f]" % (k, med[k], 64 * MIB / med[k] / 1e6,
                                                        min(times[k]), max(times[k])))
    print("16 shards of 4 MiB (%d records), same rounds:" % nshard)
    for k in ("ds_seq", "ds_shuf", "ds_seq_idx", "ds_shuf_idx", "curl"):
        print("  %-11s %7.3f s  %7.1f MB/s  [%.3f-%.3f]" % (k, med[k], 64 * MIB / med[k] / 1e6,
                                                        min(times[k]), max(times[k])))
    for k in ("verify", "read_bytes", "dataset"):
        print("RATIO gcs_seq_%s_vs_node %.2f 1.0" % (k, med["node"] / med[k]))
    print("RATIO gcs_dataset_seq_vs_curl %.2f 0.8" % (med["curl"] / med["ds_seq"]))
    print("RATIO gcs_dataset_shuffled_vs_curl %.2f 0.8" % (med["curl"] / med["ds_shuf"]))
    print("with FILE.idx in the bucket: in order %.2fx, shuffled %.2fx curl"
          % (med["curl"] / med["ds_seq_idx"], med["curl"] / med["ds_shuf_idx"]))


main()
