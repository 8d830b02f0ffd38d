"""tfrec.bigtable.Reader's row sets and parallel scans, and
tfrec.bigtable.Dataset, against the official Bigtable emulator."""
# needs: tfrec-bigtable
import pytest

PROJECT, INSTANCE = "scanproj", "scaninst"
ROWS = 600


@pytest.fixture(scope="module")
def tfrec(bigtable_tfrec):
    return bigtable_tfrec


@pytest.fixture(scope="module")
def emulator(bigtable_emulator, tfrec):
    """The module's emulator holding rows k000..k599 (Examples {"i": [i]})
    and rows of another prefix."""
    with tfrec.bigtable.Writer(PROJECT, INSTANCE, "t", create_table=True) as w:
        for i in range(ROWS):
            w.put(b"k%03d" % i, tfrec.Example({"i": [i]}).serialize())
        for i in range(10):
            w.put(b"other%d" % i, tfrec.Example({"i": [-1]}).serialize())
    return bigtable_emulator


def keys(reader):
    return [r.key for r in reader]


ALL = [b"k%03d" % i for i in range(ROWS)]


def test_parallel_scans_in_key_order(tfrec, emulator):
    r = tfrec.bigtable.Reader(PROJECT, INSTANCE, "t", prefix=b"k", parallel_scans=4)
    assert keys(r) == ALL
    st = r.stats()
    # the emulator samples ~1% of the keys at random: a range may be empty
    # (and then needs no stream), but there are always 4 of them
    assert st["ranges"] == 4 and st["rows"] == ROWS and st["streams"] >= 1


def test_unordered_rows_carry_their_range(tfrec, emulator):
    rows = list(tfrec.bigtable.Reader(PROJECT, INSTANCE, "t", prefix=b"k", parallel_scans=3,
                                      ordered=False))
    assert sorted(r.key for r in rows) == ALL
    for rng in range(3):
        mine = [r.key for r in rows if r.range == rng]
        assert mine == sorted(mine)  # key order within a range
    key, cells = rows[0]  # still a pair
    assert key == rows[0].key


def test_row_sets(tfrec, emulator):
    T = tfrec.bigtable.Reader
    assert keys(T(PROJECT, INSTANCE, "t", ranges=[(b"k010", b"k013"), (b"k500", None)],
                  limit=5)) == [b"k010", b"k011", b"k012", b"k500", b"k501"]
    assert keys(T(PROJECT, INSTANCE, "t", ranges=[{"start": b"k010", "start_open": True,
                                                   "end": b"k012", "end_closed": True}])) == \
        [b"k011", b"k012"]
    assert keys(T(PROJECT, INSTANCE, "t", keys=[b"k599", b"k001", b"nope", b"k001"],
                  parallel_scans=2)) == [b"k001", b"k599"]
    assert keys(T(PROJECT, INSTANCE, "t", keys=[])) == []  # not the whole table
    with pytest.raises(ValueError, match="exclusive"):
        T(PROJECT, INSTANCE, "t", keys=[b"a"], ranges=[(b"a", b"b")])
    with pytest.raises(ValueError, match="shard"):
        T(PROJECT, INSTANCE, "t", shard=(2, 2))
    with pytest.raises(ValueError, match="parallel_scans"):
        T(PROJECT, INSTANCE, "t", parallel_scans=0)


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_dataset_shards_disjoint_and_covering(tfrec, emulator, n):
    splits = [b"k%03d" % i for i in (50, 120, 121, 333, 400, 480, 590, 599, 700)]
    seen = []
    for i in range(n):
        ds = tfrec.bigtable.Dataset(PROJECT, INSTANCE, "t", prefix=b"k", parallel_scans=2,
                                    shard=(i, n), split_keys=splits, parse=True)
        part = [ex["i"][0] for ex in ds]
        assert part == sorted(part)
        seen += part
    assert sorted(seen) == list(range(ROWS))


def test_dataset_epochs_and_bytes(tfrec, emulator):
    ds = tfrec.bigtable.Dataset(PROJECT, INSTANCE, "t", prefix=b"k", parallel_scans=3)
    first = list(ds)
    assert len(first) == ROWS and list(ds) == first  # a new pass each time
    assert tfrec.Example.parse(first[7]).to_dict()["i"] == [7]
    assert ds.stats()["rows"] == ROWS
    with pytest.raises(ValueError, match="latest cell"):
        tfrec.bigtable.Dataset(PROJECT, INSTANCE, "t", all_versions=True)


def test_dataset_values_small_then_large(tfrec, emulator):
    """Values come in batches, then one call each once they are large on
    average: every value exactly as written, in key order, empty ones too,
    and rows without the column left out."""
    vals = [b"", b"x"] + [bytes([i % 251]) * (i * 997 % 70000) for i in range(2, 300)]
    with tfrec.bigtable.Writer(PROJECT, INSTANCE, "big", create_table=True) as w:
        for i, v in enumerate(vals):
            w.put(b"v%03d" % i, v)
        w.put(b"v%03d" % len(vals), b"elsewhere", column=b"other")
    got = list(tfrec.bigtable.Dataset(PROJECT, INSTANCE, "big", prefix=b"v"))
    assert got == vals
    assert all(type(v) is bytes for v in got)
