# Type hints for tfrec.dataset (the runtime module is dataset.py).
from collections.abc import Iterable, Iterator
from os import PathLike
from typing import Any, Generic, Literal, SupportsIndex, TypeVar, overload

from numpy.typing import NDArray

from .parsing import _Spec

_Path = str | bytes | PathLike[str] | PathLike[bytes]
# An element of a parsed feature: bytes, int or float by the feature's kind
# (Any, so that using one does not need an isinstance check).
_Value = Any
_Self = TypeVar("_Self")
_Dict = dict[str, list[_Value]]
# features= gives {key: numpy array} (with batch_size: arrays of B rows).
_Arrays = dict[str, NDArray[Any]]
# What iteration yields: bytes, or with parse=True an Example's dict, or
# with features= a dict of arrays; with batch_size, lists of those (of
# dicts of arrays: one dict of batched arrays).
_T = TypeVar("_T", bound=bytes | _Dict | _Arrays | list[bytes] | list[_Dict])
_M = TypeVar("_M", bound=bytes | _Dict | _Arrays)
_Shard = tuple[int, int] | Literal["auto"]
# None, "" or "NONE" (indexed reading), "GZIP", "ZLIB" (any case)
_Compression = str | None
_Index = Literal["auto", "require", "scan"]

def index_file(path: _Path) -> int: ...
def count_records(path: _Path) -> tuple[int, bool]: ...

class RandomAccessReader:
    path: str | bytes  # os.fspath(path)
    def __init__(self, path: _Path) -> None: ...
    def __len__(self) -> int: ...
    def __getitem__(self, k: int) -> bytes: ...
    def close(self) -> None: ...
    def __del__(self) -> None: ...
    def __enter__(self: _Self) -> _Self: ...
    def __exit__(self, *exc: object) -> None: ...

class Dataset(Generic[_T]):
    files: list[str]
    parse: bool
    features: _Spec | None
    batch_size: int | None
    drop_remainder: bool
    def __new__(cls: type[_Self], *args: Any, **kwargs: Any) -> _Self: ...
    # The element type follows parse, features and batch_size; a required
    # argument of an overload is keyword-only, the last overload takes all.
    @overload
    def __init__(self: Dataset[bytes], files: _Path | Iterable[_Path], shuffle: bool = ...,
                 seed: int = ..., shard: _Shard = ..., num_parallel_reads: int = ...,
                 parse: Literal[False] = ..., prefetch_bytes: int = ...,
                 block_records: int = ..., index: _Index = ...,
                 max_record_size: int | None = ..., use_mmap: bool | None = ...,
                 compression_type: _Compression = ..., batch_size: None = ...,
                 drop_remainder: bool = ..., features: None = ..., shuffle_block: int = ...,
                 shuffle_buffer: int = ...) -> None: ...
    @overload
    def __init__(self: Dataset[_Arrays], files: _Path | Iterable[_Path], shuffle: bool = ...,
                 seed: int = ..., shard: _Shard = ..., num_parallel_reads: int = ...,
                 parse: Literal[False] = ..., prefetch_bytes: int = ...,
                 block_records: int = ..., index: _Index = ...,
                 max_record_size: int | None = ..., use_mmap: bool | None = ...,
                 compression_type: _Compression = ..., batch_size: int | None = ...,
                 drop_remainder: bool = ..., *, features: _Spec, shuffle_block: int = ...,
                 shuffle_buffer: int = ...) -> None: ...
    @overload
    def __init__(self: Dataset[_Dict], files: _Path | Iterable[_Path], shuffle: bool = ...,
                 seed: int = ..., shard: _Shard = ..., num_parallel_reads: int = ..., *,
                 parse: Literal[True], prefetch_bytes: int = ..., block_records: int = ...,
                 index: _Index = ..., max_record_size: int | None = ...,
                 use_mmap: bool | None = ..., compression_type: _Compression = ...,
                 batch_size: None = ..., drop_remainder: bool = ..., features: None = ...,
                 shuffle_block: int = ..., shuffle_buffer: int = ...) -> None: ...
    @overload
    def __init__(self: Dataset[list[bytes]], files: _Path | Iterable[_Path],
                 shuffle: bool = ..., seed: int = ..., shard: _Shard = ...,
                 num_parallel_reads: int = ..., parse: Literal[False] = ...,
                 prefetch_bytes: int = ..., block_records: int = ..., index: _Index = ...,
                 max_record_size: int | None = ..., use_mmap: bool | None = ...,
                 compression_type: _Compression = ..., *, batch_size: int,
                 drop_remainder: bool = ..., features: None = ..., shuffle_block: int = ...,
                 shuffle_buffer: int = ...) -> None: ...
    @overload
    def __init__(self: Dataset[list[_Dict]], files: _Path | Iterable[_Path],
                 shuffle: bool = ..., seed: int = ..., shard: _Shard = ...,
                 num_parallel_reads: int = ..., *, parse: Literal[True],
                 prefetch_bytes: int = ..., block_records: int = ..., index: _Index = ...,
                 max_record_size: int | None = ..., use_mmap: bool | None = ...,
                 compression_type: _Compression = ..., batch_size: int,
                 drop_remainder: bool = ..., features: None = ..., shuffle_block: int = ...,
                 shuffle_buffer: int = ...) -> None: ...
    @overload
    def __init__(self: Dataset[bytes | _Dict | _Arrays | list[bytes] | list[_Dict]],
                 files: _Path | Iterable[_Path], shuffle: bool = ..., seed: int = ...,
                 shard: _Shard = ..., num_parallel_reads: int = ..., parse: bool = ...,
                 prefetch_bytes: int = ..., block_records: int = ..., index: _Index = ...,
                 max_record_size: int | None = ..., use_mmap: bool | None = ...,
                 compression_type: _Compression = ..., batch_size: int | None = ...,
                 drop_remainder: bool = ..., features: _Spec | None = ...,
                 shuffle_block: int = ..., shuffle_buffer: int = ...) -> None: ...
    def __len__(self) -> int: ...
    @property
    def total_records(self) -> int: ...
    def set_epoch(self, epoch: int) -> None: ...
    def __iter__(self) -> Iterator[_T]: ...
    def close(self) -> None: ...
    def __del__(self) -> None: ...
    def __enter__(self: _Self) -> _Self: ...
    def __exit__(self, *exc: object) -> None: ...

def tf_record_iterator(path: _Path, compression_type: _Compression = ...) -> Iterator[bytes]: ...

class MapDataset(Generic[_M]):
    files: list[str]
    parse: bool
    features: _Spec | None
    @overload
    def __init__(self: MapDataset[bytes], files: _Path | Iterable[_Path],
                 parse: Literal[False] = ..., features: None = ...) -> None: ...
    @overload
    def __init__(self: MapDataset[_Dict], files: _Path | Iterable[_Path],
                 parse: Literal[True], features: None = ...) -> None: ...
    @overload
    def __init__(self: MapDataset[_Arrays], files: _Path | Iterable[_Path],
                 parse: Literal[False] = ..., *, features: _Spec) -> None: ...
    @overload
    def __init__(self: MapDataset[bytes | _Dict | _Arrays], files: _Path | Iterable[_Path],
                 parse: bool = ..., features: _Spec | None = ...) -> None: ...
    def __getstate__(self) -> dict[str, Any]: ...
    def __setstate__(self, state: dict[str, Any]) -> None: ...
    def __len__(self) -> int: ...
    def __getitem__(self, k: SupportsIndex) -> _M: ...
    def close(self) -> None: ...
