#!/usr/bin/python3
"""A small, independent pure-Python TFRecord writer and reader.

It uses only the standard library and Debian's python3-crc32c, and serves two
purposes: an interoperability peer for the C tests (files written by one side
are read by the other) and the Python baseline in bench/record.sh.

  py_tfrecord_ref.py write OUT COMPRESSION SIZES   SIZES: comma list, e.g. 0,5,1000
  py_tfrecord_ref.py check IN COMPRESSION SIZES    exit 0 iff IN holds exactly those records
  py_tfrecord_ref.py bench-write OUT COMPRESSION RECORD_SIZE TOTAL_BYTES
  py_tfrecord_ref.py bench-read IN COMPRESSION

Record i of a test file has payload byte j = (i * 31 + j * 7 + (j >> 8)) & 0xff,
a formula the C tests compute too. Bench commands print one line:
"records=N bytes=N seconds=S" for the timed loop only.
"""
import gzip
import struct
import sys
import time
import zlib

import crc32c

MASK_DELTA = 0xA282EAD8


def masked_crc(data):
    c = crc32c.crc32c(data)
    return (((c >> 15) | (c << 17)) + MASK_DELTA) & 0xFFFFFFFF


def payload(i, n):
    # The formula repeats every 65536 bytes (j * 7 and j >> 8 both wrap),
    # so build one period and repeat it: fast enough for 64 MiB records.
    block = bytes((i * 31 + j * 7 + (j >> 8)) & 0xFF for j in range(min(n, 65536)))
    return (block * (n // 65536 + 1))[:n]


class ZlibWriter:
    """A file object that deflates with TensorFlow's ZLIB settings."""

    def __init__(self, path, level=6):
        self.f = open(path, "wb")
        self.z = zlib.compressobj(level, zlib.DEFLATED, 15, 9)

    def write(self, b):
        self.f.write(self.z.compress(b))

    def close(self):
        self.f.write(self.z.flush())
        self.f.close()


class ZlibReader:
    """A file object that inflates a zlib stream in 256 KiB steps."""

    def __init__(self, path):
        self.f = open(path, "rb")
        self.z = zlib.decompressobj(15)
        self.buf = b""
        self.pos = 0

    def read(self, n):
        while len(self.buf) - self.pos < n and not self.z.eof:
            chunk = self.f.read(262144)
            more = self.z.decompress(chunk) if chunk else self.z.flush()
            self.buf = self.buf[self.pos:] + more
            self.pos = 0
            if not chunk:
                break
        out = self.buf[self.pos:self.pos + n]
        self.pos += len(out)
        return out

    def close(self):
        if self.z.unused_data or self.f.read(1):
            raise ValueError("junk after the zlib stream")
        self.f.close()


def open_out(path, compression):
    if compression == "GZIP":
        return gzip.GzipFile(path, "wb", compresslevel=6)
    if compression == "ZLIB":
        return ZlibWriter(path)
    return open(path, "wb")


def open_in(path, compression):
    if compression == "GZIP":
        return gzip.open(path, "rb")
    if compression == "ZLIB":
        return ZlibReader(path)
    return open(path, "rb")


def write_record(f, data):
    header = struct.pack("<Q", len(data))
    f.write(header + struct.pack("<I", masked_crc(header)))
    f.write(data)
    f.write(struct.pack("<I", masked_crc(data)))


def read_records(f):
    """Yield each record's payload; raise ValueError on any damage."""
    offset = 0
    while True:
        header = f.read(12)
        if not header:
            return
        if len(header) != 12:
            raise ValueError("truncated header at offset %d" % offset)
        (length,) = struct.unpack("<Q", header[:8])
        (crc,) = struct.unpack("<I", header[8:])
        if crc != masked_crc(header[:8]):
            raise ValueError("bad length CRC at offset %d" % offset)
        data = f.read(length)
        footer = f.read(4)
        if len(data) != length or len(footer) != 4:
            raise ValueError("truncated record at offset %d" % offset)
        if struct.unpack("<I", footer)[0] != masked_crc(data):
            raise ValueError("bad data CRC at offset %d" % offset)
        yield data
        offset += 16 + length


def sizes_arg(s):
    return [int(x) for x in s.split(",") if x != ""]


def main(argv):
    cmd = argv[1]
    if cmd == "write":
        f = open_out(argv[2], argv[3])
        for i, n in enumerate(sizes_arg(argv[4])):
            write_record(f, payload(i, n))
        f.close()
    elif cmd == "check":
        want = sizes_arg(argv[4])
        f = open_in(argv[2], argv[3])
        got = 0
        for i, data in enumerate(read_records(f)):
            if i >= len(want) or data != payload(i, want[i]):
                print("record %d differs" % i)
                return 1
            got += 1
        f.close()
        if got != len(want):
            print("%d records, expected %d" % (got, len(want)))
            return 1
    elif cmd == "bench-write":
        size, total = int(argv[4]), int(argv[5])
        pool = [payload(i, size) for i in range(64)]
        count = max(1, total // size)
        f = open_out(argv[2], argv[3])
        t = time.perf_counter()
        for i in range(count):
            write_record(f, pool[i % 64])
        f.close()
        t = time.perf_counter() - t
        print("records=%d bytes=%d seconds=%.6f" % (count, count * size, t))
    elif cmd == "bench-read":
        f = open_in(argv[2], argv[3])
        t = time.perf_counter()
        count = nbytes = 0
        for data in read_records(f):
            count += 1
            nbytes += len(data)
        f.close()
        t = time.perf_counter() - t
        print("records=%d bytes=%d seconds=%.6f" % (count, nbytes, t))
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
