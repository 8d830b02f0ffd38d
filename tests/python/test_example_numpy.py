"""numpy values in tfrec.Example take TensorFlow's kinds: integer and bool
dtypes an Int64List, floating ones a FloatList, bytes_/str_ a BytesList (str
as UTF-8); anything else is a TypeError naming the feature. Every value is
checked against Debian's python3-protobuf decoding of the serialized
Example (classes compiled from our proto/)."""
import math
import subprocess
import sys

import pytest

from bindings_env import load_tfrec

np = pytest.importorskip("numpy")

INT64_MAX = 2 ** 63 - 1


@pytest.fixture(scope="module")
def tfrec(build_dir):
    return load_tfrec(build_dir)


def decoded(pb2, data, key="a"):
    """(kind, values) of feature key as protobuf decodes the bytes."""
    f = pb2.Example.FromString(data).features.feature[key]
    kind = f.WhichOneof("kind")
    return kind, list(getattr(f, kind).value)


INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
              np.uint64, np.byte, np.ubyte, np.short, np.ushort, np.intc, np.uintc,
              np.int_, np.uint, np.longlong, np.ulonglong, np.intp, np.uintp]
FLOAT_DTYPES = [np.float16, np.float32, np.float64, np.longdouble, np.half, np.single,
                np.double]


def test_every_numpy_scalar_type_is_covered():
    """The lists above and below name every numeric, text and other type
    numpy has, so a dtype cannot be left out by accident."""
    listed = set(INT_DTYPES + FLOAT_DTYPES + [np.bool_, np.bytes_, np.str_] + OTHER_DTYPES)
    every = set()
    for group in np.sctypes.values():
        every.update(group)
    every -= {bool, bytes, str, object}  # the Python types of sctypes["others"]
    every.update([np.bool_, np.bytes_, np.str_, np.void, np.object_, np.datetime64,
                  np.timedelta64])
    assert every <= listed, every - listed


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda t: np.dtype(t).name)
def test_integer_dtypes_are_int64_lists(tfrec, pb2, dtype):
    info = np.iinfo(dtype)
    hi = min(int(info.max), INT64_MAX)
    vals = [int(info.min), 0, 1, hi] + ([16777217] if hi >= 16777217 else [])
    arr = np.array(vals, dtype=dtype)
    for value in (arr, list(arr), arr.reshape(1, -1)):  # array, list of scalars, 2-d
        ex = tfrec.Example({"a": value})
        assert ex.kind("a") == "int64"
        assert decoded(pb2, ex.serialize()) == ("int64_list", vals)
    # a scalar alone is a list of one
    ex = tfrec.Example({"a": dtype(hi)})
    assert decoded(pb2, ex.serialize()) == ("int64_list", [hi])
    assert decoded(pb2, tfrec.Example({"a": np.array(hi, dtype=dtype)}).serialize()) == (
        "int64_list", [hi])


def test_int64_precision_is_kept(tfrec, pb2):
    # The bug: stored as float32, 16777217 read back as 16777216.0.
    for value in (np.array([16777217]), [np.int64(16777217)], np.int64(16777217)):
        ex = tfrec.Example({"a": value})
        assert tfrec.Example.parse(ex.serialize()).to_dict() == {"a": [16777217]}
    big = np.array([INT64_MAX, -INT64_MAX - 1], dtype=np.int64)
    assert decoded(pb2, tfrec.Example({"a": big}).serialize())[1] == [INT64_MAX, -INT64_MAX - 1]


def test_uint64_above_int64_max_is_refused_not_wrapped(tfrec):
    for value in (np.array([1, 2 ** 63], dtype=np.uint64), np.uint64(2 ** 64 - 1),
                  [np.uint64(2 ** 63)], tfrec.Int64List([np.uint64(2 ** 63)])):
        with pytest.raises(OverflowError, match="'big'"):
            tfrec.Example({"big": value})
    ok = tfrec.Example({"a": np.array([INT64_MAX], dtype=np.uint64)})
    assert ok["a"] == [INT64_MAX]


def test_bool_is_int64(tfrec, pb2):
    for value in (np.array([True, False]), [np.bool_(True), np.bool_(False)]):
        ex = tfrec.Example({"a": value})
        assert decoded(pb2, ex.serialize()) == ("int64_list", [1, 0])
    assert decoded(pb2, tfrec.Example({"a": np.bool_(True)}).serialize()) == ("int64_list", [1])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=lambda t: np.dtype(t).name)
def test_floating_dtypes_are_float_lists(tfrec, pb2, dtype):
    vals = [0.0, -1.5, 0.1, 3.25e4, float("inf")]
    arr = np.array(vals, dtype=dtype)
    want = [float(np.float32(v)) for v in arr]  # stored as 32-bit, as in TensorFlow
    for value in (arr, list(arr), arr.reshape(-1, 1)):
        ex = tfrec.Example({"a": value})
        assert ex.kind("a") == "float"
        kind, got = decoded(pb2, ex.serialize())
        assert kind == "float_list" and got == want
    nan = decoded(pb2, tfrec.Example({"a": dtype("nan")}).serialize())[1]
    assert len(nan) == 1 and math.isnan(nan[0])


