"""Typed use of the tfrec package: mypy (tests/python/test_typing.py) must
find no error here, and every assert_type must hold. Not run, only checked."""
from typing import Any, Literal, assert_type

from numpy.typing import NDArray

import tfrec
import tfrec.bigtable
import tfrec.storage
import tfrec.task
from tfrec.bigtable import ReadStats, WriterStats
from tfrec.record import ReaderStats


def records(path: str) -> list[bytes]:
    with tfrec.TFRecordWriter(path, compression="GZIP") as w:
        w.write(tfrec.Example({"label": [1], "text": [b"hi"]}).serialize())
        w.write_many([b"a", bytearray(b"b"), memoryview(b"c")])
        assert_type(w.records, int)
    with tfrec.TFRecordReader(path) as r:
        out = [rec for rec in r]
        assert_type(out, list[bytes])
        st = r.stats()
        assert_type(st, ReaderStats)
        assert_type(st["skipped_bytes"], int)
    for view in tfrec.TFRecordReader(path, zero_copy=True):
        assert_type(view, memoryview)
    assert_type(tfrec.count(path), int)
    v = tfrec.verify(path)
    assert_type(v.ok, bool)
    assert_type(v.error, tfrec.Error | None)
    return out


def examples(data: bytes) -> None:
    ex = tfrec.Example.parse(data)
    assert_type(ex.to_dict(), dict[str, list[Any]])
    assert_type(ex.to_dict(typed=True)["x"], tfrec.BytesList | tfrec.FloatList | tfrec.Int64List)
    assert_type(ex.kind("x"), Literal["bytes", "int64", "float"])
    assert_type(tfrec.serialize_example({"a": tfrec.Int64List([])}), bytes)
    label: int = tfrec.parse_example(data)["label"][0]
    print(label)


def datasets(files: list[str]) -> None:
    with tfrec.Dataset(files, shuffle=True, shard=(0, 2)) as ds:
        for rec in ds:
            assert_type(rec, bytes)
    for feats in tfrec.Dataset(files, parse=True):
        assert_type(feats, dict[str, list[Any]])
    assert_type(tfrec.count_records(files[0]), tuple[int, bool])
    assert_type(tfrec.RandomAccessReader(files[0])[3], bytes)
    assert_type(tfrec.task_share(10, 0, 3), tuple[int, int])
    assert_type(tfrec.glob("/data/train-*"), list[str])
    assert_type(tfrec.glob(b"/data/train-*"), list[bytes])
    assert_type(tfrec.get_config("TFREC_MMAP"), str | None)


def training(files: list[str], a: bytes, b: bytes) -> None:
    spec = {"label": tfrec.FixedLenFeature([], "int64", default_value=-1),
            "tokens": tfrec.VarLenFeature("int64")}
    assert_type(tfrec.parse_example(a, spec), dict[str, NDArray[Any]])
    assert_type(tfrec.parse_example_batch([a, bytearray(b)], spec)["label"], NDArray[Any])
    for arrays in tfrec.Dataset(files, shard="auto", features=spec, batch_size=8):
        assert_type(arrays, dict[str, NDArray[Any]])
    for batch in tfrec.Dataset(files, batch_size=8, drop_remainder=True, shuffle_block=64):
        assert_type(batch, list[bytes])
    for dicts in tfrec.Dataset(files, parse=True, batch_size=8):
        assert_type(dicts, list[dict[str, list[Any]]])
    for rec in tfrec.Dataset("a.tfrecord.gz", compression_type="GZIP"):
        assert_type(rec, bytes)
    assert_type(tfrec.MapDataset(files, features=spec)[0], dict[str, NDArray[Any]])
    assert_type(tfrec.MapDataset(files)[0], bytes)
    assert_type(tfrec.MapDataset(files, parse=True)[0], dict[str, list[Any]])
    for r in tfrec.tf_record_iterator(files[0], "GZIP"):
        assert_type(r, bytes)
    me = tfrec.task_identity()
    assert_type(me.index, int)
    assert_type(me.local_rank, int | None)
    assert_type(tfrec.task.resolve_shard("auto"), tuple[int, int])


def storage() -> None:
    info = tfrec.storage.stat("gs://bucket/a")
    assert_type(info.crc32c, int | None)
    assert_type(tfrec.storage.read_bytes("gs://bucket/a"), bytes)


def conversion() -> None:
    manifest = tfrec.convert_images("raw", "out", layout="folders", train_shards=4,
                                    progress=lambda done, total, bi, bo: None)
    assert_type(manifest, dict[str, Any])


def bigtable() -> None:
    with tfrec.bigtable.Writer("p", "i", "t", create_table=True) as w:
        n = w.write_tfrecords("/data/train-*", progress=lambda p: p.next_index > 10)
        assert_type(n, int)
        w.put(b"k", b"v")
        ws = w.stats()
        assert_type(ws, WriterStats)
        assert_type(ws["rows_acked"], int)
    for failed in w.failed_rows():
        assert_type(failed.message, str)
    r = tfrec.bigtable.Reader("p", "i", "t", prefix=b"train_", parallel_scans=2,
                              credentials_file="/keys/sa.json", tls=True,
                              user_project="billing-project")
    for row in r:
        assert_type(row.key, bytes)
        assert_type(row.value("tfexample", b"example"), bytes | None)
    assert_type(r.stats(), ReadStats)
    ds = tfrec.bigtable.Dataset("p", "i", "t", parse=True)
    for ex in ds:
        assert_type(ex, dict[str, list[Any]])
    for value in tfrec.bigtable.Dataset("p", "i", "t", shard="auto", plan="gs://b/plan"):
        assert_type(value, bytes)
    assert_type(ds.stats()["rows"], int)
    try:
        tfrec.bigtable.check_export("gs://b/out.part-*")
    except tfrec.BigtableError as e:
        assert_type(e.report, str)
