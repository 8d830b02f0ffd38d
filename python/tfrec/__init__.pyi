# Type hints for the tfrec package (the runtime module is __init__.py).
# bigtable and storage are present when their optional parts are installed.
from . import bigtable as bigtable, storage as storage
from .config import config_names as config_names, get_config as get_config, set_config as set_config
from .dataset import (Dataset as Dataset, MapDataset as MapDataset,
                      RandomAccessReader as RandomAccessReader, count_records as count_records,
                      index_file as index_file, tf_record_iterator as tf_record_iterator)
from .errors import (BigtableError as BigtableError, CompressionError as CompressionError,
                     CorruptRecordError as CorruptRecordError, DataLossError as DataLossError,
                     Error as Error, IOFailureError as IOFailureError, ImageError as ImageError,
                     InvalidArgumentError as InvalidArgumentError, NetworkError as NetworkError,
                     NoSuchFileError as NoSuchFileError, NotFoundError as NotFoundError,
                     OutOfMemoryError as OutOfMemoryError, ParseError as ParseError,
                     RecordTooLargeError as RecordTooLargeError, StateError as StateError,
                     TrailingGarbageError as TrailingGarbageError,
                     TruncatedRecordError as TruncatedRecordError,
                     UnsupportedError as UnsupportedError)
from .example import (BytesList as BytesList, Example as Example, FloatList as FloatList,
                      Int64List as Int64List, parse_example as parse_example,
                      serialize_example as serialize_example)
from .imagenet import convert_images as convert_images, merge_manifests as merge_manifests
from .images import ImagePipeline as ImagePipeline
from .parsing import (FixedLenFeature as FixedLenFeature, VarLenFeature as VarLenFeature,
                      parse_example_batch as parse_example_batch)
from .paths import glob as glob
from .record import (TFRecordReader as TFRecordReader, TFRecordWriter as TFRecordWriter,
                     VerifyResult as VerifyResult, count as count, verify as verify)
from .task import (TaskIdentity as TaskIdentity, task_from_env as task_from_env,
                   task_identity as task_identity, task_share as task_share)

__version__: str
# The path of the libtfrec.so in use.
library_path: str

class LibraryNotFoundError(ImportError): ...
class MissingPartError(LibraryNotFoundError): ...

def parts() -> dict[str, str | None]: ...
def features() -> dict[str, bool]: ...
