#!/usr/bin/python3
"""Helpers for tests/integration/bigtable.sh, independent of libtfrec.

  gen DIR NFILES NRECORDS SEED [BIG_BYTES [MAX_BYTES]]
                                             write TFRecord shards + manifest
  head OUT NRECORDS SRC...                   the first NRECORDS of SRC... into OUT
  verify-tfrecord FILE MANIFEST FIRST END    records of FILE == manifest FIRST..END-1
  verify CBT_DUMP MANIFEST PREFIX NUM_RECORDS FIRST END [reversed]
      parse `cbt read` output and check rows FIRST..END-1 are exactly the
      expected keys, once each, one tfexample:example cell each, values
      byte-identical (SHA-256) to the source records.
  keys CBT_DUMP                               print the row keys found
  manifest OUT SRC...                        manifest (index, size, SHA-256) of
                                             the records of SRC... in order

TFRecord framing and the CRC are written here with python3-crc32c, and the
expected keys with the reference's formula, so nothing is shared with the C
code under test.
"""
import hashlib
import os
import random
import re
import struct
import sys

import crc32c


def masked(data):
    c = crc32c.crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(data):
    hdr = struct.pack("<Q", len(data))
    return hdr + struct.pack("<I", masked(hdr)) + data + struct.pack("<I", masked(data))


