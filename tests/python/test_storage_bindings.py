"""gs:// through the Python bindings (libtfrec-storage) against the Cloud
Storage test server (tests/storage/gcs_emulator.js, started here on a free
loopback port): TFRecordReader/Writer, count, verify, tfrec.glob (the order
of local globs), tfrec.storage, convert_images into and from a bucket, a writer
aborted or dropped leaving no object, errors naming the object; and, with
only the core library, a MissingPartError naming libtfrec-storage.
"""
# needs: tfrec-storage
import json
import os
import shutil
import subprocess
import sys
import urllib.request

import pytest

from bindings_env import PYTHON_DIR, REPO, load_tfrec


@pytest.fixture(scope="module")
def emulator():
    """STORAGE_EMULATOR_HOST of a server for this module (one given in the
    environment is used as it is)."""
    if os.environ.get("STORAGE_EMULATOR_HOST"):
        yield os.environ["STORAGE_EMULATOR_HOST"]
        return
    npm = subprocess.run([os.path.join(REPO, "scripts", "install-npm-deps.sh")],
                         capture_output=True, text=True, timeout=900)
    assert npm.returncode == 0, "npm packages: " + npm.stderr[-2000:]
    env = dict(os.environ, TFREC_NPM_DIR=npm.stdout.strip())
    server = subprocess.Popen(["node", os.path.join(REPO, "tests", "storage", "gcs_emulator.js")],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=env)
    try:
        line = server.stdout.readline()  # "gcs_emulator port=P admin=A" once it listens
        assert line.startswith("gcs_emulator port="), line + server.stdout.read(2000)
        port = line.split("port=")[1].split()[0]
        os.environ["STORAGE_EMULATOR_HOST"] = "http://127.0.0.1:" + port
        os.environ["TFREC_TEST_GCS_ADMIN"] = "http://127.0.0.1:" + line.split("admin=")[1].split()[0]
        yield os.environ["STORAGE_EMULATOR_HOST"]
    finally:
        server.terminate()
        server.wait(timeout=30)
        os.environ.pop("STORAGE_EMULATOR_HOST", None)
        os.environ.pop("TFREC_TEST_GCS_ADMIN", None)


@pytest.fixture(scope="module")
def tfrec(build_dir, emulator):
    t = load_tfrec(build_dir)
    if not t._lib.loaded("tfrec-storage"):
        pytest.fail("libtfrec-storage not loaded: %s" % (t.parts(),))
    return t


BUCKET = "gs://py-%d" % os.getpid()


def test_write_read_count_verify(tfrec):
    for comp in (None, "GZIP", "ZLIB"):
        name = "%s/rw/%s" % (BUCKET, comp)
        records = [b"r%d" % i * (i + 1) for i in range(300)]
        with tfrec.TFRecordWriter(name, compression=comp) as w:
            for r in records:
                w.write(r)
        assert list(tfrec.TFRecordReader(name)) == records
        assert tfrec.count(name) == 300
        v = tfrec.verify(name)
        assert v.ok and v.records == 300 and v.compression == comp


def test_glob_sorted_like_local(tfrec, tmp_path):
    names = ["train-10", "train-2", "train-B", "train-a", "other"]
    for n in names:
        for prefix in (str(tmp_path), BUCKET + "/glob"):
            with tfrec.TFRecordWriter("%s/%s" % (prefix, n)) as w:
                w.write(n.encode())
    local = [os.path.basename(p) for p in tfrec.glob(str(tmp_path / "train-*"))]
    remote = tfrec.glob(BUCKET + "/glob/train-*")
    assert local == ["train-10", "train-2", "train-B", "train-a"]
    assert remote == [BUCKET + "/glob/" + n for n in local]
    assert tfrec.glob(BUCKET + "/glob/nothing-*") == []
    assert tfrec.glob(BUCKET + "/glob/other") == [BUCKET + "/glob/other"]
    info = tfrec.storage.glob_info(BUCKET + "/glob/train-1?")
    assert [i.name for i in info] == [BUCKET + "/glob/train-10"]
    assert info[0].size == 16 + len(b"train-10") and info[0].generation > 0
    assert info[0].crc32c is not None


def test_stat_remove_bytes(tfrec):
    name = BUCKET + "/bytes/manifest.json"
    tfrec.storage.write_bytes(name, b'{"x": 1}')
    assert tfrec.storage.read_bytes(name) == b'{"x": 1}'
    st = tfrec.storage.stat(name)
    assert st.name == name and st.size == 8 and st.generation > 0
    tfrec.storage.remove(name)
    with pytest.raises(tfrec.NoSuchFileError) as e:
        tfrec.storage.stat(name)
    assert "bytes/manifest.json" in str(e.value)
    assert tfrec.storage.is_remote("GS://b/o") and not tfrec.storage.is_remote("/gs://b")


