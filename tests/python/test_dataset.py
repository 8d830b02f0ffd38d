"""Indexes, random access and datasets from Python (tfrec.Dataset,
tfrec.RandomAccessReader, `tfrec index`, `tfrec count`), cross-checked
against an index computed independently: tfrecord_ref.py frames the
records (python3-crc32c) and walk_index() below reads the framing back
the way DALI's tfrecord2idx and the `tfrecord` package do."""
import os
import random
import struct

import pytest

import tfrecord_ref as ref
from bindings_env import load_tfrec


@pytest.fixture(scope="module")
def tfrec(build_dir):
    return load_tfrec(build_dir)


def walk_index(path):
    """'OFFSET LENGTH' lines from the file's framing, independently of libtfrec."""
    lines = []
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    while pos < len(data):
        (n,) = struct.unpack_from("<Q", data, pos)
        assert struct.unpack_from("<I", data, pos + 8)[0] == ref.masked_crc(data[pos:pos + 8])
        lines.append("%d %d\n" % (pos, n + 16))
        pos += n + 16
    return "".join(lines)


def records_of(f, n):
    rnd = random.Random(f)
    return [b"%d:%d:" % (f, r) + rnd.randbytes(rnd.choice((0, 3, 100, 1500))) for r in range(n)]


def make_files(tmp_path, counts):
    paths = []
    for f, n in enumerate(counts):
        p = str(tmp_path / ("part-%d.tfrecord" % f))
        ref.write_records(p, records_of(f, n))
        paths.append(p)
    return paths


def key(rec):
    f, r = rec.split(b":")[:2]
    return int(f), int(r)


def test_tfrec_index_matches_an_independent_walk(tfrec, tmp_path, run_tfrec):
    paths = make_files(tmp_path, [50, 0, 7])
    res = run_tfrec("index", str(tmp_path / "part-*"))
    assert res.returncode == 0, res.stderr
    assert res.stdout.decode().splitlines() == ["%d\t%s.idx" % (n, p)
                                                for n, p in zip([50, 0, 7], paths)]
    for p in paths:
        with open(p + ".idx") as f:
            assert f.read() == walk_index(p)
    # Running it again over the same pattern leaves the .idx files out.
    res = run_tfrec("index", str(tmp_path / "part-*"))
    assert res.returncode == 0 and len(res.stdout.splitlines()) == 3, res.stderr


def test_writer_index_equals_walk_and_serves_counts(tfrec, tmp_path, run_tfrec):
    p = str(tmp_path / "w.tfrecord")
    with tfrec.TFRecordWriter(p, write_index=True) as w:
        for rec in records_of(3, 200):
            w.write(rec)
    with open(p + ".idx") as f:
        assert f.read() == walk_index(p)
    assert tfrec.count_records(p) == (200, True)
    assert run_tfrec("count", p).stdout == b"200\n"
    with pytest.raises(tfrec.UnsupportedError):
        tfrec.TFRecordWriter(str(tmp_path / "z.tfrecord"), compression="GZIP", write_index=True)


def test_index_written_by_another_tool_is_used(tfrec, tmp_path):
    """An index in the DALI format from elsewhere: random reads go through it."""
    p = make_files(tmp_path, [30])[0]
    with open(p + ".idx", "w") as f:
        f.write(walk_index(p))
    recs = records_of(0, 30)
    with tfrec.RandomAccessReader(p) as r:
        assert len(r) == 30
        for k in random.Random(1).sample(range(30), 30):
            assert r[k] == recs[k]
        assert r[-1] == recs[-1]
        with pytest.raises(IndexError):
            r[30]


