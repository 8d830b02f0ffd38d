"""convert_images(): JPEG trees to sharded tf.Example TFRecords
(include/tfrec/imagenet.h, the imagenet2tfrec tool's engine)."""

import ctypes
import json
from ctypes import (POINTER, byref, c_char_p, c_double, c_int, c_size_t,
                    c_uint32, c_uint64, c_void_p)

from . import _args
from . import _constants as C
from ._handles import ImagenetResultHandle
from ._lib import _Sized, _proto, lib
from .errors import error_for
from .record import _compression_code

_progress_fn = ctypes.CFUNCTYPE(c_int, c_void_p, c_uint64, c_uint64, c_uint64, c_uint64)


class _Options(_Sized):
    _c_type_ = "tfrec_imagenet_options"
    _fields_ = [("struct_size", c_size_t), ("layout", c_int), ("raw_data_dir", c_char_p), ("csv_path", c_char_p),
                ("output_dir", c_char_p), ("labels_file", c_char_p),
                ("validation_labels_file", c_char_p), ("extensions", c_char_p),
                ("train_shards", c_int), ("validation_shards", c_int), ("num_threads", c_int),
                ("seed", c_uint64), ("no_shuffle", c_int), ("verify", c_int),
                ("on_error", c_int), ("quality", c_int), ("grayscale_to_rgb", c_int),
                ("compression", c_int), ("max_inflight_bytes", c_size_t),
                ("manifest_path", c_char_p), ("progress", _progress_fn),
                ("progress_ctx", c_void_p), ("max_image_pixels", c_uint64),
                ("flat_output", c_int), ("overwrite", c_int), ("cancel", c_void_p),
                ("train_tar", c_char_p), ("validation_tar", c_char_p),
                ("open_sink", c_void_p), ("remove_output", c_void_p), ("sink_ctx", c_void_p),
                ("task_index", c_uint32), ("num_tasks", c_uint32),
                ("list_input", c_void_p), ("open_input", c_void_p), ("input_ctx", c_void_p),
                ("open_input_range", c_void_p), ("listing", c_char_p),
                ("fs", c_void_p)]


class _Counts(_Sized):
    _c_type_ = "tfrec_imagenet_counts"
    _fields_ = [("struct_size", c_size_t), ("images_total", c_uint64), ("images_written", c_uint64),
                ("images_fixed", c_uint64), ("images_rejected", c_uint64),
                ("bytes_in", c_uint64), ("bytes_out", c_uint64), ("shards", c_uint32),
                ("classes", c_uint32), ("seconds", c_double), ("stale_removed", c_uint32),
                ("shards_planned", c_uint32), ("shards_begin", c_uint32), ("shards_end", c_uint32)]


class _MergeOptions(_Sized):
    _c_type_ = "tfrec_imagenet_merge_options"
    _fields_ = [("struct_size", c_size_t), ("output_dir", c_char_p), ("manifest_path", c_char_p),
                ("parts", POINTER(c_char_p)), ("nparts", c_size_t), ("open_source", c_void_p),
                ("open_sink", c_void_p), ("io_ctx", c_void_p), ("fs", c_void_p)]


_proto("tfrec_imagenet_convert", c_int, POINTER(_Options), POINTER(ImagenetResultHandle))
_proto("tfrec_imagenet_result_status", c_int, ImagenetResultHandle)
_proto("tfrec_imagenet_result_errmsg", c_char_p, ImagenetResultHandle)
_proto("tfrec_imagenet_result_counts", c_int, ImagenetResultHandle, POINTER(_Counts))
_proto("tfrec_imagenet_result_json", c_char_p, ImagenetResultHandle)
_proto("tfrec_imagenet_result_free", None, ImagenetResultHandle)
_proto("tfrec_imagenet_write_listing", c_int, POINTER(_Options), c_char_p, c_char_p)
_proto("tfrec_imagenet_merge_manifests", c_int, POINTER(_MergeOptions),
       POINTER(ImagenetResultHandle))

_LAYOUTS = {"imagenet": C.TFREC_LAYOUT_IMAGENET, "folders": C.TFREC_LAYOUT_FOLDERS,
            "csv": C.TFREC_LAYOUT_CSV}
_VERIFY = {None: C.TFREC_VERIFY_DEFAULT, "header": C.TFREC_VERIFY_HEADER,
           "fast": C.TFREC_VERIFY_FAST, "full": C.TFREC_VERIFY_FULL}
_ON_ERROR = {"stop": C.TFREC_ON_ERROR_STOP, "skip": C.TFREC_ON_ERROR_SKIP}


def _choice(name, table, value):
    key = value.lower() if isinstance(value, str) else value
    if key not in table:
        raise ValueError("%s must be one of %s, not %r"
                         % (name, ", ".join(repr(k) for k in table if k is not None), value))
    return table[key]