def test_missing_object_names_it(tfrec):
    with pytest.raises(tfrec.NoSuchFileError) as e:
        tfrec.TFRecordReader(BUCKET + "/no/such-object")
    assert isinstance(e.value, FileNotFoundError)
    assert "no/such-object" in str(e.value)
    with pytest.raises(tfrec.NoSuchFileError):
        tfrec.count(BUCKET + "/no/such-object")


def test_aborted_writer_leaves_no_object(tfrec):
    name = BUCKET + "/aborted"
    with pytest.raises(RuntimeError):
        with tfrec.TFRecordWriter(name) as w:
            w.write(b"x" * 1000)
            raise RuntimeError("stop")
    assert tfrec.glob(name) == []
    w = tfrec.TFRecordWriter(name)
    w.write(b"y")
    w.abort()
    assert tfrec.glob(name) == []


def test_convert_images_into_a_bucket(tfrec, tmp_path):
    if not tfrec._lib.loaded("tfrec-image"):
        pytest.skip("libtfrec-image not built")
    raw = tmp_path / "raw"
    subprocess.run([sys.executable, os.path.join(REPO, "tests", "fixtures", "make_images.py"),
                    "samples", str(raw), "--train", "6", "--validation", "2", "--classes", "2"],
                   check=True, capture_output=True)
    out = BUCKET + "/imagenet"
    m = tfrec.convert_images(str(raw), out, train_shards=2, validation_shards=1,
                             manifest_path=out + "/manifest.json")
    assert m["status"] == "ok"
    assert tfrec.glob(out + "/train/train-*") == [out + "/train/train-0000%d-of-00002" % i
                                                   for i in range(2)]
    assert sum(tfrec.count(n) for n in tfrec.glob(out + "/*/*-of-*")) == 8
    assert b'"status":"ok"' in tfrec.storage.read_bytes(out + "/manifest.json")
    assert not os.path.exists("gs:")


def _shards(root):
    return {os.path.relpath(os.path.join(d, f), root): open(os.path.join(d, f), "rb").read()
            for d, _, files in os.walk(root) for f in files if "-of-" in f}


@pytest.mark.parametrize("layout", ["imagenet", "folders"])
def test_convert_images_from_a_bucket(tfrec, tmp_path, layout):
    """raw_data_dir=gs://...: the shards are the local tree's bytes."""
    if not tfrec._lib.loaded("tfrec-image"):
        pytest.skip("libtfrec-image not built")
    raw = tmp_path / "raw"
    subprocess.run([sys.executable, os.path.join(REPO, "tests", "fixtures", "make_images.py"),
                    "samples", str(raw), "--train", "9", "--validation", "3", "--classes", "3",
                    "--layout", layout], check=True, capture_output=True)
    src = BUCKET + "/raw-" + layout
    for d, _, files in os.walk(raw):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fp:
                tfrec.storage.write_bytes(src + "/" + os.path.relpath(p, raw), fp.read())
    opts = dict(layout=layout, train_shards=2, validation_shards=1, manifest_path=None)
    local = tfrec.convert_images(str(raw), str(tmp_path / "local"), **opts)
    remote = tfrec.convert_images(src, str(tmp_path / "remote"), **opts)
    assert remote["status"] == "ok"
    for k in ("images_total", "images_written", "images_fixed", "bytes_in", "bytes_out"):
        assert remote["counts"][k] == local["counts"][k], k
    want = _shards(tmp_path / "local")
    assert len(want) == (3 if layout == "imagenet" else 2)
    assert _shards(tmp_path / "remote") == want
    with pytest.raises(tfrec.NotFoundError) as e:
        tfrec.convert_images(BUCKET + "/no-such-tree", str(tmp_path / "none"), **opts)
    assert "no-such-tree" in str(e.value)
    if layout == "imagenet":  # the same tree as tarballs in the bucket
        tars = tmp_path / "tars"
        subprocess.run([sys.executable, os.path.join(REPO, "tests", "fixtures", "make_tars.py"),
                        "official", str(raw), str(tars)], check=True, capture_output=True)
        for f in os.listdir(tars):
            with open(tars / f, "rb") as fp:
                tfrec.storage.write_bytes(src + "-tars/" + f, fp.read())
        tfrec.convert_images(None, str(tmp_path / "from-tars"),
                             train_tar=src + "-tars/ILSVRC2012_img_train.tar",
                             validation_tar=src + "-tars/ILSVRC2012_img_val.tar",
                             validation_labels_file=src + "-tars/synset_labels.txt", **opts)
        assert _shards(tmp_path / "from-tars") == want


