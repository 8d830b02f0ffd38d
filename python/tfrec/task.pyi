# Type hints for tfrec.task (the runtime module is task.py).
from typing import Literal, NamedTuple, SupportsIndex

TASK_INDEX_ENV: str
TASK_COUNT_ENV: str
MAX_TASKS: int

def task_share(units: int, index: int, count: int) -> tuple[int, int]: ...
def task_from_env() -> tuple[int, int]: ...

class TaskIdentity(NamedTuple):
    index: int  # type: ignore[assignment]  # a field, as at run time (shadows tuple.index)
    count: int  # type: ignore[assignment]  # a field, as at run time (shadows tuple.count)
    # LOCAL_RANK with the torch source, else None
    local_rank: int | None
    # "none", "explicit", "TF_CONFIG", "CLUSTER_SPEC", "torch" or "indexed_job"
    source: str
    task_type: str

def task_identity(index: SupportsIndex | None = ...,
                  count: SupportsIndex | None = ...) -> TaskIdentity: ...
def resolve_shard(shard: tuple[int, int] | Literal["auto"],
                  split_workers: bool = ...) -> tuple[int, int]: ...
