"""tf.train.Example as a plain dict, built and parsed by libtfrec's C code.

    ex = tfrec.Example({"image/encoded": [jpeg], "image/class/label": [7],
                        "bbox": [0.1, 0.2]})
    data = ex.serialize()                  # same bytes as the C builder
    tfrec.Example.parse(data).to_dict()    # {"bbox": [0.1..., 0.2...], ...}

A value list's kind follows its elements: bytes (or str, stored as UTF-8) make
a BytesList, ints (and bools) an Int64List, floats (or a mix of ints and floats) a
FloatList; anything else is a TypeError naming the feature. numpy arrays and
scalars go by dtype as in TensorFlow: integers and bool Int64List (uint64
above the int64 maximum: OverflowError), floating FloatList, bytes_/str_
BytesList; n-d arrays are flattened in C order, a 0-d array is a list of one. Wrap a list in BytesList / Int64List / FloatList to choose the
kind explicitly, which an empty list needs (a plain empty list is a
BytesList). Floats are stored as 32-bit, as in TensorFlow.
"""

import numbers
import struct
import sys
import threading
from array import array
from ctypes import byref, c_char, c_size_t, c_void_p, string_at

from . import _args
from . import _constants as C
from ._handles import ExampleBuilderHandle, ExampleHandle, RecordBatchHandle
from ._lib import lib
from .errors import error_for

BYTES, FLOAT, INT64 = C.TFREC_FEATURE_BYTES, C.TFREC_FEATURE_FLOAT, C.TFREC_FEATURE_INT64
_KIND_NAMES = {BYTES: "bytes", FLOAT: "float", INT64: "int64"}


class BytesList(list):
    """A list of byte strings that is a BytesList whatever its contents."""
    kind = BYTES


class FloatList(list):
    """A list of numbers stored as a FloatList (32-bit floats)."""
    kind = FLOAT


class Int64List(list):
    """A list of integers stored as an Int64List."""
    kind = INT64


_WRAPPERS = {BYTES: BytesList, FLOAT: FloatList, INT64: Int64List}
_BYTES_TYPES = (bytes, bytearray, memoryview, str)
_INT64_MAX = (1 << 63) - 1
# numpy dtype.kind to feature kind: integers and bool are Int64Lists, floats
# FloatLists, bytes_ and str_ BytesLists, as TensorFlow stores them.
_NUMPY_KINDS = {"b": INT64, "i": INT64, "u": INT64, "f": FLOAT, "S": BYTES, "U": BYTES}


def _to_bytes(v):
    if type(v) is bytes:
        return v
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, (bytes, bytearray, memoryview)):  # bytes too: numpy.bytes_
        return bytes(v)
    raise TypeError("a BytesList holds bytes or str, not %s" % type(v).__name__)


def _numpy():
    """The numpy module if something imported it (a numpy value can only
    exist then), else None: the package never imports numpy itself."""
    return sys.modules.get("numpy")


def _value_kind(v, np):
    """The kind one element makes (BYTES, INT64 or FLOAT), or None for a
    value no feature holds (complex, None, an array, ...)."""
    if isinstance(v, _BYTES_TYPES):
        return BYTES
    if np is not None and isinstance(v, np.generic):
        return _NUMPY_KINDS.get(v.dtype.kind)
    if isinstance(v, numbers.Integral):  # int, bool
        return INT64
    if isinstance(v, numbers.Real):  # float, Fraction
        return FLOAT
    return None


def _infer(values, np, strict):
    """The kind of a list of values: all bytes/str, all integers, or numbers
    (integers and floats mixed make a FloatList unless strict: an object
    array must hold one kind). TypeError otherwise."""
    kinds = set()
    for v in values:
        k = _value_kind(v, np)
        if k is None:
            raise TypeError("a feature holds bytes, str, integers or floats, not %s"
                            % type(v).__name__)
        kinds.add(k)
    if len(kinds) == 1:
        return kinds.pop()
    if kinds == {INT64, FLOAT} and not strict:
        return FLOAT
    raise TypeError("the values mix %s" % " and ".join(sorted(_KIND_NAMES[k] for k in kinds)))


