"""An independent TFRecord reader and writer in plain Python.

Used by the tests as a second implementation to check libtfrec against: it
shares no code with the C library, only the format (TensorFlow's
tsl/lib/io/record_writer.h):

    uint64 length | uint32 masked_crc32c(length) | data | uint32 masked_crc32c(data)

little-endian, with ZLIB (zlib wrapper) or GZIP (gzip wrapper) as one stream
over the whole file. CRC32C comes from Debian's python3-crc32c, compression
from the standard zlib and gzip modules.

    write_records(path, [b"a", b"b"], "GZIP")
    read_records(path, "GZIP") == [b"a", b"b"]

Both raise ValueError with the byte offset for corrupt or truncated input.
"""
import gzip
import struct
import zlib

import crc32c

__all__ = ["masked_crc", "frame", "encode_records", "parse_records",
           "write_records", "read_records", "COMPRESSIONS"]

COMPRESSIONS = ("NONE", "ZLIB", "GZIP")
_MASK_DELTA = 0xA282EAD8


def masked_crc(data):
    """TFRecord's masked CRC32C: rotate right by 15 bits, add a constant."""
    c = crc32c.crc32c(data)
    return (((c >> 15) | (c << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def frame(record):
    """One record with its 12-byte header and 4-byte footer."""
    header = struct.pack("<Q", len(record))
    return b"".join((header, struct.pack("<I", masked_crc(header)), record,
                     struct.pack("<I", masked_crc(record))))


def encode_records(records):
    """The uncompressed TFRecord bytes of a sequence of records."""
    return b"".join(frame(bytes(r)) for r in records)


def _check(name, compression):
    if compression not in COMPRESSIONS:
        raise ValueError("%s: unknown compression %r" % (name, compression))


def write_records(path, records, compression="NONE", level=6):
    """Write records (an iterable of bytes) to path.

    compression: "NONE", "ZLIB" (zlib stream, like TFRecordOptions("ZLIB"))
    or "GZIP" (gzip member). level: zlib level, 6 is TensorFlow's default.
    """
    _check("write_records", compression)
    with open(path, "wb") as f:
        if compression == "NONE":
            for r in records:
                f.write(frame(bytes(r)))
        elif compression == "ZLIB":
            z = zlib.compressobj(level, zlib.DEFLATED, 15)
            for r in records:
                f.write(z.compress(frame(bytes(r))))
            f.write(z.flush())
        else:
            # mtime=0 keeps the output reproducible.
            with gzip.GzipFile(fileobj=f, mode="wb", compresslevel=level, mtime=0) as g:
                for r in records:
                    g.write(frame(bytes(r)))


def decompress(data, compression):
    """The uncompressed stream of a file's bytes."""
    _check("decompress", compression)
    if compression == "NONE":
        return data
    if compression == "ZLIB":
        d = zlib.decompressobj(15)
        out = d.decompress(data) + d.flush()
        if not d.eof:
            raise ValueError("ZLIB stream is truncated")
        if d.unused_data:
            raise ValueError("%d bytes after the ZLIB stream" % len(d.unused_data))
        return out
    # gzip.decompress reads concatenated members, as recent TensorFlow does.
    return gzip.decompress(data)


def parse_records(stream):
    """Split an uncompressed TFRecord stream into records, checking CRCs."""
    records = []
    pos, n = 0, len(stream)
    view = memoryview(stream)
    while pos < n:
        if n - pos < 12:
            raise ValueError("truncated record header at offset %d" % pos)
        header = view[pos:pos + 8]
        (length,) = struct.unpack_from("<Q", stream, pos)
        (hcrc,) = struct.unpack_from("<I", stream, pos + 8)
        if hcrc != masked_crc(header):
            raise ValueError("corrupted record header at offset %d" % pos)
        end = pos + 12 + length + 4
        if end > n:
            raise ValueError("truncated record at offset %d" % pos)
        data = bytes(view[pos + 12:pos + 12 + length])
        (dcrc,) = struct.unpack_from("<I", stream, pos + 12 + length)
        if dcrc != masked_crc(data):
            raise ValueError("corrupted record data at offset %d" % pos)
        records.append(data)
        pos = end
    return records


def read_records(path, compression="NONE"):
    """All records of the file at path, as a list of bytes."""
    with open(path, "rb") as f:
        return parse_records(decompress(f.read(), compression))