# The library's messages name imagenet2tfrec's flags; a Python caller gets
# the names of convert_images' arguments (longest spellings first).
_ARG_NAMES = (("--local_scratch_dir / --output_dir", "output_dir="),
              ("--validation_labels_file", "validation_labels_file="),
              ("--validation_labels", "validation_labels_file"),
              ("--raw_data_dir ", "raw_data_dir="), ("--raw_data_dir", "raw_data_dir="),
              ("--train_tar", "train_tar="), ("--validation_tar", "validation_tar="),
              ("--labels_file", "labels_file="), ("--csv", "csv_path="),
              ("--on_error=skip", 'on_error="skip"'), ("--on_error", "on_error="),
              ("--overwrite", "overwrite=True"), ("--task_index", "task_index"),
              ("--num_tasks", "num_tasks"), ("--seed", "seed"))


def _python_names(msg):
    if isinstance(msg, bytes):
        msg = msg.decode("utf-8", "replace")
    for flag, arg in _ARG_NAMES:
        msg = msg.replace(flag, arg)
    return msg.replace("==", "=")


def convert_images(raw_data_dir, output_dir, *, layout="imagenet", csv_path=None,
                   labels_file=None, validation_labels_file=None, extensions=None,
                   train_shards=None, validation_shards=None, num_threads=None, seed=0,
                   shuffle=True, verify=None, on_error="stop", quality=None,
                   grayscale_to_rgb=False, compression=None, max_inflight_bytes=None,
                   manifest_path=None, progress=None, max_image_pixels=None,
                   flat_output=False, overwrite=False, train_tar=None, validation_tar=None,
                   task_index=None, num_tasks=None, listing=None):
    """Convert an image tree to sharded TFRecords; returns the run's manifest
    (a dict: "shards", "labels", counts, "fixed", "rejected" ...; see
    docs/imagenet.md).

    layout: "imagenet" (RAW/train/<synset>/*, RAW/validation/* with
    RAW/synset_labels.txt), "folders" (ROOT/<class>/*) or "csv" (csv_path
    lines path,label[,split]). Shards go to output_dir/<split>/<split>-NNNNN-of-
    NNNNN (train/, validation/), as imagenet_to_gcs.py writes them, or all into
    output_dir with flat_output=True. Shards of another set already in
    output_dir are refused (StateError naming them) unless overwrite=True.
    Options mirror imagenet2tfrec's flags; None
    keeps the library default (1024 train / 128 validation shards, all CPUs,
    JPEG quality 100, "fast" verification). verify: "header", "fast", "full".
    on_error: "stop" (the first bad image fails the run) or "skip" (left out
    and listed under manifest["rejected"]). max_image_pixels: larger images
    (width x height) are bad images (default 89478485, PIL's limit).
    progress(done, total, bytes_in, bytes_out) is called a few times a second
    on this thread; an exception raised in it cancels the run and is re-raised.

    train_tar, validation_tar: the official ImageNet tarballs
    (ILSVRC2012_img_train.tar, a tar of per-synset tars, and the flat
    ILSVRC2012_img_val.tar), read in place instead of raw_data_dir's tree;
    raw_data_dir may then be None if validation_labels_file is given. The
    shards are the bytes the extracted tree gives. Either tarball alone (or
    raw_data_dir holding one) converts its split only.

    task_index, num_tasks: run task task_index (0..num_tasks-1) of a
    conversion split into num_tasks tasks (other processes, machines, the pods
    of a Kubernetes Indexed Job, Dask workers), each called with the same
    arguments: every task plans the whole set and writes only its share of the
    shards, plus output_dir/manifest-task-IIIII-of-NNNNN.json; the return value
    is then that part (with a "task" entry and each shard's "crc32c").
    merge_manifests(output_dir) makes the manifest of the whole set once every
    task is done. The shards are those of one call without tasks.
    raw_data_dir may be gs://BUCKET/PATH (the imagenet and folders trees),
    and train_tar, validation_tar and validation_labels_file gs:// objects:
    they are listed and read in place; the shards are the bytes of the same
    tree converted from local disk.

    listing: plan from this listing file (write_listing; local, gs:// or
    mem://) instead of scanning raw_data_dir: the images it names, whatever
    the tree holds now. Give every task the same one; merge_manifests
    refuses parts planned from different listings.

    Raises the tfrec.Error for the failure (ImageError, NotFoundError, ...)
    with the failed run's manifest as e.manifest.
    """
    o = _Options()
    o.layout = _choice("layout", _LAYOUTS, layout)
    path = _args.optional_path
    o.raw_data_dir = path(raw_data_dir, "raw_data_dir")
    o.csv_path = path(csv_path, "csv_path")
    o.output_dir = path(output_dir, "output_dir")
    o.labels_file = path(labels_file, "labels_file")
    o.validation_labels_file = path(validation_labels_file, "validation_labels_file")
    if extensions is not None and not isinstance(extensions, str):
        extensions = ",".join(extensions)
    o.extensions = _args.text(extensions or None, "extensions")
    size = _args.size
    o.train_shards = size(train_shards, "train_shards") or 0
    o.validation_shards = size(validation_shards, "validation_shards") or 0
    o.num_threads = size(num_threads, "num_threads") or 0
    o.seed = size(seed, "seed")
    o.no_shuffle = 0 if shuffle else 1
    o.verify = _choice("verify", _VERIFY, verify)
    o.on_error = _choice("on_error", _ON_ERROR, on_error)
    o.quality = size(quality, "quality") or 0
    o.grayscale_to_rgb = 1 if grayscale_to_rgb else 0
    o.compression = _compression_code(compression, False)
    o.max_inflight_bytes = size(max_inflight_bytes, "max_inflight_bytes") or 0
    if max_image_pixels is not None and max_image_pixels < 1:
        raise ValueError("max_image_pixels must be at least 1, not %r" % (max_image_pixels,))
    o.max_image_pixels = max_image_pixels or 0
    # Every name goes through the library's file system layer (o.fs NULL):
    # a scheme of a part that is not loaded raises MissingPartError.
    o.manifest_path = path(manifest_path, "manifest_path")
    o.flat_output = 1 if flat_output else 0
    o.overwrite = 1 if overwrite else 0
    o.train_tar = path(train_tar, "train_tar")
    o.validation_tar = path(validation_tar, "validation_tar")
    if (task_index is None) != (num_tasks is None):
        raise ValueError("task_index and num_tasks go together")
    if num_tasks is not None:
        if not 1 <= num_tasks <= 1000000 or not 0 <= task_index < num_tasks:
            raise ValueError("task_index must be in 0..num_tasks-1 and num_tasks in 1..1000000, "
                             "not %r of %r" % (task_index, num_tasks))
        o.task_index, o.num_tasks = task_index, num_tasks
    o.listing = path(listing, "listing")

    raised = []
    if progress is not None:
        def trampoline(_ctx, done, total, bytes_in, bytes_out):
            try:
                progress(done, total, bytes_in, bytes_out)
                return 0
            except BaseException as e:  # cancel the run, re-raise below
                raised.append(e)
                return 1
        o.progress = _progress_fn(trampoline)

    res = ImagenetResultHandle()
    rc = lib.tfrec_imagenet_convert(byref(o), byref(res))
    try:
        text = lib.tfrec_imagenet_result_json(res) if res.value else None
        manifest = json.loads(text.decode("utf-8")) if text else {}
        if raised:
            raise raised[0]
        if rc < 0:
            msg = lib.tfrec_imagenet_result_errmsg(res) if res.value else None
            err = error_for(rc, _python_names(msg if msg is not None else lib.tfrec_last_errmsg()))
            err.manifest = manifest
            raise err
        return manifest
    finally:
        if res.value:
            lib.tfrec_imagenet_result_free(res)


