"""tfrec.ImagePipeline: JPEGs in tf.Example shards decoded on the
dataset's C threads into (images, labels) batches, checked against PIL's
decode with the same Resize + crop arithmetic as torchvision's transforms."""
# needs: tfrec-image
import io
import os
import pickle

import numpy as np
import pytest
from PIL import Image

from bindings_env import load_tfrec_with

# Mean absolute difference (0..255 scale) allowed between a center crop and
# PIL's full decode + resize + crop: the decoder shrinks by its DCT scale
# first, so the pixels differ by rounding and by the IDCT's own filtering.
MAX_MEAN_ABS_DIFF = 2.5

SIZES = [(500, 375), (375, 500), (320, 240), (640, 480), (256, 256), (200, 150)]


@pytest.fixture(scope="module")
def tfrec(build_dir):
    return load_tfrec_with(build_dir, "convert_images")


def photo_like(w, h, seed):
    """Smooth colour fields with some texture, JPEG-encoded like a photo."""
    rng = np.random.default_rng(seed)
    low = rng.integers(0, 256, (6, 8, 3), dtype=np.uint8)
    img = Image.fromarray(low).resize((w, h), Image.BICUBIC)
    arr = np.asarray(img).astype(np.int16) + rng.integers(-12, 13, (h, w, 3))
    img = Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8))
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=90)
    return buf.getvalue()


def write_shards(tfrec, out_dir, jpegs, shards=2):
    paths = []
    for s in range(shards):
        path = os.path.join(out_dir, "train-%05d-of-%05d" % (s, shards))
        with tfrec.TFRecordWriter(path, write_index=True) as w:
            for i in range(s, len(jpegs), shards):
                w.write(tfrec.serialize_example({"image/encoded": [jpegs[i]],
                                                 "image/class/label": [i + 1]}))
        paths.append(path)
    return paths


def round_half_even(x):
    return int(round(x))  # Python's round, as torchvision's CenterCrop uses


def pil_center(jpeg, size=224, resize=256):
    """torchvision's Resize(resize) + CenterCrop(size) on PIL, spelled out."""
    img = Image.open(io.BytesIO(jpeg)).convert("RGB")
    w, h = img.size
    if w <= h:
        rw, rh = resize, int(resize * h / w)
    else:
        rw, rh = int(resize * w / h), resize
    img = img.resize((rw, rh), Image.BILINEAR)
    x, y = round_half_even((rw - size) / 2.0), round_half_even((rh - size) / 2.0)
    return np.asarray(img.crop((x, y, x + size, y + size)))


@pytest.fixture(scope="module")
def shards(tfrec, tmp_path_factory):
    d = tmp_path_factory.mktemp("images")
    jpegs = [photo_like(w, h, i) for i, (w, h) in enumerate(SIZES * 2)]
    return jpegs, write_shards(tfrec, str(d), jpegs)


def collect(pipe):
    images, labels = [], []
    for im, lb in pipe:
        images.append(im)
        labels.append(lb)
    return np.concatenate(images), np.concatenate(labels)


def test_center_crops_match_pil(tfrec, shards):
    jpegs, paths = shards
    with tfrec.ImagePipeline(paths, batch_size=5) as pipe:
        batches = list(pipe)
    assert [b[0].shape for b in batches] == [(5, 224, 224, 3)] * 2 + [(2, 224, 224, 3)]
    assert all(b[0].dtype == np.uint8 and b[1].dtype == np.int64 for b in batches)
    images = np.concatenate([b[0] for b in batches])
    labels = np.concatenate([b[1] for b in batches])
    assert sorted(labels.tolist()) == list(range(1, len(jpegs) + 1))
    diffs = []
    for img, label in zip(images, labels):
        ref = pil_center(jpegs[label - 1])
        diffs.append(np.abs(img.astype(np.int16) - ref.astype(np.int16)).mean())
    print("mean abs diff vs PIL per image:", ["%.2f" % d for d in diffs])
    assert max(diffs) < MAX_MEAN_ABS_DIFF, diffs


def test_full_size_decode_is_pils(tfrec, shards):
    """Without DCT scaling the resampler's arithmetic is PIL's: the same
    pixels as torchvision's transforms (1 of slack for a rounding)."""
    jpegs, paths = shards
    with tfrec.ImagePipeline(paths, batch_size=12, dct_scaling=False) as pipe:
        (images, labels), = list(pipe)
    for img, label in zip(images, labels):
        ref = pil_center(jpegs[label - 1])
        assert np.abs(img.astype(np.int16) - ref.astype(np.int16)).max() <= 1


def test_other_sizes_and_drop_remainder(tfrec, shards):
    jpegs, paths = shards
    with tfrec.ImagePipeline(paths, size=96, resize=128, batch_size=5,
                             drop_remainder=True) as pipe:
        assert len(pipe) == len(jpegs) // 5
        shapes = [im.shape for im, _ in pipe]
    assert shapes == [(5, 96, 96, 3)] * (len(jpegs) // 5)
    with pytest.raises(tfrec.InvalidArgumentError):
        tfrec.ImagePipeline(paths, size=300, resize=256)
    with pytest.raises(ValueError):
        tfrec.ImagePipeline(paths, crop="middle")


def test_random_crops_repeat_per_seed_and_epoch(tfrec, shards):
    _, paths = shards
    kw = dict(crop="random", flip=True, batch_size=4, shuffle=True)
    with tfrec.ImagePipeline(paths, seed=7, **kw) as a, \
            tfrec.ImagePipeline(paths, seed=7, num_parallel_reads=1, **kw) as b, \
            tfrec.ImagePipeline(paths, seed=8, **kw) as c:
        a0, b0, c0 = collect(a), collect(b), collect(c)
        a1 = collect(a)  # the next epoch
    assert np.array_equal(a0[0], b0[0]) and np.array_equal(a0[1], b0[1])
    order = np.argsort(a0[1])
    assert not np.array_equal(a0[0][order], a1[0][np.argsort(a1[1])])
    assert not np.array_equal(a0[0][order], c0[0][np.argsort(c0[1])])


def test_corrupt_jpeg_names_the_file(tfrec, tmp_path):
    good = photo_like(300, 200, 1)
    jpegs = [good, good[:len(good) // 3], good]
    (path,) = write_shards(tfrec, str(tmp_path), jpegs, shards=1)
    with tfrec.ImagePipeline(path, size=64, batch_size=8) as pipe:
        with pytest.raises(tfrec.ImageError) as e:
            list(pipe)
    assert path in str(e.value) and "record 1 at offset" in str(e.value)
    with tfrec.ImagePipeline(path, size=64, batch_size=8, skip_corrupt=True) as pipe:
        (images, labels), = list(pipe)
        assert labels.tolist() == [1, 3] and images.shape == (2, 64, 64, 3)
        assert pipe.dropped == 1


def test_torch_dataloader_workers_share_the_shards(tfrec, shards):
    import torch
    jpegs, paths = shards
    pipe = tfrec.ImagePipeline(paths, size=32, resize=40, batch_size=3)
    assert isinstance(pipe, torch.utils.data.IterableDataset)
    loader = torch.utils.data.DataLoader(pipe, batch_size=None, num_workers=2)
    labels = sorted(int(x) for _, lb in loader for x in lb)
    assert labels == list(range(1, len(jpegs) + 1))
    again = pickle.loads(pickle.dumps(pipe))
    assert again.size == 32 and len(again) == len(pipe)
    pipe.close()
    again.close()