def test_float64_out_of_float32_range_is_inf_quietly(tfrec, pb2, recwarn):
    ex = tfrec.Example({"a": np.array([1e300, -1e300])})
    assert decoded(pb2, ex.serialize())[1] == [math.inf, -math.inf]  # as protobuf stores it
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_bytes_and_str_arrays_are_bytes_lists(tfrec, pb2):
    cases = [(np.array([b"a", b"bc", b""]), [b"a", b"bc", b""]),
             (np.array(["a", "é", "日本"]), [b"a", "é".encode(), "日本".encode()]),
             (np.array([[b"x"], [b"y"]]), [b"x", b"y"]),
             ([np.bytes_(b"q"), np.str_("ü")], [b"q", "ü".encode()]),
             (np.array([b"a", "b"], dtype=object), [b"a", b"b"])]
    for value, want in cases:
        ex = tfrec.Example({"a": value})
        assert ex.kind("a") == "bytes"
        assert decoded(pb2, ex.serialize()) == ("bytes_list", want)
    for scalar, want in ((np.bytes_(b"zz"), [b"zz"]), (np.str_("é"), ["é".encode()]),
                         (np.array(b"zz"), [b"zz"])):
        assert decoded(pb2, tfrec.Example({"a": scalar}).serialize()) == ("bytes_list", want)
    assert tfrec.Example({"a": tfrec.BytesList(np.array([b"k"]))})["a"] == [b"k"]


def test_multi_dimensional_arrays_are_flattened_in_c_order(tfrec, pb2):
    a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    assert decoded(pb2, tfrec.Example({"a": a}).serialize())[1] == list(range(24))
    f = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert decoded(pb2, tfrec.Example({"a": f}).serialize())[1] == [0, 1, 2, 3, 4, 5]
    s = np.arange(10, dtype=np.int64)[::3]  # not contiguous
    assert decoded(pb2, tfrec.Example({"a": s}).serialize())[1] == [0, 3, 6, 9]
    empty = tfrec.Example({"i": np.zeros((0, 3), dtype=np.int64),
                           "f": np.zeros(0, dtype=np.float32), "b": np.array([], dtype="S1")})
    assert [empty.kind(k) for k in ("i", "f", "b")] == ["int64", "float", "bytes"]


def test_explicit_lists_take_numpy_values(tfrec, pb2):
    ex = tfrec.Example({"f": tfrec.FloatList(np.array([1, 2])),
                        "i": tfrec.Int64List(np.array([3, 4], dtype=np.uint8))})
    msg = pb2.Example.FromString(ex.serialize()).features.feature
    assert list(msg["f"].float_list.value) == [1.0, 2.0]
    assert list(msg["i"].int64_list.value) == [3, 4]


OTHER_DTYPES = [np.complex64, np.complex128, np.clongdouble, np.csingle, np.cdouble,
                np.datetime64, np.timedelta64, np.void, np.object_]


@pytest.mark.parametrize("value", [
    np.array([1 + 2j]), np.complex64(1), np.clongdouble(1),
    np.array(["2020-01-01"], dtype="datetime64[D]"), np.datetime64("2020-01-01"),
    np.array([1], dtype="timedelta64[s]"), np.timedelta64(1, "s"),
    np.zeros(2, dtype="V4"), np.void(b"ab"),
    np.zeros(1, dtype=[("x", "i4")]),
    np.array([b"a", 1], dtype=object), np.array([1, 2.5], dtype=object),
    np.array([1, None], dtype=object), np.array([[1, 2], [3]], dtype=object),
    [np.complex128(1)], [np.datetime64("2020-01-01")], [np.array([1, 2])],
    [1, np.array([2.0])],
], ids=repr)
def test_other_values_are_type_errors_naming_the_feature(tfrec, value):
    with pytest.raises(TypeError, match="'feat'"):
        tfrec.Example({"feat": value})


def test_object_arrays_of_one_kind(tfrec, pb2):
    assert decoded(pb2, tfrec.Example({"a": np.array([1, 2], dtype=object)}).serialize()) == (
        "int64_list", [1, 2])
    assert decoded(pb2, tfrec.Example({"a": np.array([0.5], dtype=object)}).serialize()) == (
        "float_list", [0.5])


def test_plain_python_values_keep_their_kinds(tfrec, pb2):
    ex = tfrec.Example({"i": [1, True], "f": [1, 2.5], "b": [b"x", "y"], "e": []})
    assert [ex.kind(k) for k in ("i", "f", "b", "e")] == ["int64", "float", "bytes", "bytes"]
    for bad in ([1 + 2j], [b"a", 1], [object()], [None]):
        with pytest.raises(TypeError, match="'k'"):
            tfrec.Example({"k": bad})


def test_no_numpy_import_without_numpy_values(build_dir):
    """Building examples from Python values never imports numpy."""
    code = ("import sys; sys.path.insert(0, %r); from bindings_env import load_tfrec;"
            "t = load_tfrec(%r); t.Example({'a': [1], 'b': [1.5], 'c': [b'x']}).serialize();"
            "assert 'numpy' not in sys.modules, 'numpy imported'" % (
                __import__("os").path.dirname(__file__), build_dir))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