def write_listing(raw_data_dir, path, *, layout="imagenet", validation_labels_file=None,
                  extensions=None):
    """List the image tree raw_data_dir once ("imagenet" or "folders" layout,
    local or gs://) into the listing file path (local, gs:// or mem://), for
    the tasks of a conversion to plan from (convert_images(listing=path)):
    N tasks do not each list the tree, and all plan from the same images
    even when the tree changes. Returns the listing's fingerprint (16 hex
    digits), which each task's manifest part records."""
    o = _Options()
    o.layout = _choice("layout", _LAYOUTS, layout)
    o.raw_data_dir = _args.path(raw_data_dir, "raw_data_dir")
    o.validation_labels_file = _args.optional_path(validation_labels_file,
                                                   "validation_labels_file")
    if extensions is not None and not isinstance(extensions, str):
        extensions = ",".join(extensions)
    o.extensions = _args.text(extensions or None, "extensions")
    fp = ctypes.create_string_buffer(17)
    rc = lib.tfrec_imagenet_write_listing(byref(o), _args.path(path, "path"), fp)
    if rc < 0:
        raise error_for(rc, None)
    return fp.value.decode("ascii")


def merge_manifests(output_dir, manifest_path=None):
    """After every task of a split conversion (convert_images with task_index
    and num_tasks) is done: check their parts in output_dir (local or gs://:
    each task once, all of the same plan, every shard file of its recorded
    size) and write the manifest of the whole set to manifest_path
    (default output_dir/manifest.json); returns it as a dict, shaped like the
    manifest of a call without tasks. Raises NotFoundError naming a task
    without a part (re-run it), StateError for parts of another plan or a
    shard missing or of the wrong size."""
    o = _MergeOptions()
    o.output_dir = _args.path(output_dir, "output_dir")
    o.manifest_path = _args.optional_path(manifest_path, "manifest_path")
    # The library lists, reads and writes through the file system layer.
    res = ImagenetResultHandle()
    rc = lib.tfrec_imagenet_merge_manifests(byref(o), byref(res))
    try:
        if rc < 0:
            raise error_for(rc, lib.tfrec_imagenet_result_errmsg(res) if res.value else None)
        return json.loads(lib.tfrec_imagenet_result_json(res).decode("utf-8"))
    finally:
        if res.value:
            lib.tfrec_imagenet_result_free(res)


__all__ = ["convert_images", "merge_manifests"]
