"""A listing file shared by the tasks of a conversion (imagenet2tfrec
--write_listing / --listing, tfrec.imagenet.write_listing and
convert_images(listing=)): the tree is listed once, the tasks plan from the
listing while the tree changes under them and still write exactly the
one-process output of the listed tree; parts of two listings are refused by
the merge naming both; a cut listing is refused."""
# needs: tfrec-image
import os
import shutil
import subprocess
import sys

import pytest

from bindings_env import load_tfrec_with

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "fixtures"))
import make_images  # noqa: E402

FLAGS = ["--train_shards=5", "--validation_shards=2", "--seed=7", "--quiet"]


@pytest.fixture(scope="module")
def tfrec(build_dir):
    return load_tfrec_with(build_dir, "convert_images")


@pytest.fixture
def raw(tmp_path):
    root = str(tmp_path / "raw")
    make_images.cmd_samples(root, train=14, validation=4, classes=3, seed=5)
    return root


def run(cmd):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600)


def shards(out):
    found = {}
    for d, _, files in os.walk(out):
        for f in files:
            if "-of-" in f and not f.startswith("manifest"):
                with open(os.path.join(d, f), "rb") as fh:
                    found[os.path.relpath(os.path.join(d, f), out)] = fh.read()
    return found


def change(raw):
    """Images added to a class and a new class, one removed is not listed
    anywhere (a task that planned from the listing never looks)."""
    train = os.path.join(raw, "train")
    cls = sorted(os.listdir(train))
    some = sorted(os.listdir(os.path.join(train, cls[0])))[0]
    shutil.copy(os.path.join(train, cls[0], some), os.path.join(train, cls[0], "zz_new.JPEG"))
    os.mkdir(os.path.join(train, "n99999999"))
    shutil.copy(os.path.join(train, cls[0], some), os.path.join(train, "n99999999", "a.JPEG"))


def test_tasks_plan_from_the_listing_while_the_tree_changes(imagenet2tfrec_bin, raw, tmp_path):
    tool = imagenet2tfrec_bin
    listed = str(tmp_path / "listed")
    shutil.copytree(raw, listed)  # the tree as listed, for the one-process run
    one = tmp_path / "one"
    p = run([tool, "--raw_data_dir", listed, "--output_dir", one] + FLAGS)
    assert p.returncode == 0, p.stderr

    listing = tmp_path / "listing.txt"
    p = run([tool, "--raw_data_dir", raw, "--write_listing", listing])
    assert p.returncode == 0 and "fingerprint" in p.stderr, p.stderr
    out = tmp_path / "out"
    for i in range(3):
        if i == 1:
            change(raw)  # between the tasks
        p = run([tool, "--raw_data_dir", raw, "--output_dir", out, "--listing", listing,
                 "--task_index=%d" % i, "--num_tasks=3"] + FLAGS)
        assert p.returncode == 0, p.stderr
    p = run([tool, "--merge_manifests", "--output_dir", out])
    assert p.returncode == 0, p.stderr
    assert shards(out) == shards(one) and len(shards(one)) == 7

    # Without the listing, a task scanning the changed tree plans another set.
    p = run([tool, "--raw_data_dir", raw, "--output_dir", out, "--task_index=2",
             "--num_tasks=3"] + FLAGS)
    assert p.returncode == 0, p.stderr
    p = run([tool, "--merge_manifests", "--output_dir", out])
    assert p.returncode != 0 and "a scan of the tree" in p.stderr, p.stderr

    # A second listing (of the changed tree) mixed with the first: refused,
    # naming both listings.
    listing2 = tmp_path / "listing-2.txt"
    p = run([tool, "--raw_data_dir", raw, "--write_listing", listing2])
    assert p.returncode == 0, p.stderr
    p = run([tool, "--raw_data_dir", raw, "--output_dir", out, "--listing", listing2,
             "--task_index=2", "--num_tasks=3"] + FLAGS)
    assert p.returncode == 0, p.stderr
    p = run([tool, "--merge_manifests", "--output_dir", out])
    assert p.returncode != 0, p.stderr
    assert str(listing) in p.stderr and str(listing2) in p.stderr, p.stderr
    assert "one listing file" in p.stderr, p.stderr


def test_python_listing_and_cut_listing(tfrec, raw, tmp_path):
    listing = str(tmp_path / "l.txt")
    fp = tfrec.imagenet.write_listing(raw, listing)
    assert len(fp) == 16 and int(fp, 16) >= 0
    one = tfrec.imagenet.convert_images(raw, str(tmp_path / "one"), train_shards=3,
                                        validation_shards=1)
    change(raw)
    parts = [tfrec.imagenet.convert_images(raw, str(tmp_path / "out"), train_shards=3,
                                           validation_shards=1, listing=listing,
                                           task_index=i, num_tasks=2) for i in range(2)]
    assert all(p["task"]["listing_fingerprint"] == fp for p in parts)
    merged = tfrec.imagenet.merge_manifests(str(tmp_path / "out"))
    assert merged["counts"]["images_written"] == one["counts"]["images_written"]
    assert shards(tmp_path / "out") == shards(tmp_path / "one")
    with open(listing, "rb") as f:
        text = f.read()
    with open(listing, "wb") as f:
        f.write(text[:len(text) // 2])
    with pytest.raises(tfrec.Error) as e:
        tfrec.imagenet.convert_images(raw, str(tmp_path / "cut"), listing=listing)
    assert "truncated" in str(e.value)
