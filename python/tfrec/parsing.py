"""Parsing tf.Examples with a feature spec, as tf.io.parse_single_example and
tf.io.parse_example do, into numpy arrays:

    spec = {"label": tfrec.FixedLenFeature([], "int64", default_value=-1),
            "image": tfrec.FixedLenFeature([], "string"),
            "boxes": tfrec.VarLenFeature("float32")}
    one = tfrec.parse_example(record, spec)            # {"label": array(3), ...}
    many = tfrec.parse_example_batch(records, spec)    # {"label": array([3, 1, ...]), ...}

A FixedLenFeature of shape S gives an array of shape S (a batch: [N] + S);
a missing one takes default_value, or raises when there is none. A
VarLenFeature gives a 1-D array (a batch: [N, longest], shorter rows padded
with 0 or b""; TensorFlow gives a SparseTensor there). Strings are numpy
object arrays of bytes. A batch is parsed by one library call
(tfrec_examples_to_batch). Errors name the feature.
"""

import struct
from array import array
from ctypes import POINTER, c_char, c_char_p, c_int, c_size_t, c_void_p, cast, string_at

from . import _constants as C
from ._lib import _proto, lib
from .errors import InvalidArgumentError, error_for

_proto("tfrec_examples_to_batch", c_int, POINTER(c_void_p), POINTER(c_size_t), c_size_t,
       c_void_p)

_BYTES, _INT64, _FLOAT = C.TFREC_FEATURE_BYTES, C.TFREC_FEATURE_INT64, C.TFREC_FEATURE_FLOAT
_HEADER = struct.Struct("<BQ")
_COUNT = struct.Struct("<Q")
_KINDS = {"string": _BYTES, "int64": _INT64, "float32": _FLOAT}
_KIND_NAMES = {_BYTES: "bytes", _INT64: "int64", _FLOAT: "float"}


def _np():
    import numpy
    return numpy


def _dtype_name(dtype):
    """"string", "int64" or "float32" from what tf.io specs accept here."""
    if dtype in (bytes, str, "string", "bytes", object):
        return "string"
    np = _np()
    try:
        d = np.dtype(dtype)
    except TypeError:
        d = None
    if d is not None and d == np.int64:
        return "int64"
    if d is not None and d == np.float32:
        return "float32"
    if d is not None and d.kind in "OSU":
        return "string"
    raise ValueError("dtype must be int64, float32 or string (bytes), not %r" % (dtype,))


class FixedLenFeature:
    """A feature with exactly prod(shape) values, as an array of shape."""

    def __init__(self, shape, dtype, default_value=None):
        self.shape = tuple(int(d) for d in ([] if shape is None else shape))
        if any(d < 0 for d in self.shape):
            raise ValueError("FixedLenFeature shape %r: dimensions must be known" % (shape,))
        self.dtype = _dtype_name(dtype)
        self.default_value = default_value

    def __repr__(self):
        return "FixedLenFeature(%r, %r, default_value=%r)" % (self.shape, self.dtype,
                                                             self.default_value)


class VarLenFeature:
    """A feature with any number of values, as a 1-D array."""

    def __init__(self, dtype):
        self.dtype = _dtype_name(dtype)

    def __repr__(self):
        return "VarLenFeature(%r)" % (self.dtype,)


def _np_dtype(name):
    np = _np()
    return {"string": object, "int64": np.int64, "float32": np.float32}[name]


def _values_array(key, spec, found):
    """The values of one feature of one record (found: (kind, values) or
    None) as a 1-D array of spec's dtype, or None when it is missing."""
    np = _np()
    if found is None:
        return None
    kind, values = found
    want = _KINDS[spec.dtype]
    if kind != want and len(values):
        raise InvalidArgumentError("feature %r: the record holds %s values, the spec wants %s"
                                   % (key, _KIND_NAMES.get(kind, "no"), spec.dtype))
    if want == _BYTES:
        out = np.empty(len(values), dtype=object)
        out[:] = list(values)
        return out
    return np.frombuffer(values, dtype=np.int64 if want == _INT64 else np.float32) \
        if len(values) else np.zeros(0, dtype=_np_dtype(spec.dtype))


