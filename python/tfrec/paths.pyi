# Type hints for tfrec.paths (the runtime module is paths.py).
from os import PathLike
from typing import overload

@overload
def glob(pattern: bytes) -> list[bytes]: ...
@overload
def glob(pattern: str | PathLike[str] | PathLike[bytes]) -> list[str]: ...