def record_bytes(rng, i, size):
    if size <= 64 * 1024:
        return rng.randbytes(size)  # arbitrary binary, every byte value
    # Large records: printable text with a binary head, so `cbt read`'s quoted
    # output stays cheap to decode while still testing escapes.
    unit = bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz0123456789 ") for _ in range(4096))
    head = rng.randbytes(256) + b"record %d" % i
    body = (unit * (size // len(unit) + 1))[: size - len(head)]
    return head + body


def gen(out, nfiles, nrecords, seed, big, max_bytes):
    rng = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    sizes = []
    for i in range(nrecords):
        r = rng.random()
        if i == 7:
            sizes.append(0)  # an empty record is a valid cell
        elif r < 0.004:
            # several MB, under the 4 MiB that `cbt` can receive
            sizes.append(rng.randint(1 << 20, 4000000))
        elif r < 0.1:
            sizes.append(rng.randint(20000, 200000))
        else:
            sizes.append(rng.randint(1, 12000))
    if max_bytes:
        sizes = [min(n, max_bytes) for n in sizes]
    if big:
        sizes[nrecords // 2] = big  # one record near the request limit
    per = (nrecords + nfiles - 1) // nfiles
    manifest = []
    idx = 0
    for f in range(nfiles):
        name = os.path.join(out, "data-%05d-of-%05d" % (f, nfiles))
        with open(name, "wb") as fp:
            for _ in range(per):
                if idx == nrecords:
                    break
                data = record_bytes(rng, idx, sizes[idx])
                fp.write(frame(data))
                manifest.append("%d %d %s" % (idx, len(data), hashlib.sha256(data).hexdigest()))
                idx += 1
    with open(os.path.join(out, "manifest.txt"), "w") as fp:
        fp.write("\n".join(manifest) + "\n")


def read_records(path):
    with open(path, "rb") as fp:
        data = fp.read()
    pos = 0
    while pos < len(data):
        (length,) = struct.unpack("<Q", data[pos:pos + 8])
        rec = data[pos + 12:pos + 12 + length]
        assert struct.unpack("<I", data[pos + 12 + length:pos + 16 + length])[0] == masked(rec)
        yield rec
        pos += 16 + length


ESC = re.compile(rb'\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[abfnrtv\\"\'])')
SIMPLE = {b"a": b"\a", b"b": b"\b", b"f": b"\f", b"n": b"\n", b"r": b"\r", b"t": b"\t",
          b"v": b"\v", b"\\": b"\\", b'"': b'"', b"'": b"'"}


def go_unquote(q):
    """Inverse of Go's %q (strconv.Quote), which `cbt read` prints values with."""
    assert q[:1] == b'"' and q[-1:] == b'"', q[:40]

    def rep(m):
        s = m.group(1)
        if s[:1] == b"x":
            return bytes([int(s[1:], 16)])
        if s[:1] in (b"u", b"U"):
            return chr(int(s[1:], 16)).encode("utf-8")
        return SIMPLE[s]

    return ESC.sub(rep, q[1:-1])


def parse_cbt(path):
    """rows: list of (key, [(column, value_bytes), ...]) in output order."""
    rows = []
    col = None
    with open(path, "rb") as fp:
        lines = iter(fp.read().split(b"\n"))
    for line in lines:
        if line == b"-" * 40:
            key = next(lines)
            rows.append((key.decode(), []))
        elif line.startswith(b"    \""):
            rows[-1][1].append((col, go_unquote(line[4:])))
        elif line.startswith(b"  ") and b" @ " in line:
            col = line.strip().split(b" ")[0].decode()
    return rows


def verify(dump, manifest, prefix, num_records, first, end, reversed_keys=False):
    width = len(str(num_records - 1)) if num_records else 10
    expected = {}
    with open(manifest) as fp:
        for line in fp:
            i, n, h = line.split()
            i = int(i)
            if first <= i < end:
                digits = str(i).zfill(width)
                if reversed_keys:
                    digits = digits[::-1]
                expected[prefix + digits] = (i, int(n), h)
    rows = parse_cbt(dump)
    errors = []
    seen = set()
    for key, cells in rows:
        if key in seen:
            errors.append("row %s appears twice" % key)
        seen.add(key)
        if key not in expected:
            errors.append("unexpected row %s" % key)
            continue
        if len(cells) != 1:
            errors.append("row %s has %d cells (%s)" % (key, len(cells), [c for c, _ in cells]))
            continue
        col, value = cells[0]
        if col != "tfexample:example":
            errors.append("row %s: cell in %s" % (key, col))
        i, n, h = expected[key]
        if len(value) != n or hashlib.sha256(value).hexdigest() != h:
            errors.append("row %s: value differs from record %d (%d vs %d bytes)"
                          % (key, i, len(value), n))
    missing = sorted(set(expected) - seen)
    if missing:
        errors.append("%d rows missing, first %s" % (len(missing), missing[:3]))
    if not reversed_keys and [k for k, _ in rows] != sorted(k for k, _ in rows):
        errors.append("rows not in key order")
    for e in errors[:10]:
        print("  " + e)
    print("checked %d rows (%d expected), %d problems" % (len(rows), len(expected), len(errors)))
    return 1 if errors else 0


def main(argv):
    cmd = argv[1]
    if cmd == "gen":
        gen(argv[2], int(argv[3]), int(argv[4]), int(argv[5]),
            int(argv[6]) if len(argv) > 6 else 0, int(argv[7]) if len(argv) > 7 else 0)
        return 0
    if cmd == "head":
        out, n = argv[2], int(argv[3])
        with open(out, "wb") as fp:
            for src in argv[4:]:
                for rec in read_records(src):
                    if n == 0:
                        return 0
                    fp.write(frame(rec))
                    n -= 1
        return 0
    if cmd == "verify-tfrecord":
        want = []
        with open(argv[3]) as fp:
            for line in fp:
                i, _, h = line.split()
                if int(argv[4]) <= int(i) < int(argv[5]):
                    want.append(h)
        got = [hashlib.sha256(r).hexdigest() for r in read_records(argv[2])]
        ok = got == want
        print("%d records read back, %d expected, %s" % (len(got), len(want),
                                                          "identical" if ok else "DIFFERENT"))
        return 0 if ok else 1
    if cmd == "verify":
        return verify(argv[2], argv[3], argv[4], int(argv[5]), int(argv[6]), int(argv[7]),
                      len(argv) > 8 and argv[8] == "reversed")
    if cmd == "manifest":
        with open(argv[2], "w") as fp:
            idx = 0
            for src in argv[3:]:
                for rec in read_records(src):
                    fp.write("%d %d %s\n" % (idx, len(rec), hashlib.sha256(rec).hexdigest()))
                    idx += 1
        print("%d records in the manifest" % idx)
        return 0
    if cmd == "keys":
        for key, _ in parse_cbt(argv[2]):
            print(key)
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