def test_cli_count_stale_and_garbage_index(tfrec, tmp_path, run_tfrec):
    p = make_files(tmp_path, [12])[0]
    assert run_tfrec("index", p).returncode == 0
    assert run_tfrec("count", p).stdout == b"12\n"
    # The file grows after indexing: the stale index is ignored.
    ref.write_records(p, records_of(0, 13))
    os.utime(p + ".idx", (1, 1))
    assert tfrec.count_records(p) == (13, False)
    assert run_tfrec("count", p).stdout == b"13\n"
    # A garbled index is reported, naming the index and its line.
    with open(p + ".idx", "w") as f:
        f.write("0 20\n10 20\n")
    res = run_tfrec("count", p)
    assert res.returncode == 1
    assert b"part-0.tfrecord.idx: line 2" in res.stderr and b"overlaps" in res.stderr
    assert run_tfrec("count", "--noindex", p).stdout == b"13\n"
    # Compressed files cannot be indexed: exit 1 with the reason.
    gz = str(tmp_path / "c.tfrecord.gz")
    ref.write_records(gz, [b"x"], "GZIP")
    res = run_tfrec("index", gz)
    assert res.returncode == 1 and b"c.tfrecord.gz" in res.stderr and b"GZIP" in res.stderr


@pytest.mark.parametrize("shuffle", [False, True])
def test_shards_are_disjoint_and_cover(tfrec, tmp_path, shuffle):
    paths = make_files(tmp_path, [40, 3, 0, 17])
    for n in (1, 2, 3, 8):
        seen = []
        sizes = []
        for i in range(n):
            ds = tfrec.Dataset(paths, shuffle=shuffle, seed=5, shard=(i, n),
                               num_parallel_reads=1 + i % 3)
            part = [key(r) for r in ds]
            assert len(part) == len(ds)
            sizes.append(len(part))
            seen += part
            ds.close()
        assert sorted(seen) == sorted((f, r) for f, c in enumerate([40, 3, 0, 17])
                                      for r in range(c))
        assert max(sizes) - min(sizes) <= 1


def test_shuffle_reproducible_and_new_per_epoch(tfrec, tmp_path):
    paths = make_files(tmp_path, [30, 30])
    a = tfrec.Dataset(paths, shuffle=True, seed=11)
    e0, e1 = [key(r) for r in a], [key(r) for r in a]  # epochs 0 and 1
    b = tfrec.Dataset(paths, shuffle=True, seed=11, num_parallel_reads=4, block_records=5)
    assert [key(r) for r in b] == e0
    b.set_epoch(1)
    assert [key(r) for r in b] == e1
    assert e0 != e1 and sorted(e0) == sorted(e1)
    assert e0 != sorted(e0)


def test_block_shuffle_every_record_once_and_seeded(tfrec, tmp_path):
    counts = [40, 3, 0, 17]
    paths = make_files(tmp_path, counts)
    every = sorted((f, r) for f, c in enumerate(counts) for r in range(c))
    a = tfrec.Dataset(paths, shuffle=True, seed=3, shuffle_block=4, shuffle_buffer=6)
    e0, e1 = [key(r) for r in a], [key(r) for r in a]
    assert sorted(e0) == every and sorted(e1) == every and e0 != e1
    b = tfrec.Dataset(paths, shuffle=True, seed=3, shuffle_block=4, shuffle_buffer=6,
                      num_parallel_reads=3, block_records=7)
    assert [key(r) for r in b] == e0
    assert [key(r) for r in tfrec.Dataset(paths, shuffle=True, seed=3)] != e0
    with pytest.raises(ValueError):
        tfrec.Dataset(paths, shuffle_block=4)  # needs shuffle
    with pytest.raises(ValueError):
        tfrec.Dataset(paths, shuffle=True, shuffle_block=1 << 32)