def test_write_tfrecords_from_a_bucket_glob(tfrec, tmp_path):
    """bigtable's write_tfrecords with a gs:// pattern, on the Bigtable
    emulator: the records of the objects in name order, read back."""
    if not tfrec._lib.loaded("tfrec-bigtable"):
        pytest.skip("libtfrec-bigtable not built")
    expected = []
    for i in (1, 0):  # written out of order: loaded in name order
        recs = [b"shard%d-%d" % (i, k) for k in range(5)]
        with tfrec.TFRecordWriter("%s/bt/train-%05d" % (BUCKET, i),
                                  compression="GZIP" if i else None) as w:
            for r in recs:
                w.write(r)
        expected = recs + expected if i == 0 else expected + recs
    emu = subprocess.run([os.path.join(REPO, "scripts", "emulator.sh"), "start",
                          str(tmp_path / "bt.log")], capture_output=True, text=True, timeout=120)
    assert emu.returncode == 0, emu.stderr
    addr, pid = emu.stdout.split()
    os.environ["BIGTABLE_EMULATOR_HOST"] = addr
    try:
        with tfrec.bigtable.Writer("p", "i", "t", create_table=True) as w:
            assert w.write_tfrecords(BUCKET + "/bt/train-*", row_prefix="train_") == 10
        got = [r.value() for r in tfrec.bigtable.Reader("p", "i", "t", prefix="train_")]
        assert got == expected
    finally:
        os.environ.pop("BIGTABLE_EMULATOR_HOST", None)
        subprocess.run([os.path.join(REPO, "scripts", "emulator.sh"), "stop", pid], timeout=60)


def test_missing_part_is_named(build_dir, tmp_path):
    core = tmp_path / "core"
    core.mkdir()
    shutil.copy(os.path.realpath(os.path.join(build_dir, "libtfrec.so")), core / "libtfrec.so.1")
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "TFREC_BUILD")}
    env["TFREC_LIBRARY"] = str(core / "libtfrec.so.1")
    env["PYTHONPATH"] = PYTHON_DIR
    code = """if True:
        import tfrec
        for call in (lambda: tfrec.TFRecordReader("gs://b/o"),
                     lambda: tfrec.TFRecordWriter("gs://b/o"),
                     lambda: tfrec.glob("gs://b/*"),
                     lambda: tfrec.storage):
            try:
                call()
                print("did not raise")
            except tfrec.MissingPartError as e:
                print(str(e))
        print(len(tfrec.glob("*")) >= 0)
        """
    p = subprocess.run([sys.executable, "-c", code], env=env, cwd=str(tmp_path),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) == 5 and lines[-1] == "True", p.stdout
    for line in lines[:4]:
        assert "needs libtfrec-storage, which is not installed" in line, line
        assert "WITH_STORAGE=1" in line


def _write_indexed_shards(tfrec, base, n=3):
    """Three shards with their indexes under base (a directory or a
    bucket prefix), the same records wherever base is; the names."""
    names = []
    k = 0
    for f in range(n):
        name = "%s/train-%05d-of-%05d" % (base, f, n)
        with tfrec.TFRecordWriter(name) as w:
            for i in range(20 + 9 * f):
                w.write(b"rec-%d-" % k + bytes([k % 251]) * (k % 97))
                k += 1
        assert tfrec.index_file(name) == 20 + 9 * f
        names.append(name)
    return names


def test_dataset_random_reader_index_over_every_file_system(tfrec, tmp_path):
    """tfrec.Dataset, RandomAccessReader and index_file read gs:// and
    mem:// shards with the same records as local ones: sequential,
    shuffled and sharded, through the library's file system layer."""
    bases = {"local": str(tmp_path), "gs": BUCKET + "/ds", "mem": "mem://py-ds"}
    files = {k: _write_indexed_shards(tfrec, b) for k, b in bases.items()}
    assert tfrec.glob(BUCKET + "/ds/train-*-of-00003") == files["gs"]
    assert tfrec.glob("mem://py-ds/train-*-of-00003") == files["mem"]
    for k in ("gs", "mem"):
        assert [tfrec.count_records(f) for f in files[k]] == \
            [(n, True) for n, _ in map(tfrec.count_records, files["local"])]
    for shuffle, block in ((False, 0), (True, 4), (True, 0)):
        for shard in ((0, 1), (0, 2), (1, 2)):
            got = {}
            for k, fs in files.items():
                with tfrec.Dataset(fs, shuffle=shuffle, seed=7, shard=shard, shuffle_block=block,
                                   num_parallel_reads=3, block_records=5) as ds:
                    got[k] = [bytes(r) for r in ds]
            assert got["local"] and got["gs"] == got["mem"], (shuffle, block, shard)
            if shuffle and not block:
                # Shuffled without shuffle_block: a global shuffle of local
                # files, a block shuffle of remote ones (the same records,
                # other shares of them).
                assert len(got["gs"]) == len(got["local"]), shard
                if shard == (0, 1):
                    assert sorted(got["gs"]) == sorted(got["local"])
            else:
                assert got["gs"] == got["local"], (shuffle, block, shard)
    for k in ("gs", "mem"):
        with tfrec.RandomAccessReader(files["local"][2]) as a, \
                tfrec.RandomAccessReader(files[k][2]) as b:
            assert len(a) == len(b) == 38
            for i in (37, 0, 11, 12, 13):
                assert a[i] == b[i]


