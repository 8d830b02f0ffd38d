# Type hints for tfrec.bigtable (the runtime module is bigtable.py).
from collections.abc import Callable, Iterable, Iterator, Mapping
from os import PathLike
from types import TracebackType
from typing import Any, Generic, Literal, NamedTuple, TypedDict, TypeVar, overload

_Self = TypeVar("_Self")
_Key = str | bytes
_BytesLike = bytes | bytearray | memoryview
_Path = str | PathLike[str]
# credentials_file, ca_bundle_file: any path os.fsencode takes
_AnyPath = str | bytes | PathLike[str] | PathLike[bytes]
# A row range: (start, end), half-open, None or b"" for an open side; or a
# dict with start, end, start_open and end_closed.
_RowRange = tuple[_Key | None, _Key | None] | Mapping[str, Any]
_Plan = SplitPlan | _BytesLike | _Path | Literal["sample"]

class WriterStats(TypedDict):
    rows_put: int
    rows_acked: int
    rows_failed: int
    bytes_acked: int
    requests: int
    retried_entries: int
    stream_failures: int
    splits: int
    acked_prefix: int

class ReadStats(TypedDict):
    rows: int
    bytes: int
    ranges: int
    samples: int
    streams: int
    resumed: int
    paused: int

class LoadProgress(NamedTuple):
    records_read: int
    bytes_read: int
    records_skipped: int
    rows_acked: int
    bytes_acked: int
    rows_failed: int
    next_index: int
    seconds: float
    file: str | None
    done: bool

class FailedRow(NamedTuple):
    key: bytes
    index: int  # type: ignore[assignment]  # a field, as at run time (shadows tuple.index)
    grpc_code: int
    grpc_status: str
    message: str

class Cell(NamedTuple):
    family: str
    qualifier: bytes
    timestamp_micros: int
    value: bytes
    labels: tuple[str, ...] | list[str] = ...

class Row(tuple[bytes, list[Cell]]):
    range: int
    @property
    def key(self) -> bytes: ...
    @property
    def cells(self) -> list[Cell]: ...
    def __new__(cls, key: bytes, cells: list[Cell], range: int = ...) -> Row: ...
    def value(self, family: str = ..., qualifier: _Key = ...) -> bytes | None: ...

def row_key(prefix: _Key, index: int, width: int, reversed_keys: bool = ...) -> bytes: ...
def key_width(num_records: int | None = ...) -> int: ...

class Writer:
    load_stats: dict[str, Any] | None
    table: _Key
    family: _Key
    def __init__(self, project: str | None, instance: str, table: _Key, family: _Key = ...,
                 column: _Key = ..., *, endpoint: str | None = ...,
                 admin_endpoint: str | None = ..., app_profile_id: str | None = ...,
                 create_table: bool = ..., batch_rows: int | None = ...,
                 batch_bytes: int | None = ..., max_inflight: int | None = ...,
                 timestamp_micros: int | None = ..., retry_timeout_ms: int | None = ...,
                 rpc_timeout_ms: int | None = ..., credentials_file: _AnyPath | None = ...,
                 ca_bundle_file: _AnyPath | None = ..., tls: bool = ...,
                 user_project: str | None = ...) -> None: ...
    @property
    def project(self) -> str: ...
    def put(self, key: _Key, value: _BytesLike, column: _Key | None = ...) -> None: ...
    def write_tfrecords(self, pattern: str | bytes | PathLike[str], row_prefix: _Key = ...,
                        num_records: int | None = ..., start_index: int = ...,
                        reversed_keys: bool = ..., compression: str | None = ...,
                        max_rows_per_sec: float | None = ...,
                        progress: Callable[[LoadProgress], object] | None = ...,
                        progress_interval: float | None = ..., task_index: int | None = ...,
                        num_tasks: int | None = ...) -> int: ...
    def flush(self) -> None: ...
    def stats(self) -> WriterStats: ...
    def get_stats(self) -> WriterStats: ...
    def failed_rows(self) -> list[FailedRow]: ...
    def close(self) -> WriterStats | None: ...
    def abandon(self) -> None: ...
    def __del__(self) -> None: ...
    def __enter__(self: _Self) -> _Self: ...
    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None: ...

class SplitPlan:
    def __init__(self, handle: Any) -> None: ...
    @classmethod
    def of(cls, plan: SplitPlan | _BytesLike | _Path) -> SplitPlan: ...
    @classmethod
    def from_bytes(cls, text: _BytesLike) -> SplitPlan: ...
    @classmethod
    def load(cls, path: str | bytes | PathLike[str]) -> SplitPlan: ...
    def save(self, path: str | bytes | PathLike[str]) -> None: ...
    @property
    def text(self) -> bytes: ...
    @property
    def id(self) -> int: ...
    @property
    def num_shards(self) -> int: ...
    @property
    def table(self) -> str: ...
    def shard(self, i: int) -> tuple[bytes, bytes]: ...
    def __reduce__(self) -> tuple[Callable[[bytes], SplitPlan], tuple[bytes]]: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...
    def __del__(self) -> None: ...

