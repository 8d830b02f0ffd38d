"""Decoded image batches for training (include/tfrec/image_decode.h).

    pipe = tfrec.ImagePipeline("train-*", size=224, crop="random", flip=True,
                               shuffle=True, seed=1, batch_size=64)
    for epoch in range(10):
        pipe.set_epoch(epoch)
        for images, labels in pipe:   # uint8 [N, 224, 224, 3], int64 [N]
            ...

The JPEGs of the tf.Examples (imagenet2tfrec's image/encoded and
image/class/label) are decoded on the dataset's C threads, without the
GIL: Resize(resize) + CenterCrop(size) like torchvision's evaluation
transforms, or RandomCrop(size) (+ RandomHorizontalFlip with flip=True)
for training, drawn from (seed, epoch, record) so an epoch repeats.
It is a tfrec.Dataset underneath: sharding, shuffling, DataLoader workers
and pickling work the same (docs/datasets.md, "Decoded images").
"""

import ctypes
import os
from ctypes import POINTER, byref, c_char_p, c_int, c_size_t, c_uint64, c_void_p

from . import _constants as C
from ._handles import ImageStageHandle
from ._lib import _Sized, _proto, lib
from .dataset import Dataset, _rebuild
from .errors import check, error_for

_proto("tfrec_image_stage_new", c_int, POINTER(ImageStageHandle), c_void_p)
_proto("tfrec_image_stage_item_size", c_size_t, ImageStageHandle)
_proto("tfrec_image_stage_attach", c_int, ImageStageHandle, c_void_p)
_proto("tfrec_image_stage_free", None, ImageStageHandle)

_CROP = {"center": 0, "random": 1}


class _ImageDecodeOptions(_Sized):
    _c_type_ = "tfrec_image_decode_options"
    _fields_ = [("struct_size", c_size_t), ("size", c_int), ("resize", c_int), ("crop", c_int),
                ("flip", c_int), ("max_pixels", c_uint64), ("full_size", c_int)]


class _ImageStageOptions(_Sized):
    _c_type_ = "tfrec_image_stage_options"
    _fields_ = [("struct_size", c_size_t), ("decode", POINTER(_ImageDecodeOptions)),
                ("image_key", c_char_p), ("label_key", c_char_p), ("seed", c_uint64),
                ("skip_corrupt", c_int)]


