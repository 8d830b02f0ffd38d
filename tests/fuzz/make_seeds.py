#!/usr/bin/env python3
"""Seed corpora for the libFuzzer targets in tests/fuzz/, generated so that no
binary file needs to live in git. Usage: make_seeds.py OUT_DIR

Writes OUT_DIR/<target>/<name> for each target (the target's file name
without "fuzz_"). Inputs follow each target's layout (its leading comment):
mostly control bytes that choose options, then the data. Everything is
encoded here from the format definitions (protobuf wire format, TFRecord
framing, CRC32C), so the seeds do not depend on the library they test.
Images need PIL (python3-pil, a test dependency); without it this script
fails (an image target fuzzed from no seeds would pass while testing little),
unless --no-image-seeds says to leave them out.
"""
import gzip
import io
import os
import struct
import sys
import zlib

# ------------------------------------------------------------ CRC32C, framing


def _crc_table():
    table = []
    for b in range(256):
        r = b
        for _ in range(8):
            r = (r >> 1) ^ (0x82F63B78 if r & 1 else 0)
        table.append(r)
    return table


_TABLE = _crc_table()


def crc32c(data):
    r = 0xFFFFFFFF
    for b in data:
        r = (r >> 8) ^ _TABLE[(r ^ b) & 0xFF]
    return r ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def frame(payload):
    head = struct.pack("<Q", len(payload))
    return (head + struct.pack("<I", masked(head)) + payload +
            struct.pack("<I", masked(payload)))


# ------------------------------------------------------------ protobuf wire


def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_bytes(num, data):
    return varint(num << 3 | 2) + varint(len(data)) + data


def field_varint(num, v):
    return varint(num << 3) + varint(v)


def feature_bytes(values):
    return field_bytes(1, b"".join(field_bytes(1, v) for v in values))


def feature_int64(values, packed=True):
    if packed:
        body = field_bytes(1, b"".join(varint(v) for v in values))
    else:
        body = b"".join(field_varint(1, v) for v in values)
    return field_bytes(3, body)


def feature_float(values):
    return field_bytes(2, field_bytes(1, b"".join(struct.pack("<f", v) for v in values)))


def example(features):
    """features: list of (key, encoded Feature or None for no kind)."""
    entries = b""
    for key, feat in features:
        entry = field_bytes(1, key.encode())
        if feat is not None:
            entry += field_bytes(2, feat)
        entries += field_bytes(1, entry)
    return field_bytes(1, entries)


EXAMPLES = [
    example([]),
    example([("image/class/label", feature_int64([7])),
             ("image/class/synset", feature_bytes([b"n01440764"])),
             ("image/encoded", feature_bytes([b"\xff\xd8\xff\xe0" + b"\0" * 20])),
             ("image/height", feature_int64([32])),
             ("image/width", feature_int64([48]))]),
    example([("f", feature_float([1.5, -0.0, float("inf")])),
             ("i", feature_int64([1, 2 ** 63 - 1, -1], packed=False)),
             ("b", feature_bytes([b"", b"x", b"yz"]))]),
    example([("none", None), ("e_bytes", field_bytes(1, b"")),
             ("e_int", field_bytes(3, b"")), ("e_float", field_bytes(2, b""))]),
    example([("k", feature_int64([1])), ("k", feature_bytes([b"last wins"]))]),
]

# ------------------------------------------------------------ ReadRows


def chunk(key=None, family=None, qualifier=None, ts=None, labels=(), value=None,
          value_size=None, reset=None, commit=None):
    b = b""
    if key is not None:
        b += field_bytes(1, key)
    if family is not None:
        b += field_bytes(2, field_bytes(1, family.encode()))
    if qualifier is not None:
        b += field_bytes(3, field_bytes(1, qualifier))
    if ts is not None:
        b += field_varint(4, ts)
    for label in labels:
        b += field_bytes(5, label.encode())
    if value is not None:
        b += field_bytes(6, value)
    if value_size is not None:
        b += field_varint(7, value_size)
    if reset is not None:
        b += field_varint(8, int(reset))
    if commit is not None:
        b += field_varint(9, int(commit))
    return b


def response(chunks):
    return b"".join(field_bytes(1, c) for c in chunks)


