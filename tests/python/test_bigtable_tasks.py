"""A Bigtable load and export split into tasks through the Python bindings
(Writer.write_tfrecords(task_index=, num_tasks=), Reader(task_index=,
num_tasks=)) against the official emulator, read back with the `cbt` CLI."""
# needs: tfrec-bigtable

import pytest

import tfrecord_ref
from test_bindings_bigtable import INSTANCE, PROJECT, cbt_rows


@pytest.fixture(scope="module")
def tfrec(bigtable_tfrec):
    return bigtable_tfrec


@pytest.fixture(scope="module")
def emulator(bigtable_emulator):
    return bigtable_emulator


def make_files(tmp_path, counts):
    records = []
    for i, n in enumerate(counts):
        recs = [b"rec-%d\x00\xff" % (len(records) + k) for k in range(n)]
        tfrecord_ref.write_records(str(tmp_path / ("part-%05d" % i)), recs)
        records += recs
    return records


@pytest.mark.parametrize("num_records", [None, 37])
def test_tasks_load_every_record_once_with_one_process_keys(tfrec, emulator, tmp_path,
                                                            num_records):
    records = make_files(tmp_path, [9, 0, 14, 14])  # 37, not a multiple of 3
    table = "tasks%s" % (num_records or "")
    shares = []
    for t in range(3):
        with tfrec.bigtable.Writer(PROJECT, INSTANCE, table, create_table=True) as w:
            n = w.write_tfrecords(str(tmp_path / "part-*"), num_records=num_records,
                                  task_index=t, num_tasks=3)
            st = w.load_stats
        assert n == st["share_end"] - st["share_begin"]
        assert st["total_records"] == 37
        assert st["total_source"] == ("num_records" if num_records else "read")
        shares.append((st["share_begin"], st["share_end"]))
    assert shares == [(0, 12), (12, 24), (24, 37)]
    rows = cbt_rows(emulator, table)
    width = 2 if num_records else 10
    assert rows == {"train_%0*d" % (width, i): {"tfexample:example": r}
                    for i, r in enumerate(records)}


def test_reader_tasks_cover_the_table_in_key_order(tfrec, emulator, tmp_path):
    records = make_files(tmp_path, [20, 20])
    with tfrec.bigtable.Writer(PROJECT, INSTANCE, "export", create_table=True) as w:
        w.write_tfrecords(str(tmp_path / "part-*"), num_records=40)
    splits = [b"train_10", b"train_25", b"train_33"]
    got = []
    for t in range(4):
        with tfrec.bigtable.Reader(PROJECT, INSTANCE, "export", prefix="train_",
                                   split_keys=splits, task_index=t, num_tasks=4) as r:
            got += [row.value() for row in r]
    assert got == records
    # shard=(i, n) is the same share
    a = [row.key for row in tfrec.bigtable.Reader(PROJECT, INSTANCE, "export", split_keys=splits,
                                                  task_index=2, num_tasks=4)]
    b = [row.key for row in tfrec.bigtable.Reader(PROJECT, INSTANCE, "export", split_keys=splits,
                                                  shard=(2, 4))]
    assert a == b and a


def test_bad_task_arguments(tfrec, emulator, tmp_path):
    make_files(tmp_path, [3])
    with tfrec.bigtable.Writer(PROJECT, INSTANCE, "badtasks", create_table=True) as w:
        for kwargs in ({"task_index": 1}, {"num_tasks": 2}, {"task_index": 2, "num_tasks": 2},
                       {"task_index": -1, "num_tasks": 2}, {"task_index": 0, "num_tasks": 0}):
            with pytest.raises(ValueError, match="task_index"):
                w.write_tfrecords(str(tmp_path / "part-*"), **kwargs)
        # more tasks than records: an empty share loads nothing, successfully
        assert w.write_tfrecords(str(tmp_path / "part-*"), task_index=0, num_tasks=5) == 0
        assert w.load_stats["share_begin"] == w.load_stats["share_end"] == 0
    with pytest.raises(ValueError, match="same share"):
        tfrec.bigtable.Reader(PROJECT, INSTANCE, "badtasks", shard=(0, 2), task_index=0,
                              num_tasks=2)
