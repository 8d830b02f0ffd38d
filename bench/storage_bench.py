#!/usr/bin/python3
"""Cloud Storage benchmark (run by bench/storage.sh under
tests/storage/with_emulator.sh, so both clients talk to the same storage
test server in the same run).

Workloads:
  big-write / big-read        one object of 1 GiB (BENCH_QUICK: 256 MiB)
  shards-write / shards-read  256 TFRecord shards of 4 MiB (QUICK: 64)
  tfrecord-read               the shards' records read through libtfrec
                              from gs:// and from the local files
  http-floor                  the same gs:// reading next to curl fetching
                              the same objects (8 in parallel, bodies
                              dropped): what this server gives any client
Contenders: libtfrec-storage through build/bench/storage (bench/storage.c;
library defaults: 16 MiB resumable chunks, 4 ranged reads in flight), and
the official Node.js client @google-cloud/storage (tests/storage/
node_peer.js), CRC32C validation on for both. Before the rounds a sweep
picks each contender's best setting per workload: the Node client's upload
mode (one streamed resumable request, 16 or 64 MiB chunks), download mode
(one GET, or its transfer manager's parallel ranges) and concurrency for
the shards; libtfrec's thread count for the shards. Then interleaved
rounds (the order flips every round); the report gives medians and ranges,
client CPU seconds per GB (the child's rusage) and the server's CPU seconds
per GB and cores (from /proc/PID/stat): a server near 1.0 core is the
limit, not the client.

Every written object is checked against the local CRC32C; every read copy
against the source. Prints "RATIO <name> <value> <target>" lines (met when
value >= target): MB/s ours/peer >= 1.2; client CPU per GB peer/ours >= 2;
TFRecord reading, local seconds / gs:// seconds >= 0.5 (within 2x).
Environment: BENCH_QUICK=1, BENCH_ROUNDS (default 3; QUICK 2), BENCH_ONLY
(comma list of workload names: run only those).
"""
import base64
import json
import os
import statistics
import struct
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import crc32c

ROOT = os.environ.get("TFREC_ROOT", os.getcwd())
BUILD = os.environ.get("TFREC_BUILD", os.path.join(ROOT, "build"))
WORK = sys.argv[1]
QUICK = os.environ.get("BENCH_QUICK", "0") not in ("", "0")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2" if QUICK else "3"))
ENDPOINT = os.environ["STORAGE_EMULATOR_HOST"]
SERVER_PID = int(os.environ["TFREC_TEST_GCS_PID"])
TICK = os.sysconf("SC_CLK_TCK")
OURS = os.path.join(BUILD, "bench", "storage")
PEER = ["node", os.path.join(ROOT, "tests", "storage", "node_peer.js")]
MIB = 1 << 20
BIG = (256 if QUICK else 1024) * MIB
SHARDS = 64 if QUICK else 256
SHARD = 4 * MIB
BUCKET = "bench"


def proc_cpu(pid):
    with open("/proc/%d/stat" % pid) as fp:
        f = fp.read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK


def crc_b64_of(path):
    c = 0
    with open(path, "rb") as fp:
        while True:
            b = fp.read(8 * MIB)
            if not b:
                break
            c = crc32c.crc32c(b, c)
    return base64.b64encode(c.to_bytes(4, "big")).decode()


def masked(data):
    c = crc32c.crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def make_inputs():
    """The big file (random) and the shards (TFRecord, ~100 KiB records)."""
    big = os.path.join(WORK, "big.bin")
    with open(big, "wb") as fp:
        for _ in range(BIG // (64 * MIB)):
            fp.write(os.urandom(64 * MIB))
    sdir = os.path.join(WORK, "shards")
    os.makedirs(sdir)
    block = os.urandom(8 * MIB)
    rec = 100 * 1024
    names = []
    for i in range(SHARDS):
        name = os.path.join(sdir, "train-%05d-of-%05d" % (i, SHARDS))
        out = bytearray()
        j = 0
        while len(out) + 16 + rec <= SHARD:
            off = ((i * 7919 + j * 104729) % (len(block) - rec))
            data = block[off:off + rec]
            hdr = struct.pack("<Q", rec)
            out += hdr + struct.pack("<I", masked(hdr)) + data + struct.pack("<I", masked(data))
            j += 1
        with open(name, "wb") as fp:
            fp.write(out)
        names.append(name)
    return big, names


def write_list(path, pairs):
    with open(path, "w") as fp:
        for a, b in pairs:
            fp.write("%s %s\n" % (a, b))
    return path


def object_meta(name):
    url = "%s/storage/v1/b/%s/o/%s" % (ENDPOINT, BUCKET, urllib.parse.quote(name, safe=""))
    with urllib.request.urlopen(url, timeout=60) as r:
        return json.load(r)


class Result:
    def __init__(self):
        self.runs = []  # (seconds, client cpu, server cpu, bytes)

    def add(self, run):
        self.runs.append(run)

    def med(self, i):
        return statistics.median(r[i] for r in self.runs)

    def mbps(self):
        return statistics.median(r[3] / 1e6 / r[0] for r in self.runs)

    def mbps_range(self):
        v = [r[3] / 1e6 / r[0] for r in self.runs]
        return min(v), max(v)

    def cpu_per_gb(self):
        return statistics.median(r[1] / (r[3] / 1e9) for r in self.runs)

    def server_per_gb(self):
        return statistics.median(r[2] / (r[3] / 1e9) for r in self.runs)

    def server_cores(self):
        return statistics.median(r[2] / r[0] for r in self.runs)


def timed(cmd, nbytes):
    """Runs cmd; returns (wall, client CPU, server CPU, bytes)."""
    err = os.path.join(WORK, "stderr")
    s0 = proc_cpu(SERVER_PID)
    t0 = time.monotonic()
    with open(err, "wb") as ef:
        p = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.DEVNULL, stderr=ef)
    # wait4, not Popen.wait: it gives the child's own CPU time.
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    s1 = proc_cpu(SERVER_PID)
    if p.returncode != 0:
        with open(err, "rb") as ef:
            sys.exit("bench: %s failed: %s" % (" ".join(map(str, cmd[:4])), ef.read().decode()[-2000:]))
    return wall, ru.ru_utime + ru.ru_stime, s1 - s0, nbytes


