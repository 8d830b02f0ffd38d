"""tfrec.convert_images (the converter through the Python bindings), checked
with tfrecord_ref framing, python3-protobuf decoding and PIL decoding;
expected labels are recomputed from the documented rule (1-based index in
the sorted union of synsets), not taken from the library."""
# needs: tfrec-image
import io
import os
import sys

import pytest
from PIL import Image

import tfrecord_ref
from bindings_env import load_tfrec_with

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "fixtures"))
import make_images  # noqa: E402


@pytest.fixture(scope="module")
def tfrec(build_dir):
    return load_tfrec_with(build_dir, "convert_images")


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    root = tmp_path_factory.mktemp("raw")
    n = make_images.cmd_samples(str(root), train=12, validation=5, classes=3, seed=5)
    assert n == 17
    return root


def read_shards(out_dir, manifest, pb2):
    examples = {}
    for shard in manifest["shards"]:
        path = os.path.join(out_dir, shard["file"])  # "train/train-00000-of-00001"
        records = tfrecord_ref.read_records(path)
        assert len(records) == shard["records"]
        for r in records:
            examples.setdefault(shard["split"], []).append(pb2.Example.FromString(r))
    return examples


def test_convert_images_matches_independent_decoding(tfrec, pb2, samples, tmp_path):
    ticks = []
    out = tmp_path / "out"
    manifest = tfrec.convert_images(samples, out, train_shards=2, validation_shards=1,
                                    num_threads=2, seed=3,
                                    progress=lambda *a: ticks.append(a))
    assert isinstance(manifest, dict)
    assert sorted(s["split"] for s in manifest["shards"]) == ["train", "train", "validation"]
    synsets = sorted(os.listdir(samples / "train"))
    examples = read_shards(str(out), manifest, pb2)
    assert len(examples["train"]) == 12 and len(examples["validation"]) == 5
    truth = (samples / "synset_labels.txt").read_text().split()
    val_names = sorted(os.listdir(samples / "validation"))
    expected_val = dict(zip(val_names, truth))
    for split, exs in examples.items():
        for ex in exs:
            f = ex.features.feature
            synset = f["image/class/synset"].bytes_list.value[0].decode()
            assert f["image/class/label"].int64_list.value[0] == synsets.index(synset) + 1
            img = Image.open(io.BytesIO(f["image/encoded"].bytes_list.value[0]))
            img.load()
            assert img.format == "JPEG"
            assert (img.width, img.height) == (f["image/width"].int64_list.value[0],
                                               f["image/height"].int64_list.value[0])
            name = f["image/filename"].bytes_list.value[0].decode()
            if split == "validation":
                assert expected_val[name] == synset
            else:
                assert name.startswith(synset + "_")
            # The bindings' own parser agrees with protobuf on every record.
            ours = tfrec.Example.parse(ex.SerializeToString()).to_dict()
            assert ours["image/class/synset"] == [synset.encode()]
    assert ticks, "the progress callback was never called"


def test_convert_images_reports_bad_images(tfrec, tmp_path):
    root = tmp_path / "bad"
    kinds = make_images.cmd_bad(str(root))
    bad = {os.path.basename(p) for p, k in kinds.items() if k != "rgb"}
    with pytest.raises(tfrec.Error) as e:
        tfrec.convert_images(root, tmp_path / "o1", train_shards=1, validation_shards=1)
    assert isinstance(e.value.manifest, dict)
    assert not (tmp_path / "o1").exists() or not any(
        n.startswith("train") for n in os.listdir(tmp_path / "o1"))
    m = tfrec.convert_images(root, tmp_path / "o2", train_shards=1, validation_shards=1,
                             on_error="skip", verify="full")
    rejected = {os.path.basename(r["path"]) for r in m["rejected"]}
    assert rejected == bad
    total = sum(tfrec.count(tmp_path / "o2" / s["file"]) for s in m["shards"])
    assert total == sum(1 for k in kinds.values() if k == "rgb")


def test_convert_images_max_image_pixels(tfrec, tmp_path):
    root = tmp_path / "r"
    make_images.cmd_samples(str(root), train=4, validation=0, classes=1, seed=3,
                            layout="folders")
    m = tfrec.convert_images(root, tmp_path / "o", layout="folders", train_shards=1,
                             on_error="skip", max_image_pixels=1000)
    assert m["options"]["max_image_pixels"] == 1000
    assert len(m["rejected"]) == 4
    assert all("above the pixel limit of 1000" in r["reason"] for r in m["rejected"])
    with pytest.raises(ValueError):
        tfrec.convert_images(root, tmp_path / "o2", max_image_pixels=0)


def test_convert_images_argument_errors(tfrec, tmp_path):
    with pytest.raises(tfrec.Error) as e:
        tfrec.convert_images(tmp_path / "missing", tmp_path / "o")
    assert "missing" in str(e.value)
    # the Python argument is named, not the tool's flag
    assert "raw_data_dir=%s does not exist" % (tmp_path / "missing") in str(e.value)
    assert "--" not in str(e.value)
    with pytest.raises(tfrec.Error) as e:
        tfrec.convert_images(None, tmp_path / "o", validation_tar=tmp_path / "v.tar")
    assert "validation_labels_file=" in str(e.value) and "--" not in str(e.value)
    with pytest.raises(ValueError):
        tfrec.convert_images(tmp_path, tmp_path / "o", layout="zip")
    cancel = RuntimeError("stop now")

    def progress(*a):
        raise cancel
    root = tmp_path / "r"
    make_images.cmd_samples(str(root), train=40, validation=0, classes=2, seed=1,
                            layout="folders")
    with pytest.raises(RuntimeError) as e:
        tfrec.convert_images(root, tmp_path / "o3", layout="folders", train_shards=1,
                             num_threads=1, progress=progress)
    assert e.value is cancel