def plan(project: str | None, instance: str, table: _Key, num_shards: int, *,
         prefix: _Key | None = ..., start: _Key | None = ..., end: _Key | None = ...,
         ranges: Iterable[_RowRange] | None = ..., split_keys: Iterable[_Key] | None = ...,
         endpoint: str | None = ..., app_profile_id: str | None = ...,
         rpc_timeout_ms: int | None = ..., credentials_file: _AnyPath | None = ...,
         ca_bundle_file: _AnyPath | None = ..., tls: bool = ...,
         user_project: str | None = ...) -> SplitPlan: ...

class Reader:
    def __init__(self, project: str | None, instance: str, table: _Key, *,
                 prefix: _Key | None = ..., start: _Key | None = ..., end: _Key | None = ...,
                 limit: int | None = ..., family: str | None = ..., all_versions: bool = ...,
                 endpoint: str | None = ..., app_profile_id: str | None = ...,
                 rpc_timeout_ms: int | None = ..., credentials_file: _AnyPath | None = ...,
                 ca_bundle_file: _AnyPath | None = ..., tls: bool = ...,
                 user_project: str | None = ...,
                 max_row_bytes: int | None = ...,
                 ranges: Iterable[_RowRange] | None = ..., keys: Iterable[_Key] | None = ...,
                 column: _Key | None = ..., parallel_scans: int = ...,
                 shard: tuple[int, int] | Literal["auto"] | None = ..., ordered: bool = ...,
                 split_keys: Iterable[_Key] | None = ..., retry_timeout: float | None = ...,
                 task_index: int | None = ..., num_tasks: int | None = ...,
                 plan: _Plan | None = ..., shuffle_ranges: int | None = ...,
                 seed: int = ..., epoch: int = ...) -> None: ...
    def __iter__(self: _Self) -> _Self: ...
    def __next__(self) -> Row: ...
    def stats(self) -> ReadStats: ...
    def close(self) -> None: ...
    def __del__(self) -> None: ...
    def __enter__(self: _Self) -> _Self: ...
    def __exit__(self, *exc: object) -> None: ...

# What a Dataset yields: the cell's bytes, or with parse=True its Example's
# dict ({key: [values]}, the values Any as in tfrec.Example.to_dict()).
_D = TypeVar("_D", bound=bytes | dict[str, list[Any]])

class Dataset(Generic[_D]):
    @overload
    def __init__(self: Dataset[bytes], project: str | None, instance: str, table: _Key, *,
                 prefix: _Key = ..., family: str = ..., column: _Key = ...,
                 parse: Literal[False] = ...,
                 shuffle_ranges: int | None = ..., shuffle_buffer: int | None = ...,
                 seed: int = ..., **reader_options: Any) -> None: ...
    @overload
    def __init__(self: Dataset[dict[str, list[Any]]], project: str | None, instance: str,
                 table: _Key, *, prefix: _Key = ..., family: str = ..., column: _Key = ...,
                 parse: Literal[True],
                 shuffle_ranges: int | None = ..., shuffle_buffer: int | None = ...,
                 seed: int = ..., **reader_options: Any) -> None: ...
    @overload
    def __init__(self: Dataset[bytes | dict[str, list[Any]]], project: str | None,
                 instance: str, table: _Key, *, prefix: _Key = ..., family: str = ...,
                 column: _Key = ..., parse: bool = ...,
                 shuffle_ranges: int | None = ..., shuffle_buffer: int | None = ...,
                 seed: int = ..., **reader_options: Any) -> None: ...
    def stats(self) -> ReadStats: ...
    def set_epoch(self, epoch: int) -> None: ...
    def __iter__(self) -> Iterator[_D]: ...

def export_output_name(output: str | bytes | PathLike[str], shard_index: int = ...,
                       num_shards: int = ..., parallel_scans: int = ...,
                       output_shards: bool = ..., i: int = ...) -> str: ...
def export_part_name(output: str | bytes | PathLike[str], shard_index: int = ...,
                     num_shards: int = ...) -> str: ...
def export(project: str | None, instance: str, table: _Key,
           output: str | bytes | PathLike[str], *, prefix: _Key = ..., family: str = ...,
           column: _Key = ..., missing_cell: Literal["error", "skip"] = ...,
           compression: str | None = ..., output_shards: bool = ...,
           keys_output: str | bytes | PathLike[str] | None = ..., part_file: bool = ...,
           endpoint: str | None = ..., app_profile_id: str | None = ...,
           rpc_timeout_ms: int | None = ..., credentials_file: _AnyPath | None = ...,
           ca_bundle_file: _AnyPath | None = ..., tls: bool = ...,
           user_project: str | None = ...,
           **read_options: Any) -> dict[str, Any]: ...
def check_export(parts: str | PathLike[str] | Iterable[str | bytes | PathLike[str]],
                 plan: _Plan | None = ...) -> dict[str, int]: ...
