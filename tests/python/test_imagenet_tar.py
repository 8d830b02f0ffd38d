"""imagenet2tfrec straight from tarballs shaped like the official ImageNet
ones (an outer tar of per-synset tars; a flat validation tar), written here
with Python's tarfile: the shards must be the bytes the extracted tree gives,
for every thread count and tar format, and hostile archives must fail with
a message naming the member (or, with --on_error=skip, leave a manifest
entry), never crash."""
# needs: tfrec-image
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "fixtures"))
import make_images  # noqa: E402
import make_tars  # noqa: E402


@pytest.fixture(scope="module")
def tool(imagenet2tfrec_bin):
    return imagenet2tfrec_bin


def run(tool, *args, timeout=600):
    return subprocess.run([tool, "--quiet"] + [str(a) for a in args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout, text=True)


def shards_of(out):
    """{relative path: bytes} of every shard under out."""
    found = {}
    for d, _, files in os.walk(out):
        for f in files:
            if "-of-" in f:
                p = os.path.join(d, f)
                with open(p, "rb") as fh:
                    found[os.path.relpath(p, out)] = fh.read()
    return found


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """Special cases (PNG, CMYK, YCCK, gray, ignored files) plus photo-like samples."""
    root = str(tmp_path_factory.mktemp("tartree"))
    make_images.cmd_tree(root)
    extra = str(tmp_path_factory.mktemp("samples"))
    make_images.cmd_samples(extra, 24, 0, 3, 5)
    for s in os.listdir(os.path.join(extra, "train")):
        shutil.copytree(os.path.join(extra, "train", s), os.path.join(root, "train", s))
    return root


@pytest.fixture(scope="module")
def tree_out(tool, tree, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("tree-out"))
    r = run(tool, "--raw_data_dir", tree, "--output_dir", out, "--train_shards=4",
            "--validation_shards=2", "--seed=3", "--num_threads=2")
    assert r.returncode == 0, r.stderr
    got = shards_of(out)
    assert len(got) == 6 and sum(len(v) for v in got.values()) > 100000
    return out, got


@pytest.mark.parametrize("fmt,threads,extra", [("gnu", 1, []), ("gnu", 2, []), ("gnu", 4, []),
                                               ("pax", 3, ["--max_inflight_mb=1"]),
                                               ("ustar", 2, [])])
def test_tarballs_give_the_tree_shards(tool, tree, tree_out, tmp_path, fmt, threads, extra):
    tars = str(tmp_path / "tars")
    train, val = make_tars.official(tree, tars, fmt)
    out = str(tmp_path / "out")
    r = run(tool, "--train_tar", train, "--validation_tar", val, "--validation_labels",
            os.path.join(tars, "synset_labels.txt"), "--output_dir", out, "--train_shards=4",
            "--validation_shards=2", "--seed=3", "--num_threads=%d" % threads, *extra)
    assert r.returncode == 0, r.stderr
    got = shards_of(out)
    assert sorted(got) == sorted(tree_out[1])
    for name, data in tree_out[1].items():
        assert got[name] == data, name
    with open(os.path.join(out, "manifest.json")) as f:
        m = json.load(f)
    with open(os.path.join(tree_out[0], "manifest.json")) as f:
        t = json.load(f)
    assert m["shards"] == t["shards"] and m["labels"] == t["labels"]
    assert m["counts"]["images_fixed"] == t["counts"]["images_fixed"] == 4
    assert [x["from"] for x in m["fixed"]] == [x["from"] for x in t["fixed"]]
    assert all(x["path"].startswith(train + ":") or x["path"].startswith(val + ":")
               for x in m["fixed"])
    assert m["options"]["train_tar"] == train


def test_raw_data_dir_with_the_official_names(tool, tree, tree_out, tmp_path):
    tars = str(tmp_path / "raw")
    make_tars.official(tree, tars)
    out = str(tmp_path / "out")
    r = run(tool, "--raw_data_dir", tars, "--output_dir", out, "--train_shards=4",
            "--validation_shards=2", "--seed=3")
    assert r.returncode == 0, r.stderr
    assert shards_of(out) == tree_out[1]


def test_python_binding_reads_tarballs(build_dir, tree, tree_out, tmp_path):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))
    os.environ.setdefault("TFREC_LIBRARY_DIR", build_dir)
    import tfrec
    tars = str(tmp_path / "tars")
    train, val = make_tars.official(tree, tars)
    out = str(tmp_path / "out")
    m = tfrec.convert_images(None, out, train_tar=train, validation_tar=val,
                             validation_labels_file=os.path.join(tars, "synset_labels.txt"),
                             train_shards=4, validation_shards=2, seed=3)
    assert m["status"] == "ok"
    assert shards_of(out) == tree_out[1]


