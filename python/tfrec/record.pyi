# Type hints for tfrec.record (the runtime module is record.py).
from collections.abc import Iterable, Iterator
from os import PathLike
from types import TracebackType
from typing import Generic, Literal, NamedTuple, TypedDict, TypeVar, overload

from .errors import Error

_Path = str | bytes | PathLike[str] | PathLike[bytes]
_BytesLike = bytes | bytearray | memoryview
# None, "NONE", "ZLIB", "GZIP" (any case); readers also "auto".
_ReadCompression = str | None
_WriteCompression = str | None
# What iteration yields: bytes, or read-only memoryviews with zero_copy=True.
_Self = TypeVar("_Self")
_R = TypeVar("_R", bound=bytes | memoryview)

class ReaderStats(TypedDict):
    records: int
    bytes: int
    skipped_regions: int
    skipped_bytes: int

class TFRecordReader(Generic[_R]):
    path: _Path
    zero_copy: bool
    @overload
    def __init__(self: TFRecordReader[bytes], path: _Path, compression: _ReadCompression = ...,
                 zero_copy: Literal[False] = ..., skip_corrupt: bool = ...,
                 max_record_size: int | None = ..., use_mmap: bool | None = ...) -> None: ...
    @overload
    def __init__(self: TFRecordReader[memoryview], path: _Path, compression: _ReadCompression,
                 zero_copy: Literal[True], skip_corrupt: bool = ...,
                 max_record_size: int | None = ..., use_mmap: bool | None = ...) -> None: ...
    @overload
    def __init__(self: TFRecordReader[memoryview], path: _Path,
                 compression: _ReadCompression = ..., *, zero_copy: Literal[True],
                 skip_corrupt: bool = ..., max_record_size: int | None = ...,
                 use_mmap: bool | None = ...) -> None: ...
    @overload
    def __init__(self: TFRecordReader[bytes | memoryview], path: _Path,
                 compression: _ReadCompression = ..., zero_copy: bool = ...,
                 skip_corrupt: bool = ..., max_record_size: int | None = ...,
                 use_mmap: bool | None = ...) -> None: ...
    def __iter__(self) -> Iterator[_R]: ...
    def __next__(self) -> _R: ...
    @property
    def compression(self) -> Literal["ZLIB", "GZIP"] | None: ...
    def stats(self) -> ReaderStats: ...
    def close(self) -> None: ...
    def __enter__(self: _Self) -> _Self: ...
    def __exit__(self, *exc: object) -> None: ...

class TFRecordWriter:
    path: _Path
    def __init__(self, path: _Path, compression: _WriteCompression = ..., level: int | None = ...,
                 buffer_size: int | None = ..., write_index: bool = ...) -> None: ...
    def write(self, record: _BytesLike) -> None: ...
    def write_many(self, records: Iterable[_BytesLike]) -> None: ...
    def flush(self) -> None: ...
    @property
    def records(self) -> int: ...
    @property
    def bytes_out(self) -> int: ...
    def close(self) -> None: ...
    def abort(self) -> None: ...
    def __del__(self) -> None: ...
    def __enter__(self) -> TFRecordWriter: ...
    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None: ...

def count(path: _Path, compression: _ReadCompression = ...) -> int: ...

class VerifyResult(NamedTuple):
    ok: bool
    records: int
    bytes: int
    compression: Literal["ZLIB", "GZIP"] | None
    error: Error | None

def verify(path: _Path, compression: _ReadCompression = ...) -> VerifyResult: ...
