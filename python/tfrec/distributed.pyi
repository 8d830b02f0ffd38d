# Type hints for tfrec.distributed (the runtime module is distributed.py).
# client is a dask.distributed.Client (not a dependency of the package).
from collections.abc import Callable, Iterable, Sequence
from os import PathLike
from typing import Any

_Path = str | bytes | PathLike[str] | PathLike[bytes]
_Key = str | bytes
_OnStart = Callable[[str, int, int], object]
_OnProgress = Callable[[str, int, int, int, int], object]

TASKS_PER_THREAD: int

class TaskFailedError(RuntimeError):
    kind: str
    task_index: int
    num_tasks: int
    key: Any
    cause: BaseException
    def __init__(self, kind: str, task_index: int, num_tasks: int, key: Any,
                 cause: BaseException) -> None: ...

def default_num_tasks(client: Any, limit: int | None = ...) -> int: ...
def convert_task(raw_data_dir: _Path | None, output_dir: _Path, opts: dict[str, Any],
                 on_task_start: _OnStart | None, on_task_progress: _OnProgress | None,
                 index: int, count: int) -> dict[str, Any]: ...
def merge_task(output_dir: _Path, manifest_path: _Path | None) -> dict[str, Any]: ...
def convert_images(client: Any, raw_data_dir: _Path | None, output_dir: _Path, *,
                   num_tasks: int | None = ..., retries: int = ..., progress: bool = ...,
                   manifest_path: _Path | None = ..., on_task_start: _OnStart | None = ...,
                   on_task_progress: _OnProgress | None = ..., listing: _Path | None = ...,
                   **opts: Any) -> dict[str, Any]: ...
def ensure_table_task(project: str | None, instance: str, table: _Key,
                      table_opts: dict[str, Any]) -> bool: ...
def load_task(project: str | None, instance: str, table: _Key, source_glob: str,
              row_prefix: _Key, num_records: int | None, load_opts: dict[str, Any],
              writer_opts: dict[str, Any], on_task_start: _OnStart | None,
              on_task_progress: _OnProgress | None, index: int,
              count: int) -> dict[str, Any]: ...
def load_bigtable(client: Any, project: str | None, instance: str, table: _Key,
                  source_glob: str, *, num_tasks: int | None = ..., row_prefix: _Key = ...,
                  num_records: int | None = ..., retries: int = ..., progress: bool = ...,
                  create_table: bool = ..., on_task_start: _OnStart | None = ...,
                  on_task_progress: _OnProgress | None = ...,
                  **writer_opts: Any) -> dict[str, Any]: ...
def export_split_keys(prefix: _Key, num_records: int, num_tasks: int,
                      reversed_keys: bool = ...) -> list[bytes]: ...
def export_task(project: str | None, instance: str, table: _Key, output_prefix: _Path,
                read_opts: dict[str, Any], family: str, column: _Key,
                compression: str | None, on_task_start: _OnStart | None, index: int,
                count: int) -> dict[str, Any]: ...
def check_task(parts: Iterable[_Path], plan_text: bytes) -> dict[str, int]: ...
def export_bigtable(client: Any, project: str | None, instance: str, table: _Key,
                    output_prefix: _Path, *, num_tasks: int | None = ..., prefix: _Key = ...,
                    num_records: int | None = ..., split_keys: Iterable[_Key] | None = ...,
                    family: str = ..., column: _Key = ..., compression: str | None = ...,
                    retries: int = ..., progress: bool = ...,
                    on_task_start: _OnStart | None = ...,
                    missing_cell: str = ..., check: bool = ...,
                    **read_opts: Any) -> list[str]: ...
def main(argv: Sequence[str] | None = ...) -> int: ...