def _requests():
    """The storage test server's request log: (method, url, Range header)."""
    with urllib.request.urlopen(os.environ["TFREC_TEST_GCS_ADMIN"] + "/log", timeout=30) as r:
        return [(e["method"], e["url"], e.get("range")) for e in json.load(r)["requests"]]


def _gets(since):
    """Object downloads (media GETs) and metadata GETs since the log had
    since entries."""
    log = _requests()[since:]
    media = [e for e in log if e[0] == "GET" and "alt=media" in e[1]]
    meta = [e for e in log if e[0] == "GET" and "alt=media" not in e[1] and "/o/" in e[1]]
    return media, meta


def test_dataset_requests_per_epoch(tfrec, tmp_path):
    """A gs:// Dataset in order streams each file with one GET per epoch
    (its thread continues one request across the file's blocks, whatever
    block_records, threads or shard); block-shuffled, it makes one ranged
    GET per shuffle block, and shuffled without shuffle_block, blocks of
    about 2 MiB (here: one per file). No metadata request per file while
    reading, none at open when a file has no index; every record comes out
    once, in the order the same local files give. The first epoch after the
    open makes no request at all: it reads the bytes the open's scan kept
    (within prefetch_bytes)."""
    local, remote, records = [], [], []
    for f in range(4):
        p = str(tmp_path / ("part-%d" % f))
        with tfrec.TFRecordWriter(p) as w:
            for i in range(30 + 7 * f):
                k = len(records)
                records.append(b"r%d-" % k + bytes([k % 251]) * (1000 + 37 * (k % 50)))
                w.write(records[-1])
        local.append(p)
        remote.append("%s/reqs/part-%d" % (BUCKET, f))
        with open(p, "rb") as fp:
            tfrec.storage.write_bytes(remote[-1], fp.read())
    files = len(remote)
    counts = [30 + 7 * f for f in range(4)]
    for shuffle, block in ((False, 0), (True, 5), (True, 0)):
        for threads, shard in ((1, (0, 1)), (3, (0, 1)), (2, (1, 2))):
            kw = dict(shuffle=shuffle, seed=5, shard=shard, num_parallel_reads=threads,
                      block_records=4, shuffle_block=block)
            # Without shuffle_block, remote files are cut into blocks of
            # about 2 MiB: here each file is one.
            lkw = dict(kw, shuffle_block=block or (max(counts) if shuffle else 0))
            with tfrec.Dataset(local, **lkw) as ds:
                want = []
                for epoch in range(2):
                    ds.set_epoch(epoch)
                    want.append([bytes(r) for r in ds])
            n0 = len(_requests())
            ds = tfrec.Dataset(remote, **kw)
            media, meta = _gets(n0)
            # At open: each file's missing index, then one scan.
            assert len(media) == 2 * files and not meta, (media, meta)
            for epoch in range(2):
                n0 = len(_requests())
                ds.set_epoch(epoch)
                got = [bytes(r) for r in ds]
                media, meta = _gets(n0)
                assert got == want[epoch], (shuffle, threads, shard, epoch)
                if shard == (0, 1):
                    assert sorted(got) == sorted(records)
                assert not meta, meta
                if epoch == 0:
                    assert not media, (shuffle, threads, shard, media)
                elif not shuffle:
                    assert len(media) <= files, (threads, shard, media)
                    assert all(r and r.endswith("-") for _, _, r in media), media
                else:
                    # A shuffle block is one ranged GET (two where a shard
                    # boundary cuts it).
                    blocks = sum((c + (block or c) - 1) // (block or c) for c in counts)
                    assert len(media) <= blocks + 1, (threads, shard, block, len(media))
                    assert all(r and not r.endswith("-") for _, _, r in media), media
            ds.close()


def test_unregistered_scheme_is_an_error_not_a_path(tfrec, tmp_path):
    os.chdir(str(tmp_path))
    with pytest.raises(tfrec.UnsupportedError, match="no file system is registered"):
        tfrec.TFRecordWriter("nope://x")
    assert not os.path.exists("nope:")