class Workload:
    def __init__(self, name, nbytes, ours, peer, check, who=("libtfrec", "Node client")):
        self.name, self.nbytes, self.check, self.who = name, nbytes, check, who
        self.ours_settings, self.peer_settings = ours, peer  # [(label, cmd)]
        self.ours = self.peer = None  # chosen (label, cmd)
        self.res = {"ours": Result(), "peer": Result()}

    def sweep(self):
        for side in ("ours", "peer"):
            settings = getattr(self, side + "_settings")
            if len(settings) == 1:
                setattr(self, side, settings[0])
                continue
            best = None
            for label, cmd in settings:
                r = timed(cmd, self.nbytes)
                self.check(side)
                mbps = self.nbytes / 1e6 / r[0]
                print("  sweep %-13s %-5s %-34s %7.1f MB/s" % (self.name, side, label, mbps), flush=True)
                if best is None or mbps > best[0]:
                    best = (mbps, label, cmd)
            setattr(self, side, (best[1], best[2]))

    def round(self, flip):
        for side in (("peer", "ours") if flip else ("ours", "peer")):
            self.res[side].add(timed(getattr(self, side)[1], self.nbytes))
            self.check(side)


def main():
    os.makedirs(WORK, exist_ok=True)
    t0 = time.monotonic()
    big, shards = make_inputs()
    big_crc = crc_b64_of(big)
    shard_crc = {os.path.basename(s): crc_b64_of(s) for s in shards}
    print("inputs: %d MiB object, %d shards of %d MiB (%.0f s)" %
          (BIG // MIB, SHARDS, SHARD // MIB, time.monotonic() - t0), flush=True)
    # Sources for the read workloads, written once by libtfrec.
    subprocess.run([OURS, "copy", big, "gs://%s/src/big" % BUCKET], check=True, stdout=subprocess.DEVNULL)
    lst = write_list(os.path.join(WORK, "src.list"),
                     [(s, "gs://%s/src/shards/%s" % (BUCKET, os.path.basename(s))) for s in shards])
    subprocess.run([OURS, "copy-many", "8", lst], check=True, stdout=subprocess.DEVNULL)

    def check_object(name, want):
        got = object_meta(name)["crc32c"]
        if got != want:
            sys.exit("bench: gs://%s/%s has crc32c %s, want %s" % (BUCKET, name, got, want))

    def check_file(path, want):
        if crc_b64_of(path) != want:
            sys.exit("bench: %s differs from its source" % path)

    outs = {side: os.path.join(WORK, "out-" + side) for side in ("ours", "peer")}
    for d in outs.values():
        os.makedirs(d)
    big_url = {side: "gs://%s/%s/big" % (BUCKET, side) for side in ("ours", "peer")}
    up_list = {side: write_list(os.path.join(WORK, "up-%s.list" % side),
                                [(s, "gs://%s/%s/shards/%s" % (BUCKET, side, os.path.basename(s))) for s in shards])
               for side in ("ours", "peer")}
    down_list = {side: write_list(os.path.join(WORK, "down-%s.list" % side),
                                  [("gs://%s/src/shards/%s" % (BUCKET, os.path.basename(s)),
                                    os.path.join(outs[side], os.path.basename(s))) for s in shards])
                 for side in ("ours", "peer")}
    big_out = {side: os.path.join(outs[side], "big") for side in ("ours", "peer")}
    src_big = "gs://%s/src/big" % BUCKET
    gs_shards = ["gs://%s/src/shards/%s" % (BUCKET, os.path.basename(s)) for s in shards]
    nshard_bytes = sum(os.path.getsize(s) for s in shards)
    sweep_n = [4, 8, 16]
    chunks = [("one streamed request", []), ("16 MiB chunks", ["--chunk", 16 * MIB]),
              ("64 MiB chunks", ["--chunk", 64 * MIB])]
    downs = [("one GET", []), ("ranges 32 MiB x4", ["--chunks", 32 * MIB, "--concurrency", 4]),
             ("ranges 64 MiB x8", ["--chunks", 64 * MIB, "--concurrency", 8])]
    if QUICK:
        chunks, downs, sweep_n = chunks[:2], downs[:2], [8, 16]

    workloads = [
        Workload("big-write", BIG,
                 [("defaults", [OURS, "copy", big, big_url["ours"]])],
                 [(l, PEER + ["upload", big, big_url["peer"]] + a) for l, a in chunks],
                 lambda side: check_object("%s/big" % side, big_crc)),
        Workload("big-read", BIG,
                 [("defaults", [OURS, "copy", src_big, big_out["ours"]])],
                 [(l, PEER + ["download", src_big, big_out["peer"]] + a) for l, a in downs],
                 lambda side: check_file(big_out[side], big_crc)),
        Workload("shards-write", nshard_bytes,
                 [("%d threads" % n, [OURS, "copy-many", n, up_list["ours"]]) for n in sweep_n],
                 [("concurrency %d" % n, PEER + ["upload-many", up_list["peer"], n]) for n in sweep_n],
                 lambda side: [check_object("%s/shards/%s" % (side, k), v) for k, v in
                               list(shard_crc.items())[::17]]),
        Workload("shards-read", nshard_bytes,
                 [("%d threads" % n, [OURS, "copy-many", n, down_list["ours"]]) for n in sweep_n],
                 [("concurrency %d" % n, PEER + ["download-many", down_list["peer"], n]) for n in sweep_n],
                 lambda side: [check_file(os.path.join(outs[side], k), v) for k, v in
                               list(shard_crc.items())[::17]]),
    ]
    print("sweep (each setting once):", flush=True)
    # TFRecord reading: the same program over gs:// and over the local files.
    tf = Workload("tfrecord-read", nshard_bytes,
                  [("gs:// 8 threads", [OURS, "records", 8] + gs_shards)],
                  [("local 8 threads", [OURS, "records", 8] + shards)],
                  lambda side: None, ("libtfrec", "libtfrec"))
    # The server's own limit: curl fetching the same objects, nothing parsed.
    curl_cfg = os.path.join(WORK, "curl.cfg")
    with open(curl_cfg, "w") as fp:
        for s in shards:
            fp.write('url = "%s/storage/v1/b/%s/o/%s?alt=media"\noutput = "/dev/null"\n' % (
                ENDPOINT, BUCKET, urllib.parse.quote("src/shards/" + os.path.basename(s), safe="")))
    floor = Workload("http-floor", nshard_bytes,
                     [("gs:// 8 threads", [OURS, "records", 8] + gs_shards)],
                     [("curl, 8 parallel", ["curl", "-sS", "--fail", "--parallel", "--parallel-max", 8,
                                            "-K", curl_cfg])],
                     lambda side: None, ("libtfrec", "curl"))
    only = [n for n in os.environ.get("BENCH_ONLY", "").split(",") if n]
    extra = [tf, floor]
    if only:
        workloads = [w for w in workloads if w.name in only]
        extra = [w for w in extra if w.name in only]
        print("only: %s" % ", ".join(w.name for w in workloads + extra), flush=True)
    for w in workloads:
        w.sweep()
    for w in extra:
        w.sweep()
    print("rounds: %d, interleaved" % ROUNDS, flush=True)
    for i in range(ROUNDS):
        for w in workloads + extra:
            w.round(i % 2 == 1)
        print("  round %d done (%.0f s)" % (i + 1, time.monotonic() - t0), flush=True)

    print()
    print("| workload | client | setting | MB/s (range) | client CPU s/GB | server CPU s/GB | server cores |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: |")
    for w in workloads + extra:
        for side, who in zip(("ours", "peer"), w.who):
            r = w.res[side]
            lo, hi = r.mbps_range()
            print("| %s | %s | %s | %.0f (%.0f-%.0f) | %.2f | %.2f | %.2f |" %
                  (w.name, who, getattr(w, side)[0], r.mbps(), lo, hi, r.cpu_per_gb(),
                   r.server_per_gb(), r.server_cores()))
    print()
    names = {"big-write": "write", "big-read": "read", "shards-write": "shards_write",
             "shards-read": "shards_read"}
    for w in workloads:
        o, p = w.res["ours"], w.res["peer"]
        print("RATIO storage_%s_mbps %.2f 1.2" % (names[w.name], o.mbps() / p.mbps()))
        print("RATIO storage_%s_cpu %.2f 2" % (names[w.name], p.cpu_per_gb() / max(o.cpu_per_gb(), 1e-9)))
    if tf in extra:
        print("RATIO storage_gs_vs_local_tfrecord_read %.2f 0.5" %
              (tf.res["peer"].med(0) / tf.res["ours"].med(0)))
    if floor in extra:
        # Not a target: how close the record reading gets to the server's limit.
        print("INFO storage_tfrecord_read_vs_curl %.2f" %
              (floor.res["peer"].med(0) / floor.res["ours"].med(0)))


if __name__ == "__main__":
    main()