def _from_numpy(values, kind, np):
    """(kind, values) for a numpy array (any shape, flattened in C order)
    or scalar."""
    a = np.asarray(values)
    dk = a.dtype.kind
    if dk == "O":  # Python objects: each must be of the one kind
        items = a.ravel().tolist()
        return _from_list(items, kind or (_infer(items, np, True) if items else BYTES))
    if kind is None:
        kind = _NUMPY_KINDS.get(dk)
        if kind is None:
            raise TypeError("numpy dtype %s is not a feature type (integers and bool are "
                            "Int64List, floats FloatList, bytes_ and str_ BytesList)" % a.dtype)
    if kind == BYTES:
        if dk not in "SU":
            raise TypeError("a BytesList holds bytes or str, not numpy %s" % a.dtype)
        return kind, [_to_bytes(v) for v in a.ravel().tolist()]
    if dk not in "biuf":
        raise TypeError("numpy dtype %s is not a number" % a.dtype)
    if kind == INT64:
        if dk == "f":
            raise TypeError("an Int64List holds integers, not numpy %s" % a.dtype)
        # (int(): numpy compares uint64 with a Python int as float64)
        if dk == "u" and a.dtype.itemsize == 8 and a.size and int(a.max()) > _INT64_MAX:
            raise OverflowError("%d is above the int64 maximum" % int(a.max()))
        out = array("q")
        out.frombytes(np.ascontiguousarray(a, dtype=np.int64).tobytes())
        return kind, out
    with np.errstate(over="ignore"):  # out of float32 range: inf, as protobuf stores it
        b = np.ascontiguousarray(a, dtype=np.float32)
    out = array("f")
    out.frombytes(b.tobytes())
    return kind, out


def _from_list(values, kind):
    if kind == BYTES:
        return kind, [_to_bytes(v) for v in values]
    if kind == INT64:
        np = _numpy()
        if np is not None and not set(map(type, values)) <= _FAST_INT:
            # numpy.bool_ has no __index__ (deprecated): as an int
            values = [int(v) if isinstance(v, np.bool_) else v for v in values]
        return kind, array("q", values)
    return kind, array("f", values)


def _normalise(key, values):
    """(kind, values) with values a list of bytes or an array('q'/'f')."""
    kind = getattr(values, "kind", None)
    np = _numpy()
    try:
        if np is not None and isinstance(values, (np.ndarray, np.generic)) and not isinstance(
                values, _BYTES_TYPES):  # numpy.bytes_ and str_ are bytes and str
            return _from_numpy(values, kind, np)
        if isinstance(values, array):
            kind = kind or (FLOAT if values.typecode in "fd" else INT64)
        elif isinstance(values, (_BYTES_TYPES, int, float)):
            values = [values]  # a scalar is a list of one
        elif not isinstance(values, (list, tuple)):
            values = list(values)
        if kind is None:
            types = set(map(type, values))
            if not values or types <= _FAST_BYTES:
                kind = BYTES
            elif types <= _FAST_INT:
                kind = INT64
            elif types <= _FAST_NUMBER:
                kind = FLOAT
            else:  # numpy scalars, Fractions, ... or something no feature holds
                kind = _infer(values, np, False)
        elif kind != BYTES and np is not None and any(isinstance(v, np.ndarray) for v in values):
            # array() would take an array of one element as a number
            raise TypeError("a feature holds scalars, not numpy.ndarray")
        return _from_list(values, kind)
    except (TypeError, OverflowError) as e:
        raise type(e)("feature %r: %s" % (key, e)) from None


_FAST_BYTES = {bytes, str}
_FAST_INT = {int, bool}
_FAST_NUMBER = {int, bool, float}


def _key_bytes(key):
    k = key.encode("utf-8", "surrogateescape")
    if b"\0" in k:
        raise ValueError("feature key %r contains a NUL byte" % (key,))
    return k


_local = threading.local()
_HEADER = struct.Struct("<BQ")


def _batch_buffer():
    """One batch buffer per thread for flattening parsed examples."""
    b = getattr(_local, "batch", None)
    if b is None:
        h = RecordBatchHandle()
        rc = lib.tfrec_record_batch_new(byref(h))
        if rc < 0:
            raise error_for(rc)
        b = _local.batch = _Owned(h, lib.tfrec_record_batch_free)
    return b.h


def _builder():
    """One C builder per thread, reused (reset) for every serialization."""
    b = getattr(_local, "builder", None)
    if b is None:
        h = ExampleBuilderHandle()
        rc = lib.tfrec_example_builder_new(byref(h))
        if rc < 0:
            raise error_for(rc)
        b = _local.builder = _Owned(h, lib.tfrec_example_builder_free)
    return b.h


class _Owned:
    """A C handle freed with its free function when the owner goes away."""
    __slots__ = ("h", "free")

    def __init__(self, h, free):
        self.h = h
        self.free = free

    def __del__(self):
        try:
            self.free(self.h)
        except Exception:  # interpreter shutdown may have torn ctypes down
            pass