# ----------------------------------------------------------------- hostile

def jpeg(i):
    from PIL import Image
    buf = io.BytesIO()
    Image.new("RGB", (8 + i, 8), (i * 40 % 256, 90, 30)).save(buf, "JPEG")
    return buf.getvalue()


SYN = ["n01000001", "n01000002", "n01000003"]


def small_set(tmp_path, train_members=None, inner=None, val_members=None):
    """Tarballs of 3 synsets x 2 images and 2 validation images; inner
    replaces a synset tar's bytes, train_members the outer member list,
    val_members the validation tar's members. Returns the flags."""
    d = tmp_path / "in"
    d.mkdir(exist_ok=True)
    inner = inner or {}
    outer = train_members
    if outer is None:
        outer = []
        for k, s in enumerate(SYN):
            data = inner.get(s)
            if data is None:
                data = make_tars.tar_bytes([("%s_%d.JPEG" % (s, j), jpeg(k * 2 + j))
                                            for j in range(2)])
            outer.append((s + ".tar", data))
    train = d / "train.tar"
    train.write_bytes(outer if isinstance(outer, bytes) else make_tars.tar_bytes(outer))
    vm = val_members or [("ILSVRC2012_val_%08d.JPEG" % (i + 1), jpeg(i + 5)) for i in range(2)]
    val = d / "val.tar"
    val.write_bytes(vm if isinstance(vm, bytes) else make_tars.tar_bytes(vm))
    labels = d / "labels.txt"
    labels.write_text("%s\n%s\n" % (SYN[0], SYN[2]))
    return ["--train_tar", str(train), "--validation_tar", str(val), "--validation_labels",
            str(labels), "--output_dir", str(tmp_path / "out"), "--train_shards=2",
            "--validation_shards=1"]


def patch_header(data, off, size=None, name=None):
    """Rewrite a header's size or name and fix its checksum."""
    h = bytearray(data[off:off + 512])
    if size is not None:
        h[124:136] = b"%011o\0" % size
    if name is not None:
        h[0:100] = name.ljust(100, b"\0")
    h[148:156] = b" " * 8
    h[148:156] = b"%06o\0 " % sum(h)
    return data[:off] + bytes(h) + data[off + 512:]


def manifest(tmp_path):
    with open(tmp_path / "out" / "manifest.json") as f:
        return json.load(f)


def test_valid_small_set_converts(tool, tmp_path):
    r = run(tool, *small_set(tmp_path))
    assert r.returncode == 0, r.stderr
    assert manifest(tmp_path)["counts"]["images_written"] == 8


@pytest.mark.parametrize("bad,why", [("../../etc/evil.JPEG", "path traversal"),
                                     ("/abs/evil.JPEG", "absolute member name"),
                                     ("sub/evil.JPEG", "with a directory")])
def test_unsafe_member_names(tool, tmp_path, bad, why):
    inner = make_tars.tar_bytes([("n01000002_0.JPEG", jpeg(1)), (bad, jpeg(2))])
    flags = small_set(tmp_path, inner={SYN[1]: inner})
    r = run(tool, *flags)
    assert r.returncode == 1
    assert "n01000002.tar" in r.stderr and bad in r.stderr and why in r.stderr, r.stderr
    assert not os.path.exists(tmp_path / "out" / "train")
    # skip: the synset tar is left out and listed, the rest converts
    r = run(tool, *flags, "--on_error=skip")
    assert r.returncode == 0, r.stderr
    m = manifest(tmp_path)
    assert m["counts"]["images_written"] == 6 and m["counts"]["images_rejected"] == 1
    assert m["rejected"][0]["path"].endswith("train.tar:n01000002.tar")
    assert why in m["rejected"][0]["reason"]


