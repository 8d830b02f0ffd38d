#!/usr/bin/python3
"""Shuffle quality of Bigtable training reads (run by bench/bigtable_shuffle.sh).

One emulator holding ROWS rows (BENCH_SHUFFLE_ROWS, 20000; BENCH_QUICK=1:
5000) of prefix shuf_ with the loader's keys (tfrec.bigtable.row_key) and
their index as value. Each configuration reads EPOCHS epochs (3) through
tfrec.bigtable.Dataset with the same shuffle buffer (1% of the rows):
  (a) shuffle_ranges=256, 4 streams, cut at every ROWS/256-th loader key
      (split_keys), + the buffer
  (a2) the same without split_keys: cut by key arithmetic between the
      share's bounds (the default)
  (a3) (a) with one stream
  (b) the plain buffer over a sequential scan (one stream, key order)
Per epoch: the correlation between a row's key position and its output
position (0 for a perfect shuffle, 1 for key order), and the share of the
first 1% of outputs that comes from the first 10% of keys (0.10 for a
perfect shuffle); means over the epochs, and rows/s (the speed ratio
compares (a3) and (b), one stream each: on 2 shared cores more streams
slow every reader down, bench/RESULTS.md "Bigtable reads"). Every epoch
must yield every row exactly once.
"""
import os
import statistics
import subprocess
import sys
import time

ROOT = os.environ.get("TFREC_ROOT", os.getcwd())
BUILD = os.environ.get("TFREC_BUILD", os.path.join(ROOT, "build"))
os.environ.setdefault("TFREC_LIBRARY", os.path.join(BUILD, "libtfrec.so"))
sys.path.insert(0, os.path.join(ROOT, "python"))
import tfrec.bigtable as bt  # noqa: E402

WORK = sys.argv[1]
QUICK = os.environ.get("BENCH_QUICK", "0") not in ("", "0")
ROWS = int(os.environ.get("BENCH_SHUFFLE_ROWS", "5000" if QUICK else "20000"))
EPOCHS = int(os.environ.get("BENCH_SHUFFLE_EPOCHS", "3"))
RANGES, STREAMS = 256, 4
BUFFER = max(1, ROWS // 100)
EMU = os.path.join(ROOT, "scripts/emulator.sh")
P, I, T, PREFIX = "p", "i", "shuf", "shuf_"


def quality(values):
    pos = [int(v) for v in values]
    n = len(pos)
    if sorted(pos) != list(range(n)):
        raise SystemExit("an epoch did not yield every row exactly once")
    m = (n - 1) / 2
    var = sum((i - m) ** 2 for i in range(n))
    corr = sum((i - m) * (p - m) for i, p in enumerate(pos)) / var
    head = pos[:max(1, n // 100)]
    share = sum(1 for p in head if p < n // 10) / len(head)
    return corr, share


def run(name, **kw):
    ds = bt.Dataset(P, I, T, prefix=PREFIX.encode(), seed=1, shuffle_buffer=BUFFER, **kw)
    corrs, shares, rates = [], [], []
    for epoch in range(EPOCHS):
        ds.set_epoch(epoch)
        t0 = time.perf_counter()
        got = list(ds)
        rates.append(len(got) / (time.perf_counter() - t0))
        c, s = quality(got)
        corrs.append(c)
        shares.append(s)
    r = dict(corr=statistics.mean(corrs), share=statistics.mean(shares),
             rate=statistics.median(rates))
    print("%-58s corr %+.3f  first 1%% from first 10%% of keys %5.1f%%  %8.0f rows/s"
          % (name, r["corr"], 100 * r["share"], r["rate"]))
    return r


def main():
    out = subprocess.run([EMU, "start", os.path.join(WORK, "emu.log")], capture_output=True,
                         text=True, check=True)
    addr, pid = out.stdout.split()
    os.environ["BIGTABLE_EMULATOR_HOST"] = addr
    try:
        width = bt.key_width(ROWS)
        keys = [bt.row_key(PREFIX, i, width) for i in range(ROWS)]
        with bt.Writer(P, I, T, create_table=True) as w:
            for i, k in enumerate(keys):
                w.put(k, b"%d" % i)
        print("%d rows, %d epochs, shuffle buffer %d (1%%), seed 1" % (ROWS, EPOCHS, BUFFER))
        splits = keys[ROWS // RANGES::ROWS // RANGES] if ROWS >= 2 * RANGES else keys[1:]
        a = run("(a) shuffle_ranges=%d, %d streams, split_keys + buffer" % (RANGES, STREAMS),
                shuffle_ranges=RANGES, parallel_scans=STREAMS, split_keys=splits)
        run("(a2) shuffle_ranges=%d, %d streams, default cuts + buffer" % (RANGES, STREAMS),
            shuffle_ranges=RANGES, parallel_scans=STREAMS)
        a3 = run("(a3) shuffle_ranges=%d, 1 stream, split_keys + buffer" % RANGES,
                 shuffle_ranges=RANGES, split_keys=splits)
        b = run("(b) plain buffer over a sequential scan")
        print("RATIO bigtable_shuffle_decorrelation %.3f 0.9 (1 - abs(corr) of (a); (b): %.3f)"
              % (1 - abs(a["corr"]), 1 - abs(b["corr"])))
        print("RATIO bigtable_shuffle_head_spread %.3f 0.5 (0.10 / share of the first 1%% from "
              "the first 10%% of keys, (a); (b): %.3f)"
              % (0.10 / max(a["share"], 1e-9), 0.10 / max(b["share"], 1e-9)))
        print("RATIO bigtable_shuffle_rows_per_s_vs_plain_buffer %.2f 0.8 ((a3) / (b) rows/s, "
              "one stream each; (a) / (b): %.2f)" % (a3["rate"] / b["rate"], a["rate"] / b["rate"]))
    finally:
        subprocess.run([EMU, "stop", pid], check=False)


if __name__ == "__main__":
    main()