class ImagePipeline(Dataset):
    """Batches (images, labels) of decoded, resized and cropped JPEGs:
    images a uint8 numpy array [N, size, size, 3] (RGB, HWC), labels an
    int64 array [N] (-1 for a record without label_key).

    size: output side; resize: the shorter side before the crop (default
    size * 8 / 7, 256 for 224); crop: "center" (evaluation) or "random"
    (training); flip: mirror a random half (with crop="random");
    skip_corrupt: drop undecodable images (counted in .dropped) instead of
    raising ImageError naming the file, record and offset; dct_scaling=False
    always decodes at full size (large photos are otherwise decoded at 1/2,
    1/4 or 1/8 scale first): the same pixels as torchvision's transforms on
    PIL. The other
    arguments are tfrec.Dataset's (num_parallel_reads: the decoding
    threads too)."""

    def __init__(self, files, size=224, resize=None, crop="center", flip=False, batch_size=32,
                 drop_remainder=False, skip_corrupt=False, shuffle=False, seed=0, shard=(0, 1),
                 num_parallel_reads=2, prefetch_bytes=256 << 20, block_records=16,
                 index="auto", use_mmap=None, image_key="image/encoded",
                 label_key="image/class/label", dct_scaling=True):
        self._image_args = dict(
            files=files, size=size, resize=resize, crop=crop, flip=flip, batch_size=batch_size,
            drop_remainder=drop_remainder, skip_corrupt=skip_corrupt, shuffle=shuffle,
            seed=seed, shard=shard, num_parallel_reads=num_parallel_reads,
            prefetch_bytes=prefetch_bytes, block_records=block_records, index=index,
            use_mmap=use_mmap, image_key=image_key, label_key=label_key,
            dct_scaling=dct_scaling)
        if crop not in _CROP:
            raise ValueError("crop must be 'center' or 'random', not %r" % (crop,))
        if flip and crop != "random":
            raise ValueError("flip needs crop='random'")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError("batch_size must be a positive integer, not %r" % (batch_size,))
        if not isinstance(seed, int) or not 0 <= seed < 1 << 64:
            raise ValueError("seed must be an integer in [0, 2**64), not %r" % (seed,))
        for name, v in (("size", size), ("resize", resize or 0)):
            if not isinstance(v, int) or v < 0:
                raise ValueError("%s must be a positive integer, not %r" % (name, v))
        self._decode = _ImageDecodeOptions(size=size, resize=resize or 0, crop=_CROP[crop],
                                           flip=1 if flip else 0,
                                           full_size=0 if dct_scaling else 1)
        so = _ImageStageOptions(decode=ctypes.pointer(self._decode),
                                image_key=image_key.encode(), label_key=label_key.encode(),
                                seed=seed, skip_corrupt=1 if skip_corrupt else 0)
        stage = ImageStageHandle()
        check(lib.tfrec_image_stage_new(byref(stage), byref(so)))
        self._stage = stage
        self.size = size
        self._item = lib.tfrec_image_stage_item_size(stage)
        try:
            super().__init__(files, shuffle=shuffle, seed=seed, shard=shard,
                             num_parallel_reads=num_parallel_reads,
                             prefetch_bytes=prefetch_bytes, block_records=block_records,
                             index=index, use_mmap=use_mmap, batch_size=batch_size,
                             drop_remainder=drop_remainder)
        except BaseException:
            lib.tfrec_image_stage_free(stage)
            self._stage = None
            raise

    def _options(self, shard):
        opts = super()._options(shard)
        check(lib.tfrec_image_stage_attach(self._stage, byref(opts)))
        return opts

    def __reduce__(self):
        return (_rebuild, (ImagePipeline, self._image_args, self._epoch, self._split_workers))

    @property
    def dropped(self):
        """Corrupt images skipped so far (skip_corrupt=True), this process."""
        h = self._handle(self._effective_shard())
        return lib.tfrec_dataset_dropped(h)

    def __iter__(self):
        import numpy as np
        shard = self._effective_shard()
        h = self._handle(shard)
        check(lib.tfrec_dataset_start_epoch(h, self._epoch), lib.tfrec_dataset_errmsg(h))
        epoch, n_batch, side = self._epoch, self.batch_size, self.size
        pixels = side * side * 3
        data, size = c_void_p(), c_size_t()
        nxt, memmove = lib.tfrec_dataset_next, ctypes.memmove
        rc = C.TFREC_OK
        while rc == C.TFREC_OK:
            images = np.empty((n_batch, side, side, 3), np.uint8)
            labels = np.empty(n_batch, np.int64)
            ip, lp, n = images.ctypes.data, labels.ctypes.data, 0
            while n < n_batch:
                if self._h is None:  # closed while this generator was suspended
                    raise ValueError("Dataset is closed")
                rc = nxt(h, byref(data), byref(size))
                if rc != C.TFREC_OK:
                    break
                memmove(lp + 8 * n, data.value, 8)  # the item: int64 label, then pixels
                memmove(ip + pixels * n, data.value + 8, pixels)
                n += 1
            if n == n_batch:
                yield images, labels
            elif n and not self.drop_remainder:
                yield images[:n], labels[:n]
        if rc != C.TFREC_END:
            raise error_for(rc, lib.tfrec_dataset_errmsg(h))
        if self._epoch == epoch:
            self._epoch = epoch + 1

    def close(self):
        """Stop the threads, release the files and the decoder's settings."""
        super().close()
        stage = getattr(self, "_stage", None)
        if stage is not None and getattr(self, "_pid", None) == os.getpid():
            lib.tfrec_image_stage_free(stage)
            self._stage = None


__all__ = ["ImagePipeline"]