def test_inner_member_that_is_not_a_tar(tool, tmp_path):
    flags = small_set(tmp_path, inner={SYN[2]: jpeg(3) * 3})
    r = run(tool, *flags)
    assert r.returncode == 1
    assert "n01000003.tar" in r.stderr and "not a tar archive" in r.stderr, r.stderr
    r = run(tool, *flags, "--on_error=skip")
    assert r.returncode == 0, r.stderr
    m = manifest(tmp_path)
    assert [x["path"].rsplit(":", 1)[1] for x in m["rejected"]] == ["n01000003.tar"]
    assert "not a tar archive" in m["rejected"][0]["reason"]
    # a synset left out entirely: its validation image keeps its label (from the file)
    assert m["counts"]["images_written"] == 6


def test_non_tar_input(tool, tmp_path):
    flags = small_set(tmp_path, train_members=b"<html>not found</html>\n" * 100)
    r = run(tool, *flags)
    assert r.returncode == 1 and "train.tar" in r.stderr
    assert "not a tar archive" in r.stderr, r.stderr
    flags = small_set(tmp_path, train_members=b"")
    r = run(tool, *flags)
    assert r.returncode == 1 and "not a tar archive: empty" in r.stderr, r.stderr


def test_absurd_size(tool, tmp_path):
    good = make_tars.tar_bytes([(s + ".tar", make_tars.tar_bytes([(s + "_0.JPEG", jpeg(0))]))
                                for s in SYN])
    bad = patch_header(good, 0, size=0o77777777777)
    r = run(tool, *small_set(tmp_path, train_members=bad))
    assert r.returncode == 1
    assert "n01000001.tar" in r.stderr and "declares 8589934591 bytes" in r.stderr, r.stderr
    # base-256 (GNU) sizes are read too, and checked the same way
    h = bytearray(good[:512])
    h[124:136] = b"\x80" + b"\0" * 3 + (1 << 62).to_bytes(8, "big")
    h[148:156] = b" " * 8
    h[148:156] = b"%06o\0 " % sum(h)
    r = run(tool, *small_set(tmp_path, train_members=bytes(h) + good[512:]))
    assert r.returncode == 1 and "declares 4611686018427387904 bytes" in r.stderr, r.stderr