def messages(*resps):
    return b"".join(struct.pack("<H", len(r)) + r for r in resps)


def merger_seeds():
    one_row = [chunk(b"row1", "cf", b"q", 1000, value=b"v1", commit=True)]
    two_cells = [chunk(b"row2", "cf", b"a", 1, value=b"x"),
                 chunk(qualifier=b"b", ts=2, value=b"y"),
                 chunk(family="other", qualifier=b"c", value=b"z", commit=True)]
    split = [chunk(b"row3", "cf", b"q", 5, value=b"ab", value_size=6),
             chunk(value=b"cd", value_size=6),
             chunk(value=b"ef", commit=True)]
    reset = [chunk(b"row4", "cf", b"q", value=b"gone"), chunk(reset=True),
             chunk(b"row4", "cf", b"q", value=b"kept", labels=("l1",), commit=True)]
    explicit_false = [chunk(b"row5", "cf", b"q", value=b"v", commit=False),
                      chunk(qualifier=b"r", value=b"w", commit=True)]
    return {
        "one_message": messages(response(one_row + two_cells)),
        "several_messages": messages(response(one_row), response(two_cells),
                                     response(split), response(reset)),
        "split_value": messages(response(split[:1]), response(split[1:])),
        "commit_false": messages(response(explicit_false)),
        "last_scanned": messages(field_bytes(2, b"row9")),
        "no_commit": messages(response([chunk(b"r", "cf", b"q", value=b"v")])),
    }

# ------------------------------------------------------------ images


def image_seeds(required=True):
    try:
        from PIL import Image
    except ImportError:
        if not required:
            return {}
        sys.exit("make_seeds.py: the image seeds need PIL (Debian: apt-get install python3-pil, "
                 "or scripts/install-deps.sh); --no-image-seeds leaves them out")
    out = {}

    def save(name, img, fmt, **kw):
        buf = io.BytesIO()
        img.save(buf, fmt, **kw)
        out[name] = buf.getvalue()

    rgb = Image.new("RGB", (16, 12))
    for x in range(16):
        for y in range(12):
            rgb.putpixel((x, y), (x * 16, y * 20, (x * y) & 255))
    save("rgb.jpg", rgb, "JPEG", quality=50)
    save("progressive.jpg", rgb, "JPEG", quality=50, progressive=True)
    save("gray.jpg", rgb.convert("L"), "JPEG", quality=50)
    save("cmyk.jpg", rgb.convert("CMYK"), "JPEG", quality=50)
    save("rgb.png", rgb, "PNG")
    save("rgba.png", rgb.convert("RGBA"), "PNG")
    save("palette.png", rgb.convert("P"), "PNG")
    save("gray.png", rgb.convert("L"), "PNG")
    save("gray16.png", rgb.convert("L").convert("I;16"), "PNG")  # PIL has no RGB -> I;16
    seeds = {}
    for name, data in out.items():
        # control byte: probe (0), verify header/fast (1, 5), full (2),
        # normalize (3, with grayscale_to_rgb 0x43, verify FULL 0x23)
        for ctl in (0, 1, 5, 2, 3, 0x43, 0x23):
            seeds["%s.%02x" % (name, ctl)] = bytes([ctl]) + data
    return seeds

# ------------------------------------------------------------ seed sets


def record_streams():
    plain = b"".join(frame(e) for e in EXAMPLES)
    damaged = bytearray(plain)
    damaged[40] ^= 0xFF  # inside the second record
    damaged = frame(b"first") + b"\x01\x02\x03" + bytes(damaged) + b"\x07"
    return {
        "none": plain,
        "zlib": zlib.compress(plain),
        "gzip": gzip.compress(plain, mtime=0),
        "gzip_two_members": gzip.compress(plain[:50], mtime=0) + gzip.compress(plain[50:], mtime=0),
        "damaged": damaged,
        "damaged_zlib": zlib.compress(damaged),
        "empty_record": frame(b""),
        "empty": b"",
    }


def record_seeds():
    seeds = {}
    for name, stream in record_streams().items():
        # AUTO; forced per kind; skip_corrupt; small buffers; zlib backend; seeks
        for ctl in (0x00, 0x04, 0x14, 0x24, 0x0C, 0x44, 0xC4):
            seeds["%s.%02x" % (name, ctl)] = bytes([ctl]) + stream
    return seeds


