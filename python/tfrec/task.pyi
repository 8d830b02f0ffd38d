# Type hints for tfrec.task (the runtime module is task.py).
TASK_INDEX_ENV: str
TASK_COUNT_ENV: str
MAX_TASKS: int

def task_share(units: int, index: int, count: int) -> tuple[int, int]: ...
def task_from_env() -> tuple[int, int]: ...
