# Type hints for tfrec.parsing (the runtime module is parsing.py).
from collections.abc import Iterable, Mapping
from typing import Any, Literal, SupportsIndex, overload

import numpy
from numpy.typing import NDArray

_BytesLike = bytes | bytearray | memoryview
# What a spec's dtype may be: "int64", "float32", "string"/"bytes", or a type
# or numpy dtype naming one of them (bytes, str, object, numpy.int64, ...).
_DType = str | type[Any] | numpy.dtype[Any]
# An element of a parsed feature without a spec: bytes, int or float by the
# feature's kind (Any, so that using one does not need an isinstance check).
_Value = Any

# Not a class at run time: the common base of the two specs only here, so
# that a dict mixing them ({"a": FixedLenFeature(...), "b": VarLenFeature(...)})
# is inferred as a spec rather than as dict[str, object].
class _Feature:
    dtype: Literal["string", "int64", "float32"]

class FixedLenFeature(_Feature):
    shape: tuple[int, ...]
    default_value: Any
    def __init__(self, shape: Iterable[SupportsIndex] | None, dtype: _DType,
                 default_value: Any = ...) -> None: ...

class VarLenFeature(_Feature):
    def __init__(self, dtype: _DType) -> None: ...

# A spec: {key: FixedLenFeature | VarLenFeature} (a dict at run time).
_Spec = Mapping[str, _Feature]

@overload
def parse_example(data: _BytesLike, features: None = ...) -> dict[str, list[_Value]]: ...
@overload
def parse_example(data: _BytesLike, features: _Spec) -> dict[str, NDArray[Any]]: ...
def parse_example_batch(records: Iterable[_BytesLike],
                        features: _Spec) -> dict[str, NDArray[Any]]: ...
