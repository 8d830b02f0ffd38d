"""imagenet2tfrec checked against independent tools: records are parsed with
python3-protobuf (classes generated from our proto/), framing is read by
tfrecord_ref (python3-crc32c), images are decoded with PIL. Expected values
(labels, shuffle order, shard sizes) are recomputed here from the documented
rules, not taken from the tool."""
# needs: tfrec-image
import collections
import io
import json
import os
import shutil
import subprocess
import sys

import pytest
from PIL import Image

import tfrecord_ref

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "fixtures"))
import make_images  # noqa: E402

FEATURES = {
    "image/encoded": "bytes_list", "image/height": "int64_list", "image/width": "int64_list",
    "image/colorspace": "bytes_list", "image/channels": "int64_list",
    "image/class/label": "int64_list", "image/class/synset": "bytes_list",
    "image/format": "bytes_list", "image/filename": "bytes_list",
}


# ----------------------------------------------------------------- helpers

@pytest.fixture(scope="module")
def tool(imagenet2tfrec_bin):
    return imagenet2tfrec_bin


def run(tool, *args):
    return subprocess.run([tool, "--quiet"] + [str(a) for a in args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=600, text=True)


def splitmix64_shuffle(items, seed):
    """The documented shuffle: SplitMix64 + unbiased Fisher-Yates."""
    mask = (1 << 64) - 1
    state = seed
    v = list(items)
    for i in range(len(v), 1, -1):
        limit = (1 << 64) - ((1 << 64) % i)
        while True:
            state = (state + 0x9E3779B97F4A7C15) & mask
            z = state
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
            r = z ^ (z >> 31)
            if r < limit:
                break
        j = r % i
        v[i - 1], v[j] = v[j], v[i - 1]
    return v


def shard_sizes(n, shards):
    return [(k + 1) * n // shards - k * n // shards for k in range(shards)]


def scan_tree(root, exts=(".jpeg", ".jpg")):
    """What the converter should find: sorted train (synset, name, path), and
    validation (name, synset, path) in sorted order with synset_labels.txt."""
    train = []
    for syn in sorted(os.listdir(os.path.join(root, "train"))):
        d = os.path.join(root, "train", syn)
        for name in sorted(os.listdir(d)):
            if not name.startswith(".") and os.path.splitext(name)[1].lower() in exts:
                train.append((syn, name, os.path.join(d, name)))
    vdir = os.path.join(root, "validation")
    vnames = sorted(n for n in os.listdir(vdir) if os.path.splitext(n)[1].lower() in exts)
    with open(os.path.join(root, "synset_labels.txt")) as f:
        vsyn = [l.strip() for l in f if l.strip()]
    assert len(vsyn) == len(vnames)
    val = [(s, n, os.path.join(vdir, n)) for n, s in zip(vnames, vsyn)]
    return train, val


def split_of(name):
    """"train" for "train-00000-of-00003": the shard's directory in the output."""
    return name.rsplit("-", 3)[0]


def shard_path(out, name):
    """The reference's layout: OUT/<split>/<split>-NNNNN-of-NNNNN."""
    return os.path.join(out, split_of(name), name)


def out_files(out):
    """Every file under out (hidden ones too), as sorted relative paths."""
    found = []
    for d, _, files in os.walk(out):
        found += [os.path.relpath(os.path.join(d, f), out) for f in files]
    return sorted(found)


def read_shards(out, pb2, compression="NONE"):
    """{file name: [parsed Example]} for every shard file in out/train and out/validation."""
    shards = {}
    for name in sorted(os.path.basename(f) for f in out_files(out)):
        if name.startswith(("train-", "validation-")):
            recs = tfrecord_ref.read_records(shard_path(out, name), compression)
            exs = []
            for r in recs:
                ex = pb2.Example()
                ex.ParseFromString(r)
                assert ex.SerializeToString() != b"" or not r
                exs.append(ex)
            shards[name] = exs
    return shards


def feat(ex, key):
    f = ex.features.feature[key]
    kind = f.WhichOneof("kind")
    assert kind == FEATURES[key], (key, kind)
    vals = list(getattr(f, kind).value)
    assert len(vals) == 1, (key, vals)
    return vals[0]


def records_in_order(shards, split, count):
    out = []
    for k in range(count):
        out.extend(shards["%s-%05d-of-%05d" % (split, k, count)])
    return out


def load_manifest(out):
    with open(os.path.join(out, "manifest.json")) as f:
        return json.load(f)


# ----------------------------------------------------------------- the main tree

@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("tree"))
    kinds = make_images.cmd_tree(root)
    return root, kinds


@pytest.fixture(scope="module")
def converted(tool, tree, tmp_path_factory, pb2):
    root, _ = tree
    outs = {}
    # 1 and 2 worker threads, and 2 threads with a 1 MiB in-flight budget
    # (smaller than the large image) so workers wait on the budget
    for key, extra in ((1, ["--num_threads", 1]), (2, ["--num_threads", 2]),
                       ("tight", ["--num_threads", 2, "--max_inflight_mb", 1])):
        out = str(tmp_path_factory.mktemp("out%s" % key))
        p = run(tool, "--raw_data_dir", root, "--local_scratch_dir", out, "--train_shards", 3,
                "--validation_shards", 2, "--seed", 42, *extra)
        assert p.returncode == 0, p.stderr
        outs[key] = out
    return outs, read_shards(outs[1], pb2)


def test_shard_names_and_counts(tree, converted):
    root, _ = tree
    outs, shards = converted
    train, val = scan_tree(root)
    expect = {}
    for split, n, s in (("train", len(train), 3), ("validation", len(val), 2)):
        for k, size in enumerate(shard_sizes(n, s)):
            expect["%s-%05d-of-%05d" % (split, k, s)] = size
    assert {k: len(v) for k, v in shards.items()} == expect
    man = load_manifest(outs[1])
    assert man["status"] == "ok"
    assert [(s["file"], s["records"]) for s in man["shards"]] == \
        sorted((split_of(k) + "/" + k, n) for k, n in expect.items())
    for s in man["shards"]:
        assert s["bytes"] == os.path.getsize(os.path.join(outs[1], s["file"]))
    # the reference's layout; nothing else left behind (no staging directory,
    # no temporary files)
    assert out_files(outs[1]) == sorted([split_of(k) + "/" + k for k in expect] + ["manifest.json"])


def test_every_record_has_the_reference_features(converted):
    _, shards = converted
    for exs in shards.values():
        for ex in exs:
            assert set(ex.features.feature.keys()) == set(FEATURES)
            assert feat(ex, "image/colorspace") == b"RGB"
            assert feat(ex, "image/channels") == 3
            assert feat(ex, "image/format") == b"JPEG"
            img = Image.open(io.BytesIO(feat(ex, "image/encoded")))
            assert img.format == "JPEG"
            assert img.size == (feat(ex, "image/width"), feat(ex, "image/height"))
            img.load()  # full decode
            assert img.mode in ("RGB", "L"), img.mode
            assert img.convert("RGB").size == img.size


def test_each_input_exactly_once_with_right_label(tree, converted):
    root, _ = tree
    _, shards = converted
    train, val = scan_tree(root)
    synsets = sorted({s for s, _, _ in train} | {s for s, _, _ in val})
    label = {s: i + 1 for i, s in enumerate(synsets)}
    expect = collections.Counter((n, s) for s, n, _ in train + val)
    got = collections.Counter()
    for exs in shards.values():
        for ex in exs:
            syn = feat(ex, "image/class/synset").decode()
            got[(feat(ex, "image/filename").decode(), syn)] += 1
            assert feat(ex, "image/class/label") == label[syn]
    assert got == expect
    assert "notes.txt" not in {n for n, _ in got}
    assert ".hidden.JPEG" not in {n for n, _ in got}
    man = load_manifest(converted[0][1])
    assert [(l["label"], l["synset"]) for l in man["labels"]] == [(label[s], s) for s in synsets]


def test_train_is_the_documented_seeded_shuffle_validation_sorted(tree, converted):
    root, _ = tree
    _, shards = converted
    train, val = scan_tree(root)
    names = [n for _, n, _ in train]
    expect = splitmix64_shuffle(names, 42)
    assert expect != names  # really shuffled
    got = [feat(e, "image/filename").decode() for e in records_in_order(shards, "train", 3)]
    assert got == expect
    got_val = [feat(e, "image/filename").decode() for e in records_in_order(shards, "validation", 2)]
    assert got_val == [n for _, n, _ in val]


@pytest.mark.parametrize("other", [2, "tight"])
def test_identical_bytes_whatever_the_threads_and_budget(converted, other):
    outs, _ = converted
    a, b = outs[1], outs[other]
    files = [f for f in out_files(a) if f != "manifest.json"]
    assert files == [f for f in out_files(b) if f != "manifest.json"]
    for f in files:
        with open(os.path.join(a, f), "rb") as x, open(os.path.join(b, f), "rb") as y:
            assert x.read() == y.read(), f
    ma, mb = load_manifest(a), load_manifest(b)
    for m in (ma, mb):
        m["counts"].pop("seconds")
        m["options"].pop("output_dir")
    assert ma == mb


def _records_by_name(shards):
    return {feat(e, "image/filename").decode(): e for exs in shards.values() for e in exs}


def _mean_abs_diff(a, b):
    assert a.size == b.size
    pa, pb = a.tobytes(), b.tobytes()
    return sum(abs(x - y) for x, y in zip(pa, pb)) / len(pa)


def test_kept_images_are_stored_byte_for_byte(tree, converted):
    root, kinds = tree
    recs = _records_by_name(converted[1])
    for rel, kind in kinds.items():
        if kind in ("rgb", "gray", "progressive", "1x1", "large"):
            with open(os.path.join(root, rel), "rb") as f:
                assert feat(recs[os.path.basename(rel)], "image/encoded") == f.read(), rel


def test_png_cmyk_ycck_become_rgb_jpeg(tree, converted):
    root, kinds = tree
    outs, shards = converted
    recs = _records_by_name(shards)
    fixed = {}
    for rel, kind in kinds.items():
        if kind not in ("png", "cmyk", "ycck"):
            continue
        src = Image.open(os.path.join(root, rel))
        src.load()
        assert src.format == ("PNG" if kind == "png" else "JPEG")
        out = Image.open(io.BytesIO(feat(recs[os.path.basename(rel)], "image/encoded")))
        assert out.format == "JPEG" and out.mode == "RGB", (rel, out.mode)
        assert out.size == src.size
        # PIL's own CMYK->RGB (alpha dropped for PNG) and our conversion agree
        # up to JPEG noise; luma only, as 4:2:0 chroma subsampling blurs the
        # colours of these small noisy pictures
        assert _mean_abs_diff(out.convert("RGB").convert("L"), src.convert("RGB").convert("L")) < 3.0, rel
        fixed[os.path.join(root, rel)] = {"png": "PNG", "cmyk": "CMYK", "ycck": "YCCK"}[kind]
    assert len(fixed) == 4
    man = load_manifest(outs[1])
    assert {f["path"]: f["from"] for f in man["fixed"]} == fixed
    assert man["counts"]["images_fixed"] == 4
    assert man["rejected"] == []


def test_ycck_colours(tree, converted):
    """The YCCK fixture is red on the left, blue on the right."""
    recs = _records_by_name(converted[1])
    img = Image.open(io.BytesIO(feat(recs["n02105855_ycck.JPEG"], "image/encoded"))).convert("RGB")
    w, h = img.size
    r, g, b = img.getpixel((w // 4, h // 2))
    assert r > 200 and g < 50 and b < 50, (r, g, b)
    r, g, b = img.getpixel((3 * w // 4, h // 2))
    assert r < 50 and g < 50 and b > 200, (r, g, b)


def test_grayscale_to_rgb_and_gzip(tool, tree, tmp_path, pb2, converted):
    root, _ = tree
    out = str(tmp_path / "g")
    p = run(tool, "--raw_data_dir", root, "--output_dir", out, "--train_shards", 3,
            "--validation_shards", 2, "--seed", 42, "--grayscale_to_rgb", "--compression", "GZIP")
    assert p.returncode == 0, p.stderr
    shards = read_shards(out, pb2, "GZIP")
    recs = _records_by_name(shards)
    img = Image.open(io.BytesIO(feat(recs["n02105855_gray.JPEG"], "image/encoded")))
    assert img.mode == "RGB"
    man = load_manifest(out)
    assert os.path.join(root, "train/n02105855/n02105855_gray.JPEG") in {
        f["path"] for f in man["fixed"] if f["from"] == "grayscale"}
    # same records in the same order as the uncompressed run, gray aside
    base = _records_by_name(converted[1])
    assert list(recs) == list(base)
    for name, ex in recs.items():
        if name != "n02105855_gray.JPEG":
            assert ex == base[name]


def test_different_seed_different_order_same_set(tool, tree, tmp_path, pb2, converted):
    root, _ = tree
    out = str(tmp_path / "s")
    p = run(tool, "--raw_data_dir", root, "--output_dir", out, "--train_shards", 3,
            "--validation_shards", 2, "--seed", 7)
    assert p.returncode == 0, p.stderr
    a = [feat(e, "image/filename") for e in records_in_order(read_shards(out, pb2), "train", 3)]
    b = [feat(e, "image/filename") for e in records_in_order(converted[1], "train", 3)]
    assert a != b and sorted(a) == sorted(b)


def test_labels_file_fixes_the_mapping(tool, tree, tmp_path, pb2):
    root, _ = tree
    labels = tmp_path / "labels.txt"
    order = ["n02105855", "n01484850 some fish", "n01443537", "n01440764", "n09999999"]
    labels.write_text("\n".join(order) + "\n")
    out = str(tmp_path / "l")
    p = run(tool, "--raw_data_dir", root, "--output_dir", out, "--train_shards", 1,
            "--validation_shards", 1, "--labels_file", labels)
    assert p.returncode == 0, p.stderr
    want = {l.split()[0]: i + 1 for i, l in enumerate(order)}
    for exs in read_shards(out, pb2).values():
        for ex in exs:
            assert feat(ex, "image/class/label") == want[feat(ex, "image/class/synset").decode()]
    labels.write_text("n02105855\nn01484850\n")
    p = run(tool, "--raw_data_dir", root, "--output_dir", str(tmp_path / "l2"), "--labels_file", labels)
    assert p.returncode != 0
    assert "not in labels file" in p.stderr
    assert not os.path.exists(tmp_path / "l2")


# ----------------------------------------------------------------- bad input

@pytest.fixture(scope="module")
def bad_tree(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("bad"))
    return root, make_images.cmd_bad(root)


BAD = {"truncated": "truncated", "empty": "empty", "text": "not a JPEG or PNG",
       "cutscan": "Corrupt JPEG data"}


def test_bad_image_stops_the_run_and_nothing_is_renamed(tool, bad_tree, tmp_path):
    root, kinds = bad_tree
    out = tmp_path / "stop"
    p = run(tool, "--raw_data_dir", root, "--output_dir", out, "--train_shards", 2,
            "--validation_shards", 1)
    assert p.returncode == 1
    bad_paths = [os.path.join(root, r) for r, k in kinds.items() if k in BAD]
    assert any(b in p.stderr for b in bad_paths), p.stderr
    assert out_files(out) == ["manifest.json"]  # no shard, no staging leftovers
    man = load_manifest(out)
    assert man["status"] == "failed" and man["shards"] == []
    assert len(man["rejected"]) == 1 and man["rejected"][0]["path"] in bad_paths
    assert man["rejected"][0]["path"] in man["error"]


@pytest.mark.parametrize("verify,caught", [("header", {"truncated", "empty", "text"}),
                                           ("fast", set(BAD)), ("full", set(BAD))])
def test_skip_lists_every_bad_image(tool, bad_tree, tmp_path, pb2, verify, caught):
    root, kinds = bad_tree
    out = str(tmp_path / verify)
    p = run(tool, "--raw_data_dir", root, "--output_dir", out, "--train_shards", 2,
            "--validation_shards", 1, "--on_error", "skip", "--verify", verify)
    assert p.returncode == 0, p.stderr
    man = load_manifest(out)
    rejected = {r["path"]: r["reason"] for r in man["rejected"]}
    want = {os.path.join(root, r): BAD[k] for r, k in kinds.items() if k in caught}
    assert set(rejected) == set(want)
    for path, reason in rejected.items():
        assert want[path] in reason, (path, reason)
    assert man["counts"]["images_rejected"] == len(want)
    names = collections.Counter(feat(e, "image/filename").decode()
                                for exs in read_shards(out, pb2).values() for e in exs)
    expect = collections.Counter(os.path.basename(r) for r, k in kinds.items()
                                 if k not in caught)
    assert names == expect


def test_max_image_pixels(tool, tree, tmp_path):
    """Images above --max_image_pixels (width x height) are bad images; the
    default is PIL's decompression-bomb threshold."""
    root, kinds = tree
    large = [os.path.join(root, r) for r, k in kinds.items() if k == "large"]
    assert len(large) == 1  # 3000 x 2000
    out = str(tmp_path / "limited")
    p = run(tool, "--raw_data_dir", root, "--output_dir", out, "--train_shards", 2,
            "--validation_shards", 1, "--on_error", "skip", "--max_image_pixels", 5999999)
    assert p.returncode == 0, p.stderr
    man = load_manifest(out)
    assert man["options"]["max_image_pixels"] == 5999999
    assert [r["path"] for r in man["rejected"]] == large
    assert "3000x2000 (6000000 pixels) is above the pixel limit of 5999999" in \
        man["rejected"][0]["reason"]
    out = str(tmp_path / "exact")
    p = run(tool, "--raw_data_dir", root, "--output_dir", out, "--train_shards", 2,
            "--validation_shards", 1, "--max_image_pixels", 6000000)
    assert p.returncode == 0, p.stderr
    assert load_manifest(out)["rejected"] == []
    out = str(tmp_path / "default")
    p = run(tool, "--raw_data_dir", root, "--output_dir", out, "--train_shards", 2,
            "--validation_shards", 1)
    assert p.returncode == 0, p.stderr
    assert load_manifest(out)["options"]["max_image_pixels"] == 89478485


def _copy_tree(src, dst):
    shutil.copytree(src, dst)
    return str(dst)


@pytest.mark.parametrize("breakage,message", [
    ("no_validation_dir", "validation directory"),
    ("no_train_dir", "training directory"),
    ("no_labels_file", "synset_labels.txt"),
    ("labels_short", "has 7 labels but"),
    ("empty_train", "no images in"),
    ("no_raw_dir", "does not exist"),
])
def test_missing_or_inconsistent_input_fails_before_work(tool, tree, tmp_path, breakage, message):
    root = _copy_tree(tree[0], tmp_path / "in")
    if breakage == "no_validation_dir":
        shutil.rmtree(os.path.join(root, "validation"))
    elif breakage == "no_train_dir":
        shutil.rmtree(os.path.join(root, "train"))
    elif breakage == "no_labels_file":
        os.unlink(os.path.join(root, "synset_labels.txt"))
    elif breakage == "labels_short":
        path = os.path.join(root, "synset_labels.txt")
        lines = open(path).read().splitlines()
        open(path, "w").write("\n".join(lines[:-1]) + "\n")
    elif breakage == "empty_train":
        for d in os.listdir(os.path.join(root, "train")):
            shutil.rmtree(os.path.join(root, "train", d))
    elif breakage == "no_raw_dir":
        root = str(tmp_path / "nowhere")
    out = tmp_path / "out"
    p = run(tool, "--raw_data_dir", root, "--output_dir", out)
    assert p.returncode != 0
    assert message in p.stderr, p.stderr
    assert "Traceback" not in p.stderr
    assert not os.path.exists(out)  # checked before any work


def test_missing_flags_are_clear_errors(tool, tmp_path):
    p = run(tool, "--raw_data_dir", tmp_path)
    assert p.returncode != 0 and "--local_scratch_dir" in p.stderr
    p = run(tool, "--output_dir", tmp_path / "o")
    assert p.returncode != 0 and "--raw_data_dir" in p.stderr
    p = run(tool, "--raw_data_dir", tmp_path, "--output_dir", tmp_path / "o", "--verify", "maybe")
    assert p.returncode == 2 and "--verify" in p.stderr
    p = run(tool, "--bogus_flag=1")
    assert p.returncode == 2 and "bogus_flag" in p.stderr


# ----------------------------------------------------------------- reference flags

def storage_built(build_dir):
    with open(os.path.join(build_dir, "parts")) as f:
        return "tfrec-storage" in f.read().split()


@pytest.mark.parametrize("args,flag,says,with_storage", [
    # upload is on by default, as in imagenet_to_gcs.py: a gs:// path asks for
    # it (with the storage part it uploads: tests/integration/storage_tools.sh;
    # here, offline, the same path with a second output is refused)
    (["--gcs_output_path=gs://bucket/imagenet"], "--gcs_output_path=gs://bucket/imagenet",
     "needs the storage module, which is not built yet",
     (["--gcs_output_path=gs://bucket/imagenet", "--output_dir=x"], "both name the output")),
    (["--gcs_output_path", "/local/dir"], "--gcs_output_path", "must start with gs://", None),
    (["--gcs_upload", "--project=p"], "--gcs_upload", "--nogcs_upload", None),
    (["--gcs_upload=true"], "--gcs_upload", "uploading is not built yet",
     (["--gcs_upload=true"], "needs --gcs_output_path=gs://")),
])
def test_upload_flags_are_known_but_not_built(tool, build_dir, tmp_path, args, flag, says,
                                              with_storage):
    if with_storage and storage_built(build_dir):
        args, says = with_storage
    p = run(tool, "--raw_data_dir", tmp_path, "--local_scratch_dir", tmp_path / "o", *args)
    assert p.returncode == 2, p.stderr
    assert flag in p.stderr and says in p.stderr, p.stderr
    assert "unknown flag" not in p.stderr
    assert not os.path.exists(tmp_path / "o")


def test_download_needs_both_credentials(tool, tmp_path):
    """Downloading is tested against a local server in test_imagenet_download.py;
    here only the flag check, which must not touch the network."""
    p = run(tool, "--local_scratch_dir", tmp_path / "o", "--imagenet_username=me")
    assert p.returncode == 2
    assert "needs both --imagenet_username and --imagenet_access_key" in p.stderr, p.stderr
    assert not os.path.exists(tmp_path / "o")


def test_reference_command_lines_convert_locally(tool, tree, tmp_path):
    """What the reference accepts with --nogcs_upload converts here; upload
    and download flags it would ignore are ignored, as it does."""
    root, _ = tree
    out = tmp_path / "ref"
    p = run(tool, "--raw_data_dir=" + root, "--local_scratch_dir=" + str(out), "--nogcs_upload",
            "--gcs_output_path=gs://ignored/without/upload", "--project=p",
            "--imagenet_username=u", "--imagenet_access_key=k", "--train_shards=2",
            "--validation_shards=1")
    assert p.returncode == 0, p.stderr
    assert os.path.isfile(shard_path(out, "train-00001-of-00002"))


def test_flagfile_and_flag_forms(tool, tree, tmp_path):
    root, _ = tree
    flags = tmp_path / "convert.flags"
    flags.write_text("# an imagenet_to_gcs.py-style flagfile\n"
                     "--raw_data_dir %s\n--nogcs_upload\n\n--train_shards=3\n"
                     "--validation_shards 1\n--noquiet\n" % root)
    out = tmp_path / "ff"
    # a later --quiet overrides the flagfile's --noquiet; single-dash works too
    p = subprocess.run([tool, "--flagfile=%s" % flags, "-local_scratch_dir", str(out), "--quiet"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert sorted(os.listdir(os.path.join(out, "train"))) == \
        ["train-%05d-of-00003" % i for i in range(3)]


@pytest.mark.parametrize("args,status,says", [
    (["--num_threads=0"], 2, "--num_threads: 0 is out of range 1..256"),
    (["--train_shard=4"], 2, "unknown flag --train_shard (did you mean --train_shards?)"),
    (["--max_inflight_mb=99999999999999999999"], 2, "is too large"),
    (["--max_image_pixels=0"], 2, "--max_image_pixels"),
    (["--no_shuffle=perhaps"], 2, "'perhaps' is not a boolean"),
    (["--layout=tree"], 2, "'tree' is not one of imagenet, folders, csv"),
    (["extra"], 2, "unexpected argument 'extra'"),
])
def test_flag_errors_exit_2(tool, tmp_path, args, status, says):
    p = run(tool, "--raw_data_dir", tmp_path, "--output_dir", tmp_path / "o", *args)
    assert p.returncode == status and says in p.stderr, p.stderr


def test_help_and_exit_codes(tool, tree, tmp_path):
    p = subprocess.run([tool, "--help"], capture_output=True, text=True)
    assert p.returncode == 0
    for text in ("--[no]gcs_upload", "--imagenet_access_key", "--train_shards=N",
                 "1 bad data", "2 usage error", "3 I/O or network error", "130 interrupted"):
        assert text in p.stdout, text
    assert "--flagfile=FILE" in subprocess.run([tool, "--helpfull"], capture_output=True,
                                               text=True).stdout
    # 3: the input directory does not exist
    p = run(tool, "--raw_data_dir", tmp_path / "nowhere", "--output_dir", tmp_path / "o")
    assert p.returncode == 3 and "does not exist" in p.stderr, p.stderr


# ----------------------------------------------------------------- other layouts

def test_folders_layout(tool, tree, tmp_path, pb2):
    root = os.path.join(tree[0], "train")
    out = str(tmp_path / "f")
    p = run(tool, "--layout", "folders", "--raw_data_dir", root, "--output_dir", out,
            "--train_shards", 2, "--no_shuffle")
    assert p.returncode == 0, p.stderr
    train, _ = scan_tree(tree[0])
    classes = sorted({s for s, _, _ in train})
    got = [(feat(e, "image/filename").decode(), feat(e, "image/class/label"))
           for e in records_in_order(read_shards(out, pb2), "train", 2)]
    assert got == [(n, classes.index(s) + 1) for s, n, _ in train]


def test_csv_layout(tool, tree, tmp_path, pb2):
    root, _ = tree
    train, val = scan_tree(root)
    csv = tmp_path / "list.csv"
    rows = ["image_uri,label,split"]
    rows += ["%s,%s,TRAIN" % (os.path.relpath(p, root), s) for s, _, p in train[:6]]
    rows += ["%s,%s,VALIDATION" % (p, s) for s, _, p in val[:3]]
    rows += ["%s,%s,TEST" % (p, s) for s, _, p in val[3:5]]
    csv.write_text("\n".join(rows) + "\n")
    out = str(tmp_path / "c")
    p = run(tool, "--csv", csv, "--raw_data_dir", root, "--output_dir", out, "--train_shards", 1,
            "--validation_shards", 1)
    assert p.returncode == 0, p.stderr
    assert out_files(out) == ["manifest.json", "test/test-00000-of-00001",
                              "train/train-00000-of-00001",
                              "validation/validation-00000-of-00001"]
    test_recs = tfrecord_ref.read_records(shard_path(out, "test-00000-of-00001"))
    assert len(test_recs) == 2
    val_recs = tfrecord_ref.read_records(shard_path(out, "validation-00000-of-00001"))
    ex = pb2.Example()
    ex.ParseFromString(val_recs[0])
    assert feat(ex, "image/filename").decode() == val[0][1]
    bad = tmp_path / "bad.csv"
    bad.write_text("missing/file.JPEG,n01440764\n")
    p = run(tool, "--csv", bad, "--output_dir", str(tmp_path / "c2"))
    assert p.returncode != 0 and "missing/file.JPEG" in p.stderr


def test_summary_names_rejected_images(tool, bad_tree, tmp_path):
    root, kinds = bad_tree
    # no --quiet: the summary is what a user sees
    p = subprocess.run([tool, "--raw_data_dir", root, "--output_dir", str(tmp_path / "o"),
                        "--train_shards", "1", "--validation_shards", "1", "--on_error", "skip"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert "3 rejected" in p.stderr  # header level: truncated, empty, text
    for rel, k in kinds.items():
        if k in ("truncated", "empty", "text"):
            assert "rejected %s: " % os.path.join(root, rel) in p.stderr


# ----------------------------------------------------------------- file names that are not UTF-8

def _manifest_strict(out):
    """manifest.json read as strict UTF-8 text (a raw non-UTF-8 byte fails)."""
    with open(os.path.join(out, "manifest.json"), "rb") as f:
        return json.loads(f.read().decode("utf-8", "strict"))


def _fsdecode(b):
    return b.decode("utf-8", "surrogateescape")


def test_names_that_are_not_utf8_keep_the_manifest_valid_and_lossless(tool, tmp_path, pb2):
    root = os.path.join(os.fsencode(str(tmp_path)), b"raw\xe9")  # Latin-1 directory name
    cls = os.path.join(root, b"cl\xff")
    os.makedirs(cls)
    good = b"\xff\xfe.JPEG"
    bad = b"bad\xc0\xaf\xed\xa0\x80\xe2\x82.JPEG"  # overlong, surrogate, truncated sequence
    buf = io.BytesIO()
    Image.new("RGB", (12, 8), (200, 30, 10)).save(buf, "JPEG")
    with open(os.path.join(cls, good), "wb") as f:
        f.write(buf.getvalue())
    with open(os.path.join(cls, bad), "wb") as f:
        f.write(b"this is not an image\n")

    def convert(out, *extra):
        return subprocess.run([tool, "--quiet", "--layout", "folders", "--raw_data_dir", root,
                               "--output_dir", out, "--train_shards", "1", *extra],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)

    out = str(tmp_path / "skip")
    p = convert(out, "--on_error", "skip")
    assert p.returncode == 0, p.stderr
    man = _manifest_strict(out)
    assert man["status"] == "ok"
    assert man["options"]["raw_data_dir"] == _fsdecode(root)
    assert man["labels"] == [{"label": 1, "synset": _fsdecode(b"cl\xff")}]
    assert [r["path"] for r in man["rejected"]] == [_fsdecode(os.path.join(cls, bad))]
    # lossless: the escapes give back the exact bytes of the path
    assert man["rejected"][0]["path"].encode("utf-8", "surrogateescape") == os.path.join(cls, bad)
    recs = read_shards(out, pb2)["train-00000-of-00001"]
    assert [feat(e, "image/filename") for e in recs] == [good]
    assert feat(recs[0], "image/class/synset") == b"cl\xff"

    # a failed run: the error message quotes the path, the manifest still parses
    out = str(tmp_path / "stop")
    p = convert(out)
    assert p.returncode == 1
    man = _manifest_strict(out)
    assert man["status"] == "failed"
    assert _fsdecode(os.path.join(cls, bad)) in man["error"]
