"""One form for statistics: every handle's stats() returns a plain dict
with the keys of its TypedDict (tfrec.record.ReaderStats,
tfrec.bigtable.WriterStats, tfrec.bigtable.ReadStats); the former
spellings (bigtable.Writer's `stats` attribute and get_stats(),
bigtable.Reader's `stats` property, bigtable.Dataset's `stats` attribute)
still answer, with a DeprecationWarning."""
# needs: tfrec-bigtable
import warnings

import pytest

PROJECT, INSTANCE = "statsproj", "statsinst"


@pytest.fixture(scope="module")
def tfrec(bigtable_tfrec):
    return bigtable_tfrec


@pytest.fixture(scope="module")
def table(bigtable_emulator, tfrec):
    with tfrec.bigtable.Writer(PROJECT, INSTANCE, "t", create_table=True) as w:
        for i in range(20):
            w.put(b"k%02d" % i, b"v%d" % i, column=b"example")
    return "t"


def keys_of(typed_dict):
    return set(typed_dict.__annotations__)


def no_warning(call):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return call()


def test_record_reader_stats_is_a_typed_dict(tfrec, tmp_path):
    p = tmp_path / "a.tfrecord"
    with tfrec.TFRecordWriter(p) as w:
        w.write_many([b"x" * 10] * 3)
    with tfrec.TFRecordReader(p) as r:
        assert len(list(r)) == 3
        st = no_warning(r.stats)
    assert type(st) is dict and set(st) == keys_of(tfrec.record.ReaderStats)
    assert st["records"] == 3 and st["bytes"] == 30 and st["skipped_regions"] == 0


def test_writer_stats_method_and_old_spellings(tfrec, table):
    bt = tfrec.bigtable
    w = bt.Writer(PROJECT, INSTANCE, table)
    w.put(b"w1", b"v")
    w.put(b"w2", b"v")
    live = no_warning(w.stats)
    assert type(live) is dict and set(live) == keys_of(bt.WriterStats)
    assert live["rows_put"] == 2
    with pytest.warns(DeprecationWarning, match=r"get_stats\(\) is deprecated"):
        assert w.get_stats()["rows_put"] == 2
    with pytest.warns(DeprecationWarning, match=r"call Writer.stats\(\)"):
        assert w.stats["rows_put"] == 2  # the attribute spelling, as a dict
    final = w.close()
    assert final["rows_acked"] == 2 and final["rows_failed"] == 0
    assert no_warning(w.stats) == final  # the final figures after close()
    with pytest.warns(DeprecationWarning):
        assert w.stats == final and dict(w.stats) == final
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="closed"):
        w.get_stats()  # as before: the live figures only while open


def test_reader_stats_method_and_property_spelling(tfrec, table):
    bt = tfrec.bigtable
    r = bt.Reader(PROJECT, INSTANCE, table, prefix=b"k")
    assert len(list(r)) == 20
    st = no_warning(r.stats)
    assert type(st) is dict and set(st) == keys_of(bt.ReadStats) and st["rows"] == 20
    with pytest.warns(DeprecationWarning, match=r"call Reader.stats\(\)"):
        assert r.stats["rows"] == 20  # the former property
    r.close()
    assert no_warning(r.stats) == st


def test_dataset_stats_method_and_attribute_spelling(tfrec, table):
    ds = tfrec.bigtable.Dataset(PROJECT, INSTANCE, table, prefix=b"k")
    assert no_warning(ds.stats) == {}
    assert len(list(ds)) == 20
    st = no_warning(ds.stats)
    assert set(st) == keys_of(tfrec.bigtable.ReadStats) and st["rows"] == 20
    with pytest.warns(DeprecationWarning, match=r"call Dataset.stats\(\)"):
        assert ds.stats["rows"] == 20 and "rows" in ds.stats