class Example:
    """A tf.train.Example: an ordered mapping of feature key to value list."""

    __slots__ = ("_features",)

    def __init__(self, features=None):
        self._features = {}
        if features:
            for key, values in features.items():
                self[key] = values

    @classmethod
    def from_dict(cls, d):
        return cls(d)

    def __setitem__(self, key, values):
        if isinstance(key, bytes):
            key = key.decode("utf-8", "surrogateescape")
        elif not isinstance(key, str):
            raise TypeError("feature keys are str (or UTF-8 bytes), not %s" % type(key).__name__)
        self._features[key] = _normalise(key, values)

    def __getitem__(self, key):
        kind, values = self._features[key]
        return _WRAPPERS[kind](values if kind == BYTES else values.tolist())

    def __delitem__(self, key):
        del self._features[key]

    def __contains__(self, key):
        return key in self._features

    def __iter__(self):
        return iter(self._features)

    def __len__(self):
        return len(self._features)

    def keys(self):
        return self._features.keys()

    def kind(self, key):
        """"bytes", "int64" or "float"."""
        return _KIND_NAMES[self._features[key][0]]

    def to_dict(self, typed=False):
        """{key: list}; with typed=True the lists are BytesList / Int64List /
        FloatList, so from_dict(to_dict(typed=True)) keeps empty lists' kinds."""
        out = {}
        for key, (kind, values) in self._features.items():
            v = values if kind == BYTES else values.tolist()
            out[key] = _WRAPPERS[kind](v) if typed else list(v)
        return out

    def __eq__(self, other):
        if not isinstance(other, Example):
            return NotImplemented
        return self.to_dict(typed=True) == other.to_dict(typed=True) and all(
            self.kind(k) == other.kind(k) for k in self._features)

    def __repr__(self):
        return "Example(%r)" % (self.to_dict(),)

    # -- C builder
    def serialize(self):
        """Serialized bytes, deterministic: keys sorted, numeric lists packed."""
        b = _builder()
        lib.tfrec_example_builder_reset(b)
        add_bytes = lib.tfrec_example_add_bytes
        for key, (kind, values) in self._features.items():
            k = _key_bytes(key)
            if not values:
                rc = lib.tfrec_example_add_empty(b, k, kind)
            elif kind == BYTES:
                rc = 0
                for v in values:
                    rc = add_bytes(b, k, v, len(v))
                    if rc < 0:
                        break
            elif kind == INT64:
                rc = lib.tfrec_example_add_int64_list(b, k, values.buffer_info()[0], len(values))
            else:
                rc = lib.tfrec_example_add_float_list(b, k, values.buffer_info()[0], len(values))
            if rc < 0:
                raise error_for(rc, lib.tfrec_example_builder_errmsg(b))
        out, n = c_void_p(), c_size_t()
        rc = lib.tfrec_example_serialize_alloc(b, byref(out), byref(n))
        if rc < 0:
            raise error_for(rc, lib.tfrec_example_builder_errmsg(b))
        try:
            return string_at(out.value, n.value) if n.value else b""
        finally:
            lib.tfrec_free(out)

    # -- C parser
    @classmethod
    def parse(cls, data):
        """Parse serialized bytes, or any bytes-like object (raises
        tfrec.ParseError if malformed, TypeError for anything else)."""
        data = _args.data(data, "Example.parse() data")
        h = ExampleHandle()
        rc = lib.tfrec_example_parse(byref(h), data, len(data))
        if rc < 0:
            raise error_for(rc)
        try:
            return cls._from_parsed(h)
        finally:
            lib.tfrec_example_free(h)

    @classmethod
    def _from_parsed(cls, h):
        # One call flattens the whole example into a batch buffer (see
        # tfrec_example_to_batch): key, header, values ... per feature.
        buf = _batch_buffer()
        rc = lib.tfrec_example_to_batch(h, buf)
        if rc < 0:
            raise error_for(rc)
        n = lib.tfrec_record_batch_count(buf)
        ex = cls()
        if not n:
            return ex
        ends = array("Q")
        ends.frombytes(string_at(lib.tfrec_record_batch_ends(buf), 8 * n))
        starts = ends[:-1]
        starts.insert(0, 0)
        total = ends[-1]
        if total:  # slices of a c_char array over the buffer are bytes copies
            data = (c_char * total).from_address(lib.tfrec_record_batch_data(buf))
        else:
            data = b""
        items = list(map(data.__getitem__, map(slice, starts, ends)))
        feats = ex._features
        i = 0
        while i < n:
            kind, count = _HEADER.unpack(items[i + 1])
            key = items[i].decode("utf-8", "surrogateescape")
            if kind == BYTES:
                values = items[i + 2:i + 2 + count]
                i += 2 + count
            elif kind in (INT64, FLOAT):
                values = array("q" if kind == INT64 else "f")
                values.frombytes(items[i + 2])
                i += 3
            else:
                # A Feature with no kind set: keep it, as an empty BytesList.
                kind, values = BYTES, []
                i += 2
            feats[key] = (kind, values)
        return ex


def parse_example(data, features=None):
    """Serialized tf.Example to {key: list of bytes | int | float}; with a
    spec (features={key: FixedLenFeature | VarLenFeature}) to {key: numpy
    array} as tf.io.parse_single_example (see parsing.py)."""
    if features is None:
        return Example.parse(data).to_dict()
    from .parsing import parse_example as parse_with_spec
    return parse_with_spec(data, features)


def serialize_example(features):
    """{key: list} to serialized tf.Example bytes."""
    return Example(features).serialize()


__all__ = ["Example", "BytesList", "FloatList", "Int64List", "parse_example",
           "serialize_example"]
