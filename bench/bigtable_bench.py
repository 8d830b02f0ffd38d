#!/usr/bin/python3
"""Bigtable load benchmark (run by bench/bigtable.sh).

Contenders, on the same emulator binary, each load into a FRESH emulator
(the emulator keeps every row in its Go heap: a second load into a used one
would pay for a bigger heap and overwrite rows, so only a fresh one gives
every contender the same start):
  (a) tfrec2bt with its defaults, reading a TFRecord file (page cache)
  (b) tfrec2bt in the reference loader's pattern: 100 rows per call, 1 in flight
  (c) Go's official client (cloud.google.com/go/bigtable Table.ApplyBulk) at
      its best on this machine: rows per call x calls in flight x connection
      pool size picked by a sweep over fewer rows
  (d) Go's client in the reference pattern (100 rows x 1 in flight, the
      default pool of 4 connections)
The Go peer makes every value, key and mutation in memory before its clock
starts and reports its own wall and CPU time of the timed part; tfrec2bt is
timed as a whole process (start-up and file reading included).
Rounds are interleaved (a b c d, then b c d a, ...); the report gives the
median and the range over the rounds, the client's CPU seconds (per GB) and
the emulator's CPU seconds (from /proc/PID/stat) and cores (CPU / wall).
Every load is checked with `cbt count`.

Environment: BENCH_QUICK=1 (fewer rows, a smaller sweep), BENCH_BT_SWEEP=small
(the smaller sweep with all the rows), BENCH_ROUNDS (3),
BENCH_BT_VARIANTS (extra tfrec2bt contenders for experiments:
"name|ENV=V ENV2=V|--flag=v --flag2=v|P;name2|...", P > 1: P tfrec2bt
processes at once over task shares, --task_index=i --num_tasks=P, timed
together).
Prints "RATIO <name> <value> <target>" lines (met when value >= target).
"""
import os
import resource
import statistics
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
QUICK = os.environ.get("BENCH_QUICK", "0") not in ("", "0")
# BENCH_BT_SWEEP=small: the quick run's 4-point Go sweep with all the rows
SMALL_SWEEP = QUICK or os.environ.get("BENCH_BT_SWEEP") == "small"
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
TICK = os.sysconf("SC_CLK_TCK")
EMU = os.path.join(ROOT, "scripts/emulator.sh")
CBT = ["cbt", "-project", "p", "-instance", "i"]


def masked(data):
    c = crc32c.crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def make(path, n, size):
    """n records of size bytes: windows of one random block (as the Go peer)."""
    with open(path + ".tmp", "wb") as fp:
        block = os.urandom(size * 64 + 4096)
        for i in range(n):
            off = (i * 4099) % 4096 + (i % 64) * size
            rec = block[off:off + size]
            hdr = struct.pack("<Q", size)
            fp.write(hdr + struct.pack("<I", masked(hdr)) + rec + struct.pack("<I", masked(rec)))
    os.rename(path + ".tmp", path)


def proc_cpu(pid):
    with open("/proc/%d/stat" % pid) as fp:
        f = fp.read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK  # utime + stime


def timed(cmd, env, emu_pid):
    """Run cmd to its end: (CompletedProcess, wall s, its CPU s, the
    emulator's CPU s meanwhile)."""
    emu0 = proc_cpu(emu_pid)
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    emu = proc_cpu(emu_pid) - emu0
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return p, wall, cpu, emu


class Contender:
    def __init__(self, name, cmd, env=None, go=False):
        self.name, self.cmd, self.env, self.go = name, cmd, env or {}, go
        self.runs = []  # (wall, client cpu, emulator cpu)


