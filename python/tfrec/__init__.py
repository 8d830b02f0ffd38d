"""libtfrec for Python: TFRecord files and tf.Example without TensorFlow.

    import tfrec
    with tfrec.TFRecordWriter("data.tfrecord", compression="GZIP") as w:
        w.write(tfrec.Example({"label": [1], "text": [b"hi"]}).serialize())
    for record in tfrec.TFRecordReader("data.tfrecord"):
        print(tfrec.Example.parse(record).to_dict())

Pure Python over libtfrec.so through ctypes (see _lib.py for where the
library is looked for). ctypes releases the GIL during every library call;
handles (readers, writers) are not thread-safe: use one per thread.
"""

from ._lib import LibraryNotFoundError, path as library_path, lib as _clib, has as _has
from .errors import (Error, InvalidArgumentError, OutOfMemoryError, IOFailureError,
                     DataLossError, TruncatedRecordError, CorruptRecordError,
                     RecordTooLargeError, TrailingGarbageError, CompressionError,
                     ParseError, NotFoundError, NoSuchFileError, UnsupportedError, ImageError,
                     NetworkError, StateError, BigtableError)
from .record import TFRecordReader, TFRecordWriter, count, verify, VerifyResult
from .example import (Example, BytesList, FloatList, Int64List, parse_example,
                      serialize_example)

__version__ = _clib.tfrec_version().decode()


__all__ = [
    "TFRecordReader", "TFRecordWriter", "count", "verify", "VerifyResult",
    "Example", "BytesList", "FloatList", "Int64List", "parse_example", "serialize_example",
    "Error", "InvalidArgumentError", "OutOfMemoryError", "IOFailureError", "DataLossError",
    "TruncatedRecordError", "CorruptRecordError", "RecordTooLargeError",
    "TrailingGarbageError", "CompressionError", "ParseError", "NotFoundError", "NoSuchFileError",
    "UnsupportedError", "ImageError", "NetworkError", "StateError", "BigtableError",
    "LibraryNotFoundError", "library_path",
]

# Optional modules: present when the library was built with them.
if _has("tfrec_imagenet_convert"):
    from .imagenet import convert_images
    __all__.append("convert_images")
if _has("tfrec_bt_writer_open"):
    from . import bigtable
    __all__.append("bigtable")
