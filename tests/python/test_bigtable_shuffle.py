"""Shuffled Bigtable reads (shuffle_ranges, shuffle_buffer) against the
official Bigtable emulator: every epoch yields every row of the share
exactly once, whatever the seed, the epoch, the streams and the shard
plan, and the range order is fixed by (seed, epoch)."""
# needs: tfrec-bigtable
import pytest

PROJECT, INSTANCE = "shufproj", "shufinst"
ROWS = 2000
ALL = [b"%d" % i for i in range(ROWS)]
SPLITS = [b"s_%05d" % i for i in range(0, ROWS, 50)]  # every 50th key


@pytest.fixture(scope="module")
def tfrec(bigtable_tfrec):
    return bigtable_tfrec


@pytest.fixture(scope="module")
def emulator(bigtable_emulator, tfrec):
    """Rows s_00000..s_01999 holding their number, and rows of another prefix."""
    with tfrec.bigtable.Writer(PROJECT, INSTANCE, "t", create_table=True) as w:
        for i in range(ROWS):
            w.put(b"s_%05d" % i, b"%d" % i)
        for i in range(10):
            w.put(b"t_%d" % i, b"other")
    return bigtable_emulator


def dataset(tfrec, **kw):
    return tfrec.bigtable.Dataset(PROJECT, INSTANCE, "t", prefix=b"s_", column=b"example", **kw)


def position_corr(values):
    """Correlation between a row's key position and its output position."""
    pos = [int(v) for v in values]
    n = len(pos)
    m = (n - 1) / 2
    var = sum((i - m) ** 2 for i in range(n))
    return sum((i - m) * (p - m) for i, p in enumerate(pos)) / var


@pytest.mark.parametrize("seed", [0, 7])
def test_every_epoch_exactly_once(tfrec, emulator, seed):
    ds = dataset(tfrec, shuffle_ranges=40, shuffle_buffer=200, parallel_scans=3, seed=seed,
                 split_keys=SPLITS)
    orders = []
    for epoch in range(3):
        got = list(ds)
        assert sorted(got, key=int) == ALL  # every row once
        assert ds.stats["ranges"] == 40 and ds.stats["rows"] == ROWS
        assert abs(position_corr(got)) < 0.3  # far from the key order (1.0)
        orders.append(got)
    assert orders[0] != orders[1] != orders[2]


def test_default_cuts_without_split_keys(tfrec, emulator):
    # cut by key arithmetic between the share's bounds: still exactly once
    ds = dataset(tfrec, shuffle_ranges=16, parallel_scans=2, seed=3)
    got = list(ds)
    assert sorted(got, key=int) == ALL
    assert ds.stats["ranges"] == 16


def test_range_order_is_fixed_by_seed_and_epoch(tfrec, emulator):
    def blocks(seed, epoch):
        r = tfrec.bigtable.Reader(PROJECT, INSTANCE, "t", prefix=b"s_", shuffle_ranges=10,
                                  split_keys=SPLITS, seed=seed, epoch=epoch)
        rows = list(r)
        assert sorted(x.key for x in rows) == [b"s_%05d" % i for i in range(ROWS)]
        order = []
        for x in rows:  # one stream: one range after another, each in key order
            if not order or order[-1] != x.range:
                assert x.range not in order
                order.append(x.range)
        for rng in order:
            mine = [x.key for x in rows if x.range == rng]
            assert mine == sorted(mine)
        return order

    a = blocks(5, 0)
    assert sorted(a) == list(range(10)) and a != sorted(a)
    assert blocks(5, 0) == a  # deterministic
    assert blocks(5, 1) != a  # a new order each epoch
    assert blocks(6, 0) != a


def test_one_stream_with_buffer_is_deterministic(tfrec, emulator):
    ds = dataset(tfrec, shuffle_ranges=20, shuffle_buffer=64, seed=11, split_keys=SPLITS)
    ds.set_epoch(4)
    first = list(ds)
    ds.set_epoch(4)
    assert list(ds) == first
    assert list(ds) != first  # the epoch moved on to 5 after a full pass
    assert sorted(first, key=int) == ALL


@pytest.mark.parametrize("n,split_keys", [(3, None), (4, SPLITS)])
def test_shard_plans_cover_each_epoch_once(tfrec, emulator, n, split_keys):
    plan = tfrec.bigtable.plan(PROJECT, INSTANCE, "t", n, prefix=b"s_",
                               split_keys=[b"s_00333", b"s_00700", b"s_01234", b"s_01500"])
    for epoch in (0, 1):
        seen = []
        for i in range(n):
            ds = dataset(tfrec, shard=(i, n), plan=plan, shuffle_ranges=12, shuffle_buffer=50,
                         parallel_scans=2, seed=epoch + 1, split_keys=split_keys)
            ds.set_epoch(epoch)
            part = list(ds)
            lo, hi = plan.shard(i)
            for v in part:  # inside this worker's window
                k = b"s_%05d" % int(v)
                assert (not lo or k >= lo) and (not hi or k < hi)
            seen += part
        assert sorted(seen, key=int) == ALL


def test_keys_ranges_and_limit(tfrec, emulator):
    R = tfrec.bigtable.Reader
    want = [b"s_%05d" % i for i in range(3, ROWS, 97)]
    got = [x.key for x in R(PROJECT, INSTANCE, "t", keys=list(reversed(want)), shuffle_ranges=5,
                            parallel_scans=2, seed=2)]
    assert sorted(got) == want and got != want  # by count into 5 ranges, shuffled
    got = [x.key for x in R(PROJECT, INSTANCE, "t", ranges=[(b"s_00100", b"s_00200"),
                                                            (b"s_01900", b"t")],
                            shuffle_ranges=8, seed=4)]
    assert sorted(got) == [b"s_%05d" % i for i in list(range(100, 200)) +
                           list(range(1900, ROWS))]
    got = [x.key for x in R(PROJECT, INSTANCE, "t", prefix=b"s_", limit=150, shuffle_ranges=30,
                            split_keys=SPLITS, parallel_scans=2, seed=1)]
    assert len(got) == len(set(got)) == 150


def test_options_checked(tfrec, emulator):
    with pytest.raises(ValueError, match="shuffle_ranges"):
        dataset(tfrec, shuffle_ranges=0)
    with pytest.raises(ValueError, match="shuffle_buffer"):
        dataset(tfrec, shuffle_buffer=0)
    with pytest.raises(ValueError, match="seed"):
        dataset(tfrec, shuffle_ranges=4, seed=-1)
    with pytest.raises(ValueError, match="exclusive"):  # split_keys and plan without shuffling
        list(dataset(tfrec, shard=(0, 2), split_keys=SPLITS,
                     plan=tfrec.bigtable.plan(PROJECT, INSTANCE, "t", 2, prefix=b"s_",
                                              split_keys=[b"s_01000"])))
