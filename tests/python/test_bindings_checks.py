"""The bindings refuse what C would misread: a reader used after close(),
paths with a NUL byte (ctypes would cut them at the NUL), negative sizes
(ctypes would wrap them to huge unsigned values), feature keys that are not
strings, parse() of a non-buffer; and reader options reach C (use_mmap)."""
import os

import pytest

import tfrecord_ref
from bindings_env import load_tfrec


@pytest.fixture(scope="module")
def tfrec(build_dir):
    return load_tfrec(build_dir)


def small_file(tmp_path, records, name="f.tfrecord"):
    p = tmp_path / name
    tfrecord_ref.write_records(str(p), records)
    return p


@pytest.mark.parametrize("zero_copy", [False, True])
@pytest.mark.parametrize("size", [100, 50000])  # batched / one record per call
def test_reader_used_after_close_raises(tfrec, tmp_path, zero_copy, size):
    records = [bytes([i % 251]) * size for i in range(40)]
    p = small_file(tmp_path, records)
    r = tfrec.TFRecordReader(p, zero_copy=zero_copy)
    it = iter(r)
    assert bytes(next(it)) == records[0]  # the rest of a batch is already fetched
    r.close()
    for call in (lambda: next(it), lambda: next(r), lambda: iter(r), lambda: list(it),
                 r.stats, lambda: r.compression):
        with pytest.raises(ValueError, match="TFRecordReader is closed"):
            call()
    # in a for loop, closing stops the loop with ValueError
    r = tfrec.TFRecordReader(p, zero_copy=zero_copy)
    got = []
    with pytest.raises(ValueError, match="closed"):
        for rec in r:
            got.append(bytes(rec))
            if len(got) == 3:
                r.close()
    assert got == records[:3]


def test_reader_without_a_name_reads_to_the_end(tfrec, tmp_path):
    # The iterator keeps the file open after the reader object is dropped.
    records = [b"r%d" % i for i in range(10000)]
    p = small_file(tmp_path, records)
    assert [r for r in tfrec.TFRecordReader(p)] == records
    it = iter(tfrec.TFRecordReader(p, zero_copy=True))
    assert [bytes(r) for r in it] == records


def test_paths_with_nul_are_refused(tfrec, tmp_path):
    p = small_file(tmp_path, [b"a"], "short")
    bad = str(p) + "\0.tfrecord"  # C would see the existing file "short"
    for path in (bad, bad.encode(), tmp_path / "short\0x"):
        for call in (tfrec.TFRecordReader, tfrec.count, tfrec.verify, tfrec.TFRecordWriter):
            with pytest.raises(ValueError, match="NUL"):
                call(path)
    assert sorted(os.listdir(tmp_path)) == ["short"]


def test_paths_with_nul_are_refused_by_convert_images(tfrec, tmp_path):
    if not tfrec.features()["convert_images"]:
        return  # a core-only build: convert_images raises MissingPartError
    (tmp_path / "in").mkdir()
    for kwargs in ({"raw_data_dir": str(tmp_path / "in\0x")},
                   {"output_dir": str(tmp_path / "out\0x")},
                   {"labels_file": "l\0"}, {"csv_path": "c\0", "layout": "csv"},
                   {"validation_labels_file": "v\0"}, {"manifest_path": "m\0"}):
        args = dict(raw_data_dir=str(tmp_path / "in"), output_dir=str(tmp_path / "out"))
        args.update(kwargs)
        with pytest.raises(ValueError, match="NUL"):
            tfrec.convert_images(**args)
    for name in ("train_shards", "validation_shards", "num_threads", "quality",
                 "max_inflight_bytes", "seed"):
        with pytest.raises(ValueError, match="negative"):
            tfrec.convert_images(str(tmp_path / "in"), str(tmp_path / "out"), **{name: -1})
    assert not (tmp_path / "out").exists()


def test_negative_sizes_are_refused(tfrec, tmp_path):
    p = small_file(tmp_path, [b"a"])
    with pytest.raises(ValueError, match="max_record_size must not be negative"):
        tfrec.TFRecordReader(p, max_record_size=-1)
    with pytest.raises(ValueError, match="buffer_size must not be negative"):
        tfrec.TFRecordWriter(tmp_path / "w", buffer_size=-1)
    with pytest.raises(TypeError):
        tfrec.TFRecordReader(p, max_record_size=1.5)
    assert not (tmp_path / "w").exists()
    # the sizes that are allowed still work
    assert list(tfrec.TFRecordReader(p, max_record_size=1)) == [b"a"]


def test_example_keys_must_be_strings(tfrec):
    for key in (1, 1.5, None, ("a",)):
        with pytest.raises(TypeError, match="feature keys"):
            tfrec.Example({key: [1]})
        with pytest.raises(TypeError):
            tfrec.Example()[key] = [1]
    assert tfrec.Example({b"k": [1]}).to_dict() == {"k": [1]}
    # a key that is not UTF-8 survives parse and serialize
    data = tfrec.Example({b"\xff": [1]}).serialize()
    assert tfrec.Example.parse(tfrec.Example.parse(data).serialize()) == \
        tfrec.Example.parse(data)


def test_example_parse_takes_bytes_like_only(tfrec):
    data = tfrec.Example({"a": [1]}).serialize()
    for bad in (5, 0, "text", None, [1, 2], 1.0):
        with pytest.raises(TypeError, match="Example.parse"):
            tfrec.Example.parse(bad)
    for good in (data, bytearray(data), memoryview(data)):
        assert tfrec.Example.parse(good).to_dict() == {"a": [1]}


def mapped(path):
    with open("/proc/self/maps") as f:
        return str(path) in f.read()


def test_use_mmap_reaches_the_reader(tfrec, tmp_path):
    records = [os.urandom(n) for n in (0, 1, 1000, 70000, 5)]
    p = small_file(tmp_path, records)
    for use_mmap in (None, True, False):
        with tfrec.TFRecordReader(p, use_mmap=use_mmap) as r:
            assert bytes(next(r)) == records[0]
            # True maps the file (seen in /proc/self/maps); False never does
            # (None follows TFREC_MMAP, which the test suite does not set)
            assert mapped(p) == (use_mmap is True)
            assert list(r) == records[1:]
    with pytest.raises(ValueError, match="use_mmap"):
        tfrec.TFRecordReader(p, use_mmap="yes")


def test_write_many_and_write_give_the_same_file(tfrec, tmp_path):
    from array import array
    records = [os.urandom(n) for n in [0, 1, 100, 1024, 20000, 3] * 700]
    mixed = [bytearray(r) if i % 7 == 0 else r for i, r in enumerate(records)]
    mixed[5] = memoryview(records[5])
    mixed[11] = array("B", records[11])
    for how in ("write", "write_many", "generator"):
        p = tmp_path / how
        with tfrec.TFRecordWriter(p) as w:
            if how == "write":
                for r in mixed:
                    w.write(r)
            elif how == "write_many":
                w.write_many(mixed)
            else:
                w.write_many(r for r in records)
            assert w.records == len(records)
        assert tfrecord_ref.read_records(str(p)) == records
    # a bad record in a write_many chunk is refused before any of it is written
    with tfrec.TFRecordWriter(tmp_path / "bad") as w:
        with pytest.raises(TypeError):
            w.write_many([b"a", b"b", 7])
        assert w.records == 0
