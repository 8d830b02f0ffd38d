"""Typed handles: every C handle has its own ctypes type, so a handle of the
wrong kind raises TypeError before C is called, and closed objects raise
ValueError instead of passing NULL to C."""
import ctypes
from ctypes import byref, c_size_t, c_void_p

import pytest

import tfrecord_ref
from bindings_env import load_tfrec


@pytest.fixture(scope="module")
def tfrec(build_dir):
    return load_tfrec(build_dir)


@pytest.fixture(scope="module")
def lib(tfrec):
    from tfrec._lib import lib
    return lib


@pytest.fixture(scope="module")
def handles(tfrec):
    from tfrec import _handles
    return _handles


def test_writer_handle_where_a_reader_is_expected(tfrec, lib, handles, tmp_path):
    w = handles.WriterHandle()
    assert lib.tfrec_writer_open(byref(w), str(tmp_path / "w").encode(), None) == 0
    try:
        p, n = c_void_p(), c_size_t()
        with pytest.raises(TypeError, match=r"tfrec_reader_next\(\) argument 1 must be "
                                            r"ReaderHandle \(tfrec_reader \*\), not WriterHandle"):
            lib.tfrec_reader_next(w, byref(p), byref(n))
        # a plain pointer is no handle either
        with pytest.raises(TypeError):
            lib.tfrec_writer_flush(c_void_p(w.value))
        # an out-parameter of the wrong kind
        r = handles.ReaderHandle()
        with pytest.raises(TypeError, match="pointer to ReaderHandle"):
            lib.tfrec_reader_open(byref(w), b"x", None)
        with pytest.raises(TypeError):
            lib.tfrec_writer_open(byref(r), b"x", None)
        assert r.value is None  # C was never called
        # the right handle still works
        assert lib.tfrec_writer_write(w, b"rec", 3) == 0
        assert lib.tfrec_writer_records(w) == 1
        assert lib.tfrec_writer_close(w) == 0
    finally:
        lib.tfrec_writer_free(w)
    assert tfrecord_ref.read_records(str(tmp_path / "w")) == [b"rec"]


def test_every_prototype_refuses_other_handles(lib, handles):
    """Each handle argument of each declared function, given every other
    handle type, raises TypeError; conversion fails before C is called."""
    kinds = [h for h in vars(handles).values()
             if isinstance(h, type) and issubclass(h, handles.Handle) and h is not handles.Handle]
    checked = 0
    for name, fn in sorted(handles.PROTOTYPES.items()):
        assert vars(lib).get(name, fn) is fn  # the package calls what was recorded
        raw = getattr(fn, "__wrapped__", fn)
        for i, t in enumerate(raw.argtypes):
            want, depth = handles.handle_type(t)
            if want is None:
                continue
            for other in kinds:
                if other is want:
                    continue
                args = [a() for a in raw.argtypes]  # NULLs and zeros of the right types
                args[i] = other() if depth == 0 else byref(other())
                with pytest.raises(TypeError, match=want.__name__):
                    fn(*args)
                checked += 1
    assert checked >= 40 * (len(kinds) - 1)


def test_argument_errors_other_than_handles_stay_ctypes_errors(lib, handles):
    with pytest.raises(ctypes.ArgumentError):
        lib.tfrec_reader_seek(handles.ReaderHandle(), "not a number")


def test_closed_reader_and_writer_raise_value_error(tfrec, tmp_path):
    p = tmp_path / "c"
    with tfrec.TFRecordWriter(p) as w:
        w.write(b"a")
    for call in (lambda: w.write(b"x"), lambda: w.write(b"x" * 100000),
                 lambda: w.write_many([b"x"]), w.flush):
        with pytest.raises(ValueError, match="TFRecordWriter is closed"):
            call()
    assert (w.records, w.bytes_out) == (1, 17)
    w.close()  # closing twice is fine

    r = tfrec.TFRecordReader(p)
    r.close()
    for call in (lambda: next(r), lambda: iter(r), r.stats, lambda: r.compression):
        with pytest.raises(ValueError, match="TFRecordReader is closed"):
            call()
    r.close()


def test_failed_close_keeps_counts(tfrec, tmp_path):
    d = tmp_path / "gone"
    d.mkdir()
    w = tfrec.TFRecordWriter(d / "f")
    w.write(b"abc")
    d.joinpath(next(iter(d.iterdir())).name).unlink()  # the temporary file
    d.rmdir()
    with pytest.raises(tfrec.Error):
        w.close()
    assert w.records == 1
    with pytest.raises(ValueError):
        w.write(b"more")
