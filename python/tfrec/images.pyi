# Type hints for tfrec.images (the runtime module is images.py).
from collections.abc import Iterable, Iterator
from typing import Any, Literal, TypeVar

import numpy as np
from numpy.typing import NDArray

from .dataset import Dataset, _Index, _Path, _Shard

_Self = TypeVar("_Self")
# images uint8 [N, size, size, 3], labels int64 [N]
_Batch = tuple[NDArray[np.uint8], NDArray[np.int64]]

class ImagePipeline(Dataset[Any]):
    size: int
    def __new__(cls: type[_Self], *args: Any, **kwargs: Any) -> _Self: ...
    def __init__(self, files: _Path | Iterable[_Path], size: int = ...,
                 resize: int | None = ..., crop: Literal["center", "random"] = ...,
                 flip: bool = ..., batch_size: int = ..., drop_remainder: bool = ...,
                 skip_corrupt: bool = ..., shuffle: bool = ..., seed: int = ...,
                 shard: _Shard = ..., num_parallel_reads: int = ..., prefetch_bytes: int = ...,
                 block_records: int = ..., index: _Index = ..., use_mmap: bool | None = ...,
                 image_key: str = ..., label_key: str = ...,
                 dct_scaling: bool = ...) -> None: ...
    @property
    def dropped(self) -> int: ...
    def __iter__(self) -> Iterator[_Batch]: ...
    def close(self) -> None: ...

__all__ = ["ImagePipeline"]
