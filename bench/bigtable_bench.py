#!/usr/bin/python3
"""Bigtable load benchmark (run by bench/bigtable.sh).

For each data set (10,000 x 110 KB and 200,000 x 1 KB records) and each
client, start a fresh emulator, create the table, load, and measure wall
time, the client's CPU (user+sys of the process tree) and the emulator's
CPU (from /proc). Clients:
  (a) tfrec2bt with its defaults
  (b) tfrec2bt configured like the reference (100 rows per request, 1 in flight)
  (c) Go's official client (cloud.google.com/go/bigtable ApplyBulk) with its
      best settings found here (rows per request x 2 in flight)
  (d) for context, Go's client in the reference's pattern (100 rows, 1 in flight)
Every load is then counted with `cbt count` (must equal the record count).
"""
import os
import resource
import struct
import subprocess
import sys
import time

import crc32c

ROOT = os.environ.get("TFREC_ROOT", os.getcwd())
BUILD = os.environ.get("TFREC_BUILD", os.path.join(ROOT, "build"))
BIN = os.environ.get("TFREC2BT_BIN_DIR", os.path.join(BUILD, "bin"))
PEER = os.environ.get("BTPEER")
WORK = sys.argv[1]
REPEAT = int(os.environ.get("BENCH_REPEAT", "3"))
TICK = os.sysconf("SC_CLK_TCK")


def masked(data):
    c = crc32c.crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def make(path, n, size):
    if os.path.exists(path) and os.path.getsize(path) == n * (size + 16):
        return
    with open(path + ".tmp", "wb") as fp:
        block = os.urandom(size * 64 + 4096)
        for i in range(n):
            off = (i * 4099) % 4096
            rec = block[off + (i % 64) * size: off + (i % 64) * size + size]
            hdr = struct.pack("<Q", size)
            fp.write(hdr + struct.pack("<I", masked(hdr)) + rec + struct.pack("<I", masked(rec)))
    os.rename(path + ".tmp", path)


def proc_cpu(pid):
    with open("/proc/%d/stat" % pid) as fp:
        f = fp.read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK  # utime + stime


def run_once(cmd, n):
    out = subprocess.run([os.path.join(ROOT, "scripts/emulator.sh"), "start"],
                         capture_output=True, text=True, check=True).stdout.split()
    addr, pid = out[0], int(out[1])
    env = dict(os.environ, BIGTABLE_EMULATOR_HOST=addr)
    try:
        for args in (["createtable", "t"], ["createfamily", "t", "tfexample"]):
            subprocess.run(["cbt", "-project", "p", "-instance", "i"] + args, env=env,
                           check=True, capture_output=True)
        emu0 = proc_cpu(pid)
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        wall = time.monotonic() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        emu = proc_cpu(pid) - emu0
        if p.returncode != 0:
            raise SystemExit("load failed: %s\n%s" % (" ".join(cmd), p.stderr[-2000:]))
        cnt = subprocess.run(["cbt", "-project", "p", "-instance", "i", "count", "t"], env=env,
                             capture_output=True, text=True).stdout.strip()
        if cnt != str(n):
            raise SystemExit("%s: cbt count says %r, expected %d" % (" ".join(cmd), cnt, n))
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        return wall, cpu, emu
    finally:
        subprocess.run([os.path.join(ROOT, "scripts/emulator.sh"), "stop", str(pid)])


def measure(name, cmd, n, size):
    best = None
    for _ in range(REPEAT):
        r = run_once(cmd, n)
        if best is None or r[0] < best[0]:
            best = r
    wall, cpu, emu = best
    gb = n * size / 1e9
    row = {"name": name, "rows_s": n / wall, "mb_s": n * size / 1e6 / wall, "wall": wall,
           "cpu_gb": cpu / gb, "cpu": cpu, "emu": emu}
    print("  %-44s %9.0f rows/s %7.1f MB/s %6.2f s  client CPU %5.2f s (%5.2f s/GB)  emulator CPU %6.2f s"
          % (name, row["rows_s"], row["mb_s"], wall, cpu, row["cpu_gb"], emu), flush=True)
    return row


def main():
    os.makedirs(WORK, exist_ok=True)
    sets = [("10,000 rows x 110 KB", 10000, 110 * 1000, 250),
            ("200,000 rows x 1 KB", 200000, 1000, 2000)]
    t2b = os.path.join(BIN, "tfrec2bt")
    common = ["--project=p", "--bigtable_instance=i", "--bigtable_table=t", "--quiet",
              "--progress_file=" + os.path.join(WORK, "bench.progress")]
    for title, n, size, go_rows in sets:
        path = os.path.join(WORK, "bench-%d-%d.tfrecord" % (n, size))
        make(path, n, size)
        print("%s (%s, %.0f MB)" % (title, os.path.basename(path), n * size / 1e6), flush=True)
        # Untimed warm-up: the first load after a while on a fresh machine
        # ran up to 3x slower (the emulator's memory being faulted in), which
        # would otherwise always fall on (a), measured first.
        run_once([t2b, "--source_glob=" + path] + common, n)
        a = measure("(a) tfrec2bt defaults", [t2b, "--source_glob=" + path] + common, n, size)
        b = measure("(b) tfrec2bt --batch_rows=100 --max_inflight=1",
                    [t2b, "--source_glob=" + path, "--batch_rows=100", "--max_inflight=1"] + common,
                    n, size)
        c = None
        if PEER:
            c = measure("(c) Go ApplyBulk %d rows x 2 in flight" % go_rows,
                        [PEER, "load", "-table", "t", "-rows_per_request", str(go_rows),
                         "-inflight", "2", path], n, size)
            measure("(d) Go ApplyBulk 100 rows x 1 in flight",
                    [PEER, "load", "-table", "t", "-rows_per_request", "100",
                     "-inflight", "1", path], n, size)
        print("  ratio rows/s (a)/(b) = %.2f" % (a["rows_s"] / b["rows_s"]))
        if c:
            print("  ratio rows/s (a)/(c) = %.2f;  client CPU per GB (a)/(c) = %.2f"
                  % (a["rows_s"] / c["rows_s"], a["cpu_gb"] / c["cpu_gb"]))
        else:
            print("  (c) not measured: the Go peer could not be built")
        os.unlink(path)


if __name__ == "__main__":
    main()
