# Type hints for tfrec.imagenet (the runtime module is imagenet.py).
from collections.abc import Callable, Iterable
from os import PathLike
from typing import Any, Literal

_Path = str | bytes | PathLike[str] | PathLike[bytes]
# The run's manifest (docs/imagenet.md): "shards", "labels", counts, ...
_Manifest = dict[str, Any]

def convert_images(raw_data_dir: _Path | None, output_dir: _Path, *,
                   layout: Literal["imagenet", "folders", "csv"] = ...,
                   csv_path: _Path | None = ..., labels_file: _Path | None = ...,
                   validation_labels_file: _Path | None = ...,
                   extensions: str | Iterable[str] | None = ...,
                   train_shards: int | None = ..., validation_shards: int | None = ...,
                   num_threads: int | None = ..., seed: int = ..., shuffle: bool = ...,
                   verify: Literal["header", "fast", "full"] | None = ...,
                   on_error: Literal["stop", "skip"] = ..., quality: int | None = ...,
                   grayscale_to_rgb: bool = ..., compression: str | None = ...,
                   max_inflight_bytes: int | None = ..., manifest_path: _Path | None = ...,
                   progress: Callable[[int, int, int, int], object] | None = ...,
                   max_image_pixels: int | None = ..., flat_output: bool = ...,
                   overwrite: bool = ..., train_tar: _Path | None = ...,
                   validation_tar: _Path | None = ..., task_index: int | None = ...,
                   num_tasks: int | None = ..., listing: _Path | None = ...) -> _Manifest: ...
def merge_manifests(output_dir: _Path, manifest_path: _Path | None = ...) -> _Manifest: ...
