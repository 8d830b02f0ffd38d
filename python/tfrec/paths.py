"""tfrec.glob(): the files a pattern names, in the order the tools read them.

Local patterns use Python's glob; gs:// patterns list the bucket through
libtfrec-storage (MissingPartError without it). Both sort bytewise, not by
the locale, and "*" does not cross "/", so a pattern names the same files
in the same order as `tfrec count 'PATTERN'` and `tfrec2bt --source_glob`.
"""

import glob as _glob
import os

from . import _args, _lib


def glob(pattern):
    """Sorted names matching pattern (str, bytes or os.PathLike; * ? and
    [...]); a name without them is returned if it exists; [] when nothing
    matches."""
    b = _args.path(pattern, "pattern")
    if b[:5].lower() == b"gs://":
        _lib.require("tfrec-storage", "gs:// paths")
        from . import storage
        return storage.glob(pattern)
    names = _glob.glob(pattern if isinstance(pattern, (str, bytes)) else os.fspath(pattern))
    return sorted(names, key=os.fsencode)


__all__ = ["glob"]