def _fixed(key, spec, vals):
    np = _np()
    size = int(np.prod(spec.shape)) if spec.shape else 1
    if vals is None:
        if spec.default_value is None:
            raise InvalidArgumentError("feature %r is missing and its FixedLenFeature has no "
                                       "default_value" % (key,))
        d = np.asarray(spec.default_value, dtype=_np_dtype(spec.dtype))
        try:
            return np.broadcast_to(d, spec.shape).copy()
        except ValueError:
            raise InvalidArgumentError("feature %r: default_value of shape %r does not fit "
                                       "shape %r" % (key, d.shape, spec.shape)) from None
    if len(vals) != size:
        raise InvalidArgumentError("feature %r: %d values, but FixedLenFeature%r needs %d"
                                   % (key, len(vals), (spec.shape,), size))
    return vals.reshape(spec.shape).copy()


def _check_spec(features):
    if not isinstance(features, dict) or not features:
        raise TypeError("features must be a non-empty dict of FixedLenFeature / VarLenFeature")
    for key, spec in features.items():
        if not isinstance(spec, (FixedLenFeature, VarLenFeature)):
            raise TypeError("feature %r: spec must be FixedLenFeature or VarLenFeature, not %s"
                            % (key, type(spec).__name__))


def _walk(buf, n_records):
    """Yield {key: (kind, values)} per record from a tfrec_examples_to_batch
    batch buffer."""
    n = lib.tfrec_record_batch_count(buf)
    if not n:
        return
    ends = array("Q")
    ends.frombytes(string_at(lib.tfrec_record_batch_ends(buf), 8 * n))
    starts = ends[:-1]
    starts.insert(0, 0)
    total = ends[-1]
    data = (c_char * total).from_address(lib.tfrec_record_batch_data(buf)) if total else b""
    items = list(map(data.__getitem__, map(slice, starts, ends)))
    i = 0
    for _ in range(n_records):
        (nfeat,) = _COUNT.unpack(items[i])
        i += 1
        rec = {}
        for _ in range(nfeat):
            key = items[i].decode("utf-8", "surrogateescape")
            kind, count = _HEADER.unpack(items[i + 1])
            if kind == _BYTES:
                values = items[i + 2:i + 2 + count]
                i += 2 + count
            elif kind in (_INT64, _FLOAT):
                values = items[i + 2]
                i += 3
            else:
                kind, values = _BYTES, []
                i += 2
            rec[key] = (kind, values)
        yield rec


def _parse_all(records):
    """[{key: (kind, values)}] for a list of serialized Examples, by one call."""
    from .example import _batch_buffer
    from ._args import data as _data
    records = [_data(r, "record") for r in records]
    n = len(records)
    ptrs = (c_char_p * max(1, n))(*records)
    lens = (c_size_t * max(1, n))(*[len(r) for r in records])
    buf = _batch_buffer()
    rc = lib.tfrec_examples_to_batch(cast(ptrs, POINTER(c_void_p)), lens, n, buf)
    if rc < 0:
        raise error_for(rc)
    return list(_walk(buf, n))


def parse_example(data, features=None):
    """One serialized tf.Example. Without features: {key: list of values}
    (Example.parse(data).to_dict()). With a spec dict (FixedLenFeature,
    VarLenFeature): {key: numpy array} as tf.io.parse_single_example."""
    if features is None:
        from .example import Example
        return Example.parse(data).to_dict()
    return {k: v[0] for k, v in parse_example_batch([data], features).items()}


def parse_example_batch(records, features):
    """N serialized tf.Examples parsed in one library call into dense
    arrays: a FixedLenFeature of shape S gives [N] + S, a VarLenFeature
    [N, longest] padded with 0 or b"" (as tf.sparse.to_dense would)."""
    _check_spec(features)
    np = _np()
    parsed = _parse_all(list(records))
    out = {}
    for key, spec in features.items():
        rows = [_values_array(key, spec, rec.get(key)) for rec in parsed]
        if isinstance(spec, FixedLenFeature):
            arr = np.empty((len(rows),) + spec.shape, dtype=_np_dtype(spec.dtype))
            for r, vals in enumerate(rows):
                arr[r] = _fixed(key, spec, vals)
        else:
            width = max([len(v) for v in rows if v is not None] or [0])
            if spec.dtype == "string":
                arr = np.full((len(rows), width), b"", dtype=object)
            else:
                arr = np.zeros((len(rows), width), dtype=_np_dtype(spec.dtype))
            for r, vals in enumerate(rows):
                if vals is not None and len(vals):
                    arr[r, :len(vals)] = vals
        out[key] = arr
    return out


__all__ = ["FixedLenFeature", "VarLenFeature", "parse_example", "parse_example_batch"]