@pytest.mark.parametrize("cut", ["half", "marker", "header"])
def test_truncated_archive(tool, tmp_path, cut):
    flags = small_set(tmp_path)
    train = flags[1]
    with open(train, "rb") as f:
        data = f.read()
    with tarfile.open(train) as t:
        last = t.getmembers()[-1]
    marker = last.offset_data + (last.size + 511) // 512 * 512
    # (tarfile pads archives with zeros to 10 KiB, so cutting into that
    # padding after the end-of-archive marker is no damage)
    n = {"half": len(data) // 2, "marker": marker, "header": last.offset + 100}[cut]
    with open(train, "wb") as f:
        f.write(data[:n])
    r = run(tool, *flags)
    assert r.returncode == 1
    assert "truncated archive" in r.stderr and "train.tar" in r.stderr, r.stderr


def test_truncated_inner_tar(tool, tmp_path):
    inner = make_tars.tar_bytes([("n01000001_0.JPEG", jpeg(0)), ("n01000001_1.JPEG", jpeg(1))])
    r = run(tool, *small_set(tmp_path, inner={SYN[0]: inner[:700]}))
    assert r.returncode == 1
    assert "n01000001.tar" in r.stderr and "truncated archive" in r.stderr, r.stderr


def test_duplicate_names(tool, tmp_path):
    inner = make_tars.tar_bytes([("n01000001_0.JPEG", jpeg(0)), ("n01000001_0.JPEG", jpeg(1))])
    r = run(tool, *small_set(tmp_path, inner={SYN[0]: inner}))
    assert r.returncode == 1
    assert "'n01000001_0.JPEG' appears twice" in r.stderr and "n01000001.tar" in r.stderr
    one = make_tars.tar_bytes([("n01000001_0.JPEG", jpeg(0))])
    r = run(tool, *small_set(tmp_path, train_members=[("n01000001.tar", one),
                                                      ("./n01000001.tar", one)]))
    assert r.returncode == 1 and "'n01000001.tar' appears twice" in r.stderr, r.stderr
    vm = [("ILSVRC2012_val_00000001.JPEG", jpeg(0))] * 2
    r = run(tool, *small_set(tmp_path, val_members=vm))
    assert r.returncode == 1 and "appears twice" in r.stderr and "val.tar" in r.stderr


def test_bad_header_checksum(tool, tmp_path):
    vm = [("ILSVRC2012_val_%08d.JPEG" % (i + 1), jpeg(i)) for i in range(2)]
    data = bytearray(make_tars.tar_bytes(vm))
    second = 512 + (len(vm[0][1]) + 511) // 512 * 512
    data[second + 3] ^= 0x20  # a name byte; the checksum now disagrees
    r = run(tool, *small_set(tmp_path, val_members=bytes(data)))
    assert r.returncode == 1
    assert "bad header checksum at offset %d" % second in r.stderr, r.stderr
    assert "after member 'ILSVRC2012_val_00000001.JPEG'" in r.stderr and "val.tar" in r.stderr


def test_pipe_is_refused(tool, tmp_path):
    flags = small_set(tmp_path)
    fifo = str(tmp_path / "fifo.tar")
    os.mkfifo(fifo)
    flags[1] = fifo
    # the tool must refuse before opening the FIFO for reading would block
    r = run(tool, *flags, timeout=60)
    assert r.returncode == 3
    assert fifo in r.stderr and "not a regular file" in r.stderr, r.stderr


def test_labels_must_match_validation_tar(tool, tmp_path):
    flags = small_set(tmp_path)
    with open(flags[5], "a") as f:
        f.write("n01000001\n")
    r = run(tool, *flags)
    assert r.returncode == 1 and "3 labels" in r.stderr and "2 images" in r.stderr, r.stderr


def test_long_pax_names_and_directories(tool, tmp_path):
    long = "n01000001_" + "x" * 150 + ".JPEG"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        d = tarfile.TarInfo("./")
        d.type = tarfile.DIRTYPE
        t.addfile(d)
        ti = tarfile.TarInfo("./" + long)
        data = jpeg(4)
        ti.size = len(data)
        t.addfile(ti, io.BytesIO(data))
    r = run(tool, *small_set(tmp_path, inner={SYN[0]: buf.getvalue()}))
    assert r.returncode == 0, r.stderr
    assert manifest(tmp_path)["counts"]["images_written"] == 7


def test_one_tarball_alone_converts_its_split(tool, tree, tree_out, tmp_path):
    """Either tarball alone converts its split (in a --raw_data_dir or by
    its flag), and the tool names the split it skipped."""
    tars = str(tmp_path / "raw")
    train, val = make_tars.official(tree, tars)
    os.rename(val, str(tmp_path / "val.tar"))
    out = str(tmp_path / "out")
    r = subprocess.run([tool, "--raw_data_dir", tars, "--output_dir", out, "--train_shards=4",
                        "--validation_shards=2", "--seed=3"], stderr=subprocess.PIPE, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    assert ("the validation split is skipped: no --validation_tar and no "
            "ILSVRC2012_img_val.tar in %s" % tars) in r.stderr
    want = {k: v for k, v in tree_out[1].items() if k.startswith("train")}
    assert shards_of(out) == want
    out = str(tmp_path / "out2")
    r = subprocess.run([tool, "--train_tar", train, "--output_dir", out, "--train_shards=4",
                        "--seed=3"], stderr=subprocess.PIPE, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "the validation split is skipped: no --validation_tar given" in r.stderr
    assert shards_of(out) == want
    out = str(tmp_path / "out3")
    r = subprocess.run([tool, "--validation_tar", str(tmp_path / "val.tar"), "--validation_labels",
                        os.path.join(tars, "synset_labels.txt"), "--output_dir", out,
                        "--validation_shards=2"], stderr=subprocess.PIPE, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "the train split is skipped: no --train_tar given" in r.stderr
    assert sorted(shards_of(out)) == ["validation/validation-00000-of-00002",
                                      "validation/validation-00001-of-00002"]


def test_validation_tar_without_labels_names_its_flag(tool, tmp_path):
    r = run(tool, "--validation_tar", tmp_path / "v.tar", "--output_dir", tmp_path / "o")
    assert r.returncode == 2
    assert "--validation_tar needs --validation_labels=FILE" in r.stderr, r.stderr