def test_default_shuffle_is_a_block_shuffle_of_small_local_records(tfrec, tmp_path):
    """shuffle=True alone: small local records get a block shuffle of about
    64 KiB blocks, read in place from mappings or by threads with pread in
    the same order, each record once per epoch in every shard split;
    shuffle_block=1 is the global shuffle, another order."""
    counts = [200, 7, 0, 90]
    paths = make_files(tmp_path, counts)
    every = sorted((f, r) for f, c in enumerate(counts) for r in range(c))
    orders = {}
    for use_mmap in (None, True, False):
        for epoch in (0, 1):
            for n in (1, 3):
                seen = []
                for i in range(n):
                    with tfrec.Dataset(paths, shuffle=True, seed=9, shard=(i, n),
                                       use_mmap=use_mmap) as ds:
                        ds.set_epoch(epoch)
                        seen += [key(r) for r in ds]
                assert sorted(seen) == every, (use_mmap, epoch, n)
                orders.setdefault((epoch, n), []).append(seen)
    for (epoch, n), got in orders.items():
        assert got[0] == got[1] == got[2], (epoch, n)  # mapped or not
    e0 = orders[(0, 1)][0]
    assert e0 != orders[(1, 1)][0] and e0 != sorted(e0)
    with tfrec.Dataset(paths, shuffle=True, seed=9, shuffle_block=1) as g:
        assert sorted(key(r) for r in g) == every
    with tfrec.Dataset(paths, shuffle=True, seed=9, shuffle_block=1) as g:
        glob = [key(r) for r in g]
    assert glob != e0


def test_parse_yields_example_dicts(tfrec, tmp_path):
    p = str(tmp_path / "ex.tfrecord")
    with tfrec.TFRecordWriter(p) as w:
        for i in range(5):
            w.write(tfrec.Example({"label": [i], "name": [b"n%d" % i]}).serialize())
    got = list(tfrec.Dataset([p], parse=True))
    assert got == [{"label": [i], "name": [b"n%d" % i]} for i in range(5)]


def test_bad_arguments(tfrec, tmp_path):
    paths = make_files(tmp_path, [3])
    for kw in (dict(shard=(2, 2)), dict(shard=3), dict(num_parallel_reads=0),
               dict(index="maybe"), dict(seed=-1)):
        with pytest.raises(ValueError):
            tfrec.Dataset(paths, **kw)
    with pytest.raises(tfrec.NoSuchFileError):
        tfrec.Dataset([str(tmp_path / "missing")])
    with pytest.raises(tfrec.NotFoundError):
        tfrec.Dataset(paths, index="require")
    ds = tfrec.Dataset(paths)
    ds.close()
    with pytest.raises(ValueError):
        list(ds)


def test_corrupt_file_gets_no_index(tfrec, tmp_path, run_tfrec):
    p = make_files(tmp_path, [20])[0]
    data = bytearray(open(p, "rb").read())
    data[len(data) // 2] ^= 1
    open(p, "wb").write(bytes(data))
    res = run_tfrec("index", p)
    assert res.returncode == 1 and b"offset" in res.stderr, res.stderr
    assert not os.path.exists(p + ".idx")
    assert not [n for n in os.listdir(tmp_path) if ".idx" in n]  # no temporary left either


def docs_recipe():
    """The PyTorch recipe, taken from docs/datasets.md as written there."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "..", "docs", "datasets.md")) as f:
        text = f.read()
    start = text.index("```python\nimport torch.utils.data")
    code = text[start + len("```python\n"):text.index("```", start + 10)]
    return "\n".join(l for l in code.splitlines() if not l.startswith("loader ="))


def test_torch_iterable_recipe(tfrec, tmp_path):
    """The docs/datasets.md recipe under a DataLoader with two worker processes."""
    tud = pytest.importorskip("torch.utils.data")
    ns = {}
    exec(docs_recipe(), ns)
    paths = []
    for f, n in enumerate([25, 14]):
        p = str(tmp_path / ("ex-%d.tfrecord" % f))
        with tfrec.TFRecordWriter(p) as w:
            for r in range(n):
                w.write(tfrec.Example({"image/encoded": [b"%d:%d" % (f, r)],
                                      "image/class/label": [f]}).serialize())
        paths.append(p)
    seen = []
    for rank in range(2):
        it = ns["TFRecordIterable"](paths, rank=rank, world=2, seed=3)
        loader = tud.DataLoader(it, batch_size=None, num_workers=2)
        for image, label in loader:
            f, r = key(bytes(image))
            assert f == int(label)
            seen.append((f, r))
    assert sorted(seen) == sorted([(0, r) for r in range(25)] + [(1, r) for r in range(14)])
