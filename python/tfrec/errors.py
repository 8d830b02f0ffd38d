"""Python exceptions for the library's TFREC_E_* status codes.

Every exception carries the library's detailed message (file, byte offset,
row key, server status) as str(e), the numeric code as e.code and the short
description of the code as e.reason.
"""

import re

from . import _constants as C
from . import _lib
from ._lib import lib

# The file system layer's message for a name whose scheme belongs to a part
# that is not loaded (lib/fs/registry.c): raised as MissingPartError.
_SCHEME_PART = re.compile(r"(\w+):// names need lib([\w-]+), which is not linked")


class Error(Exception):
    """Base class of every error libtfrec reports."""

    code = None

    def __init__(self, message, code=None):
        super().__init__(message)
        if code is not None:
            self.code = code

    @property
    def reason(self):
        return lib.tfrec_strerror(self.code or 0).decode()


class InvalidArgumentError(Error, ValueError):
    code = C.TFREC_E_INVALID


class OutOfMemoryError(Error, MemoryError):
    code = C.TFREC_E_NOMEM


class IOFailureError(Error, OSError):
    """Open, read, write or rename failed (the errno text is in the message)."""
    code = C.TFREC_E_IO


class DataLossError(Error):
    """The file's contents are damaged (TensorFlow's DataLossError)."""


class TruncatedRecordError(DataLossError):
    code = C.TFREC_E_TRUNCATED


class CorruptRecordError(DataLossError):
    """A CRC does not match (length header: code -5, data: code -6)."""
    code = C.TFREC_E_BAD_DATA_CRC


class RecordTooLargeError(DataLossError):
    code = C.TFREC_E_RECORD_TOO_LARGE


class TrailingGarbageError(DataLossError):
    code = C.TFREC_E_TRAILING_GARBAGE


class CompressionError(DataLossError):
    code = C.TFREC_E_COMPRESSION


class ParseError(Error, ValueError):
    code = C.TFREC_E_PARSE


class NotFoundError(Error, LookupError):
    code = C.TFREC_E_NOT_FOUND


class NoSuchFileError(NotFoundError, FileNotFoundError):
    """A file to open does not exist (also a FileNotFoundError)."""


class UnsupportedError(Error):
    code = C.TFREC_E_UNSUPPORTED


class ImageError(Error):
    code = C.TFREC_E_IMAGE


class NetworkError(Error):
    code = C.TFREC_E_NETWORK


class StateError(Error):
    code = C.TFREC_E_STATE


class BigtableError(Error):
    """Any failure of the Bigtable writer or reader; e.code tells which kind."""


_BY_CODE = {cls.code: cls for cls in (
    InvalidArgumentError, OutOfMemoryError, IOFailureError, TruncatedRecordError,
    CorruptRecordError, RecordTooLargeError, TrailingGarbageError, CompressionError, ParseError,
    NotFoundError, UnsupportedError, ImageError, NetworkError, StateError)}
_BY_CODE[C.TFREC_E_BAD_LENGTH_CRC] = CorruptRecordError


def error_for(code, message=None, cls=None):
    """The exception for status code (message defaults to the thread's last one)."""
    if message is None:
        message = lib.tfrec_last_errmsg()
    if isinstance(message, bytes):
        message = message.decode("utf-8", "replace")
    if not message:
        message = lib.tfrec_strerror(code).decode()
    m = _SCHEME_PART.search(message) if code == C.TFREC_E_UNSUPPORTED else None
    if m and m.group(2) in _lib.OPTIONAL_PARTS and not _lib.loaded(m.group(2)):
        return _lib.missing(m.group(2), "%s:// paths" % m.group(1))
    return (cls or _BY_CODE.get(code, Error))(message, code)


def open_error(code):
    """The exception for a failed open of a local path."""
    return error_for(code, cls=NoSuchFileError if code == NotFoundError.code else None)


def check(code, message=None):
    """Raise for a negative status code, return it otherwise."""
    if code < 0:
        raise error_for(code, message)
    return code
