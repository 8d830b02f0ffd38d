"""Checks of the arguments that reach C, made before anything is called.

ctypes hands a Python str/bytes to C as a NUL-terminated string, so a path
with a NUL byte in it would silently become the shorter path before the NUL;
and it stores a negative int into a size_t/uint64_t field as a huge number.
Both are refused here with the error Python itself uses (open() raises
ValueError for an embedded NUL).

Data (records, values, keys) goes through data() or key(): bytes(x) would
turn an int into that many zero bytes and a list of ints into bytes, and
both used to reach C that way; only bytes-like objects are taken, as
file.write() takes them.
"""

import operator
import os


def path(p, name="path"):
    """p (str, bytes or os.PathLike) as bytes for C; ValueError if it holds a NUL."""
    b = os.fsencode(p)
    if b"\0" in b:
        raise ValueError("%s contains a NUL byte: %r" % (name, p))
    return b


def optional_path(p, name):
    return None if p is None else path(p, name)


def data(value, name):
    """bytes of a bytes-like object: bytes, bytearray, memoryview or any
    C-contiguous buffer (its raw bytes). TypeError for anything else: a str
    (encode it), an int, a list, a non-contiguous view."""
    if type(value) is bytes:
        return value
    if isinstance(value, str):
        raise TypeError("%s must be a bytes-like object, not str (encode it)" % name)
    try:
        view = memoryview(value)
    except TypeError:
        raise TypeError("%s must be a bytes-like object, not %s"
                        % (name, type(value).__name__)) from None
    with view:
        if not view.c_contiguous:
            raise TypeError("%s must be a contiguous bytes-like object, not a "
                            "non-contiguous %s" % (name, type(value).__name__))
        return view.tobytes()


def key(value, name):
    """A key or name that may be given as str (UTF-8) or as bytes-like data."""
    if isinstance(value, str):
        return value.encode("utf-8")
    try:
        return data(value, name)
    except TypeError:
        raise TypeError("%s must be str or a bytes-like object, not %s"
                        % (name, type(value).__name__)) from None


def optional_key(value, name):
    return None if value is None else key(value, name)


def text(s, name):
    """A name handed to C as a NUL-terminated string (str as UTF-8, or bytes)."""
    if s is None:
        return None
    b = key(s, name)
    if b"\0" in b:
        raise ValueError("%s contains a NUL byte: %r" % (name, s))
    return b


def size(value, name):
    """A size or count: None (the default) or an int >= 0."""
    if value is None:
        return None
    try:
        n = operator.index(value)
    except TypeError:
        raise TypeError("%s must be an int, not %s" % (name, type(value).__name__)) from None
    if n < 0:
        raise ValueError("%s must not be negative, not %d" % (name, n))
    return n


def amount(value, name):
    """A non-negative number that may be fractional (seconds, a rate)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError("%s must be a number, not %s" % (name, type(value).__name__))
    if not value >= 0:  # also refuses NaN
        raise ValueError("%s must not be negative, not %r" % (name, value))
    return value