def batch_seeds():
    seeds = {}
    for i, e in enumerate(EXAMPLES):
        seeds["example%d" % i] = b"\x00\x00" + e
    for name, stream in record_streams().items():
        for ctl in (0x01, 0x03, 0x0D, 0x65):
            seeds["%s.%02x" % (name, ctl)] = bytes([ctl, 0]) + stream
        seeds["%s.skip" % name] = bytes([0x0D, 1]) + stream
    return seeds


def lists_seeds():
    return {
        "csv": b"\x00a.jpg,cat\nb.JPEG,dog,validation\n",
        "csv_header": b"\x40path,label,split\n\"a.jpg\", cat ,TRAIN\nb.JPEG,cat,test\n",
        "csv_missing": b"\x00a.jpg,cat\nmissing.jpg,dog\n",
        "csv_labels": b"\x05dog\ncat\n\x00a.jpg,cat\nb.JPEG,dog\n",
        "csv_labels_unknown": b"\x01dog\n\x00a.jpg,cat\n",
        "synsets": b"\x02n01440764 tench\nn01443537\tgoldfish\n\n  n01484850 shark\n",
    }


def tar_seeds():
    """Tar archives written by Python's tarfile (an independent writer): a
    tar of per-synset tars in each format, a flat one, long names."""
    import tarfile

    def tar(members, fmt):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
            for name, data, kind in members:
                ti = tarfile.TarInfo(name)
                ti.type = kind
                ti.size = len(data) if kind == tarfile.REGTYPE else 0
                t.addfile(ti, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
        return buf.getvalue()

    seeds = {}
    for fname, fmt in (("gnu", tarfile.GNU_FORMAT), ("pax", tarfile.PAX_FORMAT),
                       ("ustar", tarfile.USTAR_FORMAT)):
        inner = tar([("n01_%d.JPEG" % i, b"\xff\xd8" + bytes(i * 100), tarfile.REGTYPE)
                     for i in range(3)], fmt)
        seeds["outer_" + fname] = tar([("n01.tar", inner, tarfile.REGTYPE),
                                       ("n02.tar", inner, tarfile.REGTYPE)], fmt)
        seeds["flat_" + fname] = tar([("./", b"", tarfile.DIRTYPE),
                                      ("val_1.JPEG", b"x" * 700, tarfile.REGTYPE),
                                      ("link", b"", tarfile.SYMTYPE)], fmt)
    seeds["long_pax"] = tar([("d/" + "y" * 200 + ".JPEG", b"z", tarfile.REGTYPE)],
                            tarfile.PAX_FORMAT)
    seeds["long_gnu"] = tar([("../" + "y" * 200 + ".JPEG", b"z", tarfile.REGTYPE)],
                            tarfile.GNU_FORMAT)
    return seeds


def index_seeds():
    """Index text as DALI's tfrecord2idx writes it, for a few framings."""
    seeds = {}
    for name, sizes in (("one", [0]), ("some", [1, 100, 7, 2000]), ("many", [5] * 300)):
        lines, pos = [], 0
        for s in sizes:
            lines.append("%d %d\n" % (pos, s + 16))
            pos += s + 16
        seeds[name] = bytes([0]) + "".join(lines).encode()
        seeds[name + ".sized"] = bytes([1]) + "".join(lines).encode()
    seeds["crlf"] = bytes([0]) + b"0 16\r\n16 20\r\n"
    # Longer than the parser's 64 KiB read chunk, with a line across its
    # boundary: the line split between two reads must come out whole.
    CHUNK = 64 * 1024
    lines, pos, text = [], 0, 0
    while text <= CHUNK + 4096:
        line = "%d %d\n" % (pos, 21)
        lines.append(line)
        pos += 21
        text += len(line)
    body = "".join(lines).encode()
    starts = set()
    at = 0
    for line in lines:
        starts.add(at)
        at += len(line)
    assert len(body) > CHUNK and CHUNK not in starts, "the seed must cross the chunk mid-line"
    seeds["crosses_read_chunk"] = bytes([0]) + body
    seeds["crosses_read_chunk.sized"] = bytes([(pos + 16383) // 16384]) + body
    return seeds


def json_seeds():
    docs = [
        b'{"kind":"storage#objects","items":[{"name":"a\\/b \\u00e9\\ud83d\\ude00",'
        b'"size":"18446744073709551615","generation":"17"}],"nextPageToken":"tok"}',
        b'{"type":"service_account","expires_in":3599,"x":[true,false,null,-1.5e3]}',
        b'{"status":"ok","task":{"index":0,"count":2},"shards":[{"file":"a\\udcffb",'
        b'"bytes":12}],"counts":{"seconds":1.250}}',
        b'[[[[1]]],"\\"",{}]',
    ]
    seeds = {}
    for i, d in enumerate(docs):
        seeds["doc%d" % i] = bytes([0]) + d
        seeds["doc%d.bytes" % i] = bytes([1]) + d
    return seeds


def read_response_seeds():
    """ReadRowsResponse messages as received (no framing): chunks with every
    field, wrappers present but empty or given twice, oneof members in
    several wire types, unknown fields, last_scanned_row_key."""
    full = chunk(b"row1", "cf", b"q", 1000, labels=("a", "b"), value=b"v" * 40, value_size=80)
    return {
        "full": response([full, chunk(value=b"w" * 40, commit=True)]),
        "empty_wrappers": response([chunk(b"r", "", b"", value=b"", commit=False)]),
        "twice": response([field_bytes(2, field_bytes(1, b"a")) + field_bytes(2, b"") +
                           field_bytes(3, field_bytes(1, b"q")) + field_bytes(3, b"")]),
        "status_wire_types": response([chunk(reset=True) + varint(9 << 3 | 5) + b"\0\0\0\x80",
                                       varint(8 << 3 | 2) + field_bytes(0, b"")[1:]]),
        "unknown": field_varint(3, 7) + response([field_varint(10, 5) + field_bytes(12, b"x")]) +
        field_bytes(2, b"row9"),
    }


def mutate_response_seeds():
    """MutateRowsResponse messages: entries of index + status (code,
    message, details), an unknown field, a negative code, a RetryInfo
    (google.rpc.Duration of 1.5 s) in a failed entry's details."""
    def entry(i, code=None, msg=None, details=(), type_url=b"type.googleapis.com/x"):
        st = b""
        if code is not None:
            st += field_varint(1, code)
        if msg is not None:
            st += field_bytes(2, msg)
        for d in details:
            st += field_bytes(3, field_bytes(1, type_url) + field_bytes(2, d))
        return field_bytes(1, field_varint(1, i) + (field_bytes(2, st) if st or code == 0 else b""))
    return {
        "ok": b"".join(entry(i) for i in range(8)),
        "codes": entry(0, 0) + entry(1, 14, b"unavailable") + entry(2, 3, b"bad", [b"\x01"]),
        "negative": entry(5, -1 & 0xFFFFFFFF, b"x") + entry(-1 & (1 << 64) - 1),
        "unknown": field_varint(9, 7) + entry(3) + field_bytes(3, b"\x08\x01"),
        "retry_info": entry(0) + entry(1, 8, b"throttled",
                                       [field_bytes(1, field_varint(1, 1) +
                                                    field_varint(2, 500000000))],
                                       b"type.googleapis.com/google.rpc.RetryInfo"),
    }


def sealed(body):
    return body + b"crc32c %08x\n" % crc32c(body)


def plan_seeds():
    """fuzz_bigtable_plan: a control byte (bit 0: part file, bit 1: the
    harness fixes the checksum), then the file."""
    head = b"tfrec-bigtable-split-plan 1\ntable projects/p/instances/i/tables/t\n"
    plan3 = sealed(head + b"ranges 1\nrange train_ train%60\nshards 3\nsource sample 57\n"
                   b"cut train_1667\ncut train_3334\n")
    keys = sealed(head + b"ranges 2\nrange - %00%FF\nrange a - \nshards 2\n"
                  b"source split_keys 1\ncut %2D\n")
    part = sealed(b"tfrec-bigtable-export-part 1\ntable projects/p/instances/i/tables/t\n"
                  b"plan 0123abcd\nranges 1\nrange train_ train%60\nshards 3\ntask 1\n"
                  b"share train_1667 train_3334\nrows 1667\nbytes 123456\nskipped 0\n"
                  b"outputs 2\noutput x-00002-of-00006 1000 800 89abcdef\n"
                  b"output x-00003-of-00006 1000 867 00000000\n")
    return {
        "plan3": b"\x00" + plan3,
        "plan_keys": b"\x00" + keys,
        "plan_fixcrc": b"\x02" + plan3[:-16] + b"crc32c 00000000\n",
        "plan_down": b"\x02" + head + b"ranges 0\nshards 3\nsource sample 0\ncut b\ncut a\n",
        "part": b"\x01" + part,
        "part_fixcrc": b"\x03" + part,
    }


def merge_part(index, count, total, size, fixed=(), rejected=(), fingerprint="0123456789abcdef"):
    """A manifest part of task index of count over total shards, each shard
    reporting size bytes (the second control byte), as the converter writes
    it (lib/imagenet/manifest.c) with the share tfrec_task_share gives."""
    def start(i):
        q, r = divmod(total, count)
        return q * i + r * i // count
    b, e = start(index), start(index + 1)
    shards = ",".join('{"split":"train","file":"train/train-%05d-of-%05d","records":1,'
                      '"bytes":%d,"crc32c":7}' % (k, total, size) for k in range(b, e))
    notes = lambda items, field: ",".join('{"path":"%s","%s":"%s"}' % (p, field, w)
                                          for p, w in items)
    return ('{"tool":"libtfrec imagenet converter","version":"1.0.0","status":"ok",'
            '"error":null,"options":{"layout":"imagenet","train_shards":%d},'
            '"counts":{"images_total":9,"images_written":%d,"images_fixed":%d,'
            '"images_rejected":%d,"bytes_in":10,"bytes_out":20,"shards":%d,"classes":2,'
            '"stale_removed":0,"seconds":0.5},'
            '"labels":[{"label":1,"synset":"n0"},{"label":2,"synset":"n1"}],'
            '"task":{"index":%d,"count":%d,"fingerprint":"%s","shards_begin":%d,'
            '"shards_end":%d,"shards_total":%d},"shards":[%s],"fixed":[%s],"rejected":[%s],'
            '"stale_removed":[]}\n' % (total, e - b, len(fixed), len(rejected), e - b, index,
                                        count, fingerprint, b, e, total, shards,
                                        notes(fixed, "from"), notes(rejected, "reason"))
            ).encode()


def merge_seeds():
    """Control byte (bits 0-1: parts - 1; bit 2: "missing" shards fail to
    open), the shards' size, then the parts separated by NUL bytes."""
    def parts(count, total, size, **kw):
        return b"\0".join(merge_part(i, count, total, size, **(kw if i == 0 else {}))
                           for i in range(count))
    return {
        "one": b"\x00\x10" + parts(1, 3, 16),
        "two": b"\x01\x00" + parts(2, 5, 0),
        "four_notes": b"\x03\x08" + parts(4, 9, 8, fixed=[("a.png", "PNG")],
                                            rejected=[("b.jpg", "not an image")]),
        "wrong_size": b"\x01\x05" + parts(2, 4, 6),
        "missing": b"\x04\x01" + merge_part(0, 1, 1, 1).replace(b"train/train", b"missing/x"),
        "rejected_empty_entry": b"\x00\x02" + merge_part(0, 1, 2, 2).replace(
            b'"rejected":[]', b'"rejected":[{}]'),
        "other_plan": b"\x01\x03" + merge_part(0, 2, 2, 3) + b"\0" +
        merge_part(1, 2, 2, 3, fingerprint="fedcba9876543210"),
    }


def storage_auth_json_seeds():
    """Key files and token replies as Google's services write them (the
    key is a placeholder, not a key)."""
    docs = [
        b'{"type":"service_account","project_id":"p","private_key_id":"0123abcd",'
        b'"private_key":"-----BEGIN PRIVATE KEY-----\\nAAAA\\n-----END PRIVATE KEY-----\\n",'
        b'"client_email":"sa@p.iam.gserviceaccount.com","client_id":"1",'
        b'"token_uri":"https://oauth2.googleapis.com/token"}',
        b'{"type":"authorized_user","client_id":"c.apps.googleusercontent.com",'
        b'"client_secret":"s","refresh_token":"1//r"}',
        b'{"access_token":"ya29.x","expires_in":3599,"token_type":"Bearer"}',
        b'{"error":"invalid_grant","error_description":"Invalid JWT Signature."}',
        b'{"access_token":"\\u0079a29","expires_in":-1,"token_type":"Bearer","x":[1,{"y":null}]}',
        b'{"expires_in":9223372036854775807,"type":"\\ud83d\\ude00"}',
        b'{"expires_in":1e3}',
        b'[]',
    ]
    return {"doc%d" % i: d for i, d in enumerate(docs)}


def storage_http_seeds():
    """Response heads as Cloud Storage sends them: a media reply, a
    resumable session's 308, a 100 Continue before the answer, a 416."""
    return {
        "media": b"HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-1048575/3145728\r\n"
                 b"x-goog-generation: 1700000000000000\r\n"
                 b"x-goog-hash: crc32c=n03x6A==\r\nx-goog-hash: md5=Ojk9c3dhfxgoKVVHYwFbHQ==\r\n"
                 b"Content-Length: 1048576\r\n\r\n",
        "session": b"HTTP/1.1 200 OK\r\nLocation: https://storage.googleapis.com/upload/storage/"
                   b"v1/b/b/o?uploadType=resumable&name=x&upload_id=ADPycdt\r\n\r\n",
        "resume": b"HTTP/1.1 308 Resume Incomplete\r\nRange: bytes=0-262143\r\n"
                  b"Content-Length: 0\r\n\r\n",
        "continue": b"HTTP/1.1 100 Continue\r\n\r\nHTTP/2 200\r\ncontent-range: bytes 5-9/*\n",
        "unsatisfiable": b"HTTP/1.1 416 Requested range not satisfiable\r\n"
                         b"Content-Range: bytes */0\r\n\r\n",
        "url": b"\x20https://h/p?a=1;upload_id=s?x=2&access_token=t#upload_id=f",
    }


def storage_list_seeds():
    """objects.list replies: items with metadata, prefixes, a page token;
    the control byte picks the glob pattern."""
    page = (b'{"kind":"storage#objects","nextPageToken":"CgR0b2tlbg==",'
            b'"prefixes":["dir/sub/"],"items":['
            b'{"kind":"storage#object","name":"dir/a.tfrecord","bucket":"b",'
            b'"generation":"1700000000000000","size":"1024","crc32c":"n03x6A==",'
            b'"md5Hash":"Ojk9c3dhfxgoKVVHYwFbHQ=="},'
            b'{"name":"abc","size":"0"},{"name":"xyb-1","size":"18446744073709551615"}]}')
    seeds = {}
    for ctl in range(6):
        seeds["page.%d" % ctl] = bytes([ctl]) + page
    seeds["last_page"] = b"\x00" + b'{"items":[{"name":"a","size":"1"}]}'
    seeds["empty"] = b"\x00" + b"{}"
    seeds["bad_item"] = b"\x00" + b'{"items":[{"name":"a"}],"nextPageToken":""}'
    return seeds


def main():
    args = [a for a in sys.argv[1:] if a != "--no-image-seeds"]
    if len(args) != 1:
        sys.exit(__doc__)
    sets = {
        "record": record_seeds(),
        "example": {"example%d" % i: e for i, e in enumerate(EXAMPLES)},
        "batch": batch_seeds(),
        "image": image_seeds(required="--no-image-seeds" not in sys.argv),
        "bigtable_merger": merger_seeds(),
        "bigtable_plan": plan_seeds(),
        "bigtable_mutate_response": mutate_response_seeds(),
        "bigtable_read_response": read_response_seeds(),
        "imagenet_lists": lists_seeds(),
        "tar": tar_seeds(),
        "dataset_index": index_seeds(),
        "util_json_read": json_seeds(),
        "imagenet_merge": merge_seeds(),
        "storage_auth_json": storage_auth_json_seeds(),
        "storage_http": storage_http_seeds(),
        "storage_list": storage_list_seeds(),
    }
    for target, seeds in sets.items():
        assert seeds or target == "image", "no seeds for " + target
        d = os.path.join(args[0], target)
        os.makedirs(d, exist_ok=True)
        for name, data in seeds.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
