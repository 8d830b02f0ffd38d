"""tfrec.glob(): the files a pattern names, in the order the tools read them.

Every pattern goes to the library's file system layer (include/tfrec/fs.h):
local paths, gs:// (listed through libtfrec-storage; MissingPartError
without it), mem:// and any other registered scheme alike. Matches are
sorted bytewise, not by the locale, and "*" does not cross "/", so a
pattern names the same files in the same order as `tfrec count 'PATTERN'`
and `tfrec2bt --source_glob`.
"""

import os
from ctypes import CFUNCTYPE, POINTER, c_char_p, c_int, c_size_t, c_void_p

from . import _args
from . import _constants as C
from ._lib import _proto, lib
from .errors import error_for

_LIST_FN = CFUNCTYPE(c_int, c_void_p, c_char_p, c_void_p)
_proto("tfrec_fs_list", c_int, c_void_p, c_char_p, _LIST_FN, c_void_p)
_proto("tfrec_fs_scheme_length", c_size_t, c_char_p)
_proto("tfrec_index_beside_match", c_int, c_char_p, POINTER(c_char_p), c_size_t)


def _is_local(name):
    """True for a name of the local file system as the library routes it:
    no scheme ("-", a path)."""
    return lib.tfrec_fs_scheme_length(_args.path(name, "name")) == 0


def glob(pattern):
    """Sorted names matching pattern (str, bytes or os.PathLike; * ? and
    [...]); a name without them is returned if it exists; [] when nothing
    matches."""
    b = _args.path(pattern, "pattern")
    names = []

    def add(ctx, name, info):
        names.append(name)
        return 0

    rc = lib.tfrec_fs_list(None, b, _LIST_FN(add), None)
    if rc == C.TFREC_E_NOT_FOUND:
        return []
    if rc < 0:
        raise error_for(rc)
    return names if isinstance(pattern, bytes) else [os.fsdecode(n) for n in names]


def data_glob(pattern):
    """glob(pattern) less each match NAME.idx whose NAME matched too (that
    file's index, not data): the files the tools read for the pattern."""
    names = glob(pattern)
    raw = [_args.path(n, "name") for n in names]
    arr = (c_char_p * len(raw))(*raw)
    return [n for n, b in zip(names, raw) if not lib.tfrec_index_beside_match(b, arr, len(raw))]


__all__ = ["glob"]
