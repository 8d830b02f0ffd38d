"""libtfrec for Python: TFRecord files and tf.Example without TensorFlow.

    import tfrec
    with tfrec.TFRecordWriter("data.tfrecord", compression="GZIP") as w:
        w.write(tfrec.Example({"label": [1], "text": [b"hi"]}).serialize())
    for record in tfrec.TFRecordReader("data.tfrecord"):
        print(tfrec.Example.parse(record).to_dict())

Pure Python over libtfrec.so through ctypes (see _lib.py for where the
library is looked for). convert_images needs the optional part
libtfrec-image.so, tfrec.bigtable libtfrec-bigtable.so and gs:// paths
(tfrec.storage, tfrec.glob("gs://...")) libtfrec-storage.so; without them
those raise MissingPartError. tfrec.parts() and tfrec.features() tell what
this installation has. ctypes releases the GIL during every library call;
handles (readers, writers) are not thread-safe: use one per thread.
"""

from . import _lib
from ._lib import (LibraryNotFoundError, MissingPartError, path as library_path, lib as _clib,
                   parts, features)
from .errors import (Error, InvalidArgumentError, OutOfMemoryError, IOFailureError,
                     DataLossError, TruncatedRecordError, CorruptRecordError,
                     RecordTooLargeError, TrailingGarbageError, CompressionError,
                     ParseError, NotFoundError, NoSuchFileError, UnsupportedError, ImageError,
                     NetworkError, StateError, BigtableError)
from .record import TFRecordReader, TFRecordWriter, count, verify, VerifyResult
from .paths import glob
from .example import (Example, BytesList, FloatList, Int64List, parse_example,
                      serialize_example)
from .parsing import FixedLenFeature, VarLenFeature, parse_example_batch
from .dataset import (Dataset, MapDataset, RandomAccessReader, index_file, count_records,
                      tf_record_iterator)
from .task import task_share, task_from_env, task_identity, TaskIdentity
from .config import set_config, get_config, config_names

__version__ = _clib.tfrec_version().decode()


__all__ = [
    "TFRecordReader", "TFRecordWriter", "count", "verify", "VerifyResult",
    "Example", "BytesList", "FloatList", "Int64List", "parse_example", "serialize_example",
    "FixedLenFeature", "VarLenFeature", "parse_example_batch",
    "Dataset", "MapDataset", "RandomAccessReader", "index_file", "count_records",
    "tf_record_iterator", "task_identity", "TaskIdentity",
    "Error", "InvalidArgumentError", "OutOfMemoryError", "IOFailureError", "DataLossError",
    "TruncatedRecordError", "CorruptRecordError", "RecordTooLargeError",
    "TrailingGarbageError", "CompressionError", "ParseError", "NotFoundError", "NoSuchFileError",
    "UnsupportedError", "ImageError", "NetworkError", "StateError", "BigtableError",
    "LibraryNotFoundError", "MissingPartError", "library_path", "parts", "features",
    "convert_images", "merge_manifests", "ImagePipeline", "glob", "task_share", "task_from_env",
    "set_config", "get_config", "config_names",
]

# Optional parts: present when installed next to the core library.
if _lib.loaded("tfrec-image"):
    from .imagenet import convert_images, merge_manifests
    from .images import ImagePipeline
else:
    ImagePipeline = _lib.unavailable("ImagePipeline", "tfrec-image")
    convert_images = _lib.unavailable("convert_images", "tfrec-image")
    merge_manifests = _lib.unavailable("merge_manifests", "tfrec-image")
if _lib.loaded("tfrec-bigtable"):
    from . import bigtable
    __all__.append("bigtable")
if _lib.loaded("tfrec-storage"):
    from . import storage
    __all__.append("storage")


def __getattr__(name):
    # tfrec.bigtable without its part: say which part is missing (PEP 562).
    if name == "bigtable":
        raise _lib.missing("tfrec-bigtable")
    if name == "storage":
        raise _lib.missing("tfrec-storage")
    raise AttributeError("module 'tfrec' has no attribute %r" % name)