def run_once(c, n):
    """Fresh emulator + table, one timed load, checked count."""
    out = subprocess.run([EMU, "start"], capture_output=True, text=True, check=True).stdout.split()
    addr, pid = out[0], int(out[1])
    env = dict(os.environ, BIGTABLE_EMULATOR_HOST=addr, **c.env)
    try:
        for args in (["createtable", "t"], ["createfamily", "t", "tfexample"]):
            subprocess.run(CBT + args, env=env, check=True, capture_output=True)
        cmd = [a.replace("@PID@", str(pid)) for a in c.cmd]
        p, wall, cpu, emu = timed(cmd, env, pid)
        if p.returncode != 0:
            raise SystemExit("load failed: %s\n%s" % (" ".join(cmd), p.stderr[-2000:]))
        if c.go:  # the peer's own figures for its timed part
            f = dict(kv.split("=") for kv in p.stdout.split())
            wall, cpu, emu = float(f["wall"]), float(f["cpu"]), float(f["emu_cpu"])
        cnt = subprocess.run(CBT + ["count", "t"], env=env, capture_output=True,
                             text=True).stdout.strip()
        if cnt != str(n):
            raise SystemExit("%s: cbt count says %r, expected %d" % (c.name, cnt, n))
        return wall, cpu, emu
    finally:
        subprocess.run([EMU, "stop", str(pid)])


def go_cmd(n, size, rows, inflight, pool):
    return [PEER, "load", "-n", str(n), "-size", str(size), "-rows_per_request", str(rows),
            "-inflight", str(inflight), "-pool", str(pool), "-emulator_pid", "@PID@"]


def sweep(n, size, grid):
    """Go's best (rows, inflight, pool) by rows/s over n rows, one run each."""
    best = None
    print("  sweep of the Go peer, %d rows (rows/call x in flight x pool: rows/s)" % n)
    line = []
    for rows, inflight, pool in grid:
        wall, _, _ = run_once(Contender("sweep", go_cmd(n, size, rows, inflight, pool), go=True), n)
        line.append("%dx%dx%d: %.0f" % (rows, inflight, pool, n / wall))
        if best is None or wall < best[0]:
            best = (wall, rows, inflight, pool)
    for i in range(0, len(line), 6):
        print("    " + ";  ".join(line[i:i + 6]), flush=True)
    return best[1:]


def med(xs):
    return statistics.median(xs)


def summarize(c, n, size):
    gb = n * size / 1e9
    rates = [n / r[0] for r in c.runs]
    cpu = med([r[1] for r in c.runs])
    emu = med([r[2] for r in c.runs])
    walls = med([r[0] for r in c.runs])
    s = {"rows_s": med(rates), "lo": min(rates), "hi": max(rates), "cpu_gb": cpu / gb,
         "emu": emu, "emu_cores": med([r[2] / r[0] for r in c.runs]), "mb_s": med(rates) * size / 1e6}
    print("  %-46s %8.0f rows/s [%.0f-%.0f] %7.1f MB/s  client CPU %5.2f s/GB  "
          "emulator %5.2f CPU-s, %.2f cores  (median wall %.2f s)"
          % (c.name, s["rows_s"], s["lo"], s["hi"], s["mb_s"], s["cpu_gb"], emu, s["emu_cores"],
             walls), flush=True)
    return s


def ratio(name, value, target, note):
    print("RATIO %s %.3f %s %s" % (name, value, target, note), flush=True)


def split_cmd(procs, base, n):
    """procs tfrec2bt processes over task shares at once, as one command:
    each its own progress file; fails when any of them fails."""
    parts = []
    for i in range(procs):
        argv = [a if not a.startswith("--progress_file=") else "%s-%d" % (a, i) for a in base]
        argv += ["--num_records=%d" % n, "--task_index=%d" % i, "--num_tasks=%d" % procs]
        parts.append(" ".join("'%s'" % a for a in argv) + " & p%d=$!" % i)
    waits = "; ".join("wait $p%d || bad=1" % i for i in range(procs))
    return ["sh", "-c", "bad=0; " + "; ".join(parts) + "; " + waits + "; exit $bad"]


def variants(path, common, n):
    out = []
    spec = os.environ.get("BENCH_BT_VARIANTS", "")
    for item in filter(None, spec.split(";")):
        name, envs, flags, procs = (item.split("|") + ["", "", ""])[:4]
        env = dict(kv.split("=", 1) for kv in envs.split())
        cmd = [os.path.join(BIN, "tfrec2bt"), "--source_glob=" + path] + flags.split() + common
        if procs and int(procs) > 1:
            cmd = split_cmd(int(procs), cmd, n)
        out.append(Contender("(x) " + name, cmd, env))
    return out


def main():
    os.makedirs(WORK, exist_ok=True)
    t2b = os.path.join(BIN, "tfrec2bt")
    scale = 4 if QUICK else 1
    # (label, tag, rows, bytes, sweep rows, sweep grid)
    sets = [("10,000 rows x 110 KB", "110k", 10000 // scale, 110 * 1000, 2000 // scale,
             [(r, f, p) for r in (100, 250, 1000) for f in (1, 2, 4) for p in (1, 4)]
             if not SMALL_SWEEP else [(250, 2, 4), (1000, 2, 4), (250, 4, 4), (250, 2, 1)]),
            ("200,000 rows x 1 KB", "1k", 200000 // scale, 1000, 40000 // scale,
             [(r, f, p) for r in (1000, 5000, 20000) for f in (1, 2, 4) for p in (1, 4)]
             if not SMALL_SWEEP else [(5000, 2, 4), (20000, 2, 4), (5000, 4, 4), (5000, 2, 1)])]
    print("rounds: %d%s; fresh emulator per load; load average %s"
          % (ROUNDS, " (BENCH_QUICK: a quarter of the rows)" if QUICK else "",
             open("/proc/loadavg").read().split()[0]), flush=True)
    for title, tag, n, size, sweep_n, grid in sets:
        path = os.path.join(WORK, "bench-%d-%d.tfrecord" % (n, size))
        make(path, n, size)
        print("%s (%.0f MB)%s" % (title, n * size / 1e6, " (quick: %d rows)" % n if QUICK else ""),
              flush=True)
        common = ["--project=p", "--bigtable_instance=i", "--bigtable_table=t", "--quiet",
                  "--progress_file=" + os.path.join(WORK, "bench.progress")]
        a = Contender("(a) tfrec2bt defaults", [t2b, "--source_glob=" + path] + common)
        b = Contender("(b) tfrec2bt 100 rows x 1 in flight (reference)",
                      [t2b, "--source_glob=" + path, "--batch_rows=100", "--max_inflight=1"]
                      + common)
        cs = [a, b] + variants(path, common, n)
        c = d = None
        if PEER:
            rows, inflight, pool = sweep(sweep_n, size, grid)
            c = Contender("(c) Go ApplyBulk best: %d rows x %d in flight, pool %d"
                          % (rows, inflight, pool), go_cmd(n, size, rows, inflight, pool), go=True)
            d = Contender("(d) Go ApplyBulk 100 rows x 1 in flight, pool 4",
                          go_cmd(n, size, 100, 1, 4), go=True)
            cs += [c, d]
        # Untimed warm-up: the first load on an idle machine ran slower.
        run_once(a, n)
        for r in range(ROUNDS):
            order = cs[r % len(cs):] + cs[:r % len(cs)]
            for x in order:
                x.runs.append(run_once(x, n))
            print("  round %d done (load average %s)" % (r + 1, open("/proc/loadavg").read().split()[0]),
                  flush=True)
        s = {x.name: summarize(x, n, size) for x in cs}
        sa, sb = s[a.name], s[b.name]
        print("  (a)/(b) rows/s %.2f" % (sa["rows_s"] / sb["rows_s"]))
        if c:
            sc, sd = s[c.name], s[d.name]
            ratio("bigtable_%s_vs_go_best" % tag, sa["rows_s"] / sc["rows_s"], 1.0,
                  "tfrec2bt defaults / Go best, rows/s (moonshot 1.3)")
            ratio("bigtable_%s_cpu_go_over_ours" % tag, sc["cpu_gb"] / sa["cpu_gb"], 2.0,
                  "Go best / tfrec2bt client CPU per GB (= ours <= 0.5x Go)")
            ratio("bigtable_%s_vs_reference" % tag, sa["rows_s"] / sd["rows_s"], 1.5,
                  "tfrec2bt defaults / Go 100 rows x 1 in flight, rows/s")
        else:
            print("  (c), (d) not measured: the Go peer could not be built")
        os.unlink(path)


if __name__ == "__main__":
    main()
