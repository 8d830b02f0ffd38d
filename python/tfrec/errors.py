"""Python exceptions for the library's TFREC_E_* status codes.

Every exception carries the library's detailed message (file, byte offset,
row key, server status) as str(e), the numeric code as e.code and the short
description of the code as e.reason.
"""

from ._lib import lib


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
    code = -1


class OutOfMemoryError(Error, MemoryError):
    code = -2


class IOFailureError(Error, OSError):
    """Open, read, write or rename failed (the errno text is in the message)."""
    code = -3


class DataLossError(Error):
    """The file's contents are damaged (TensorFlow's DataLossError)."""


class TruncatedRecordError(DataLossError):
    code = -4


class CorruptRecordError(DataLossError):
    """A CRC does not match (length header: code -5, data: code -6)."""
    code = -6


class RecordTooLargeError(DataLossError):
    code = -7


class TrailingGarbageError(DataLossError):
    code = -8


class CompressionError(DataLossError):
    code = -9


class ParseError(Error, ValueError):
    code = -10


class NotFoundError(Error, LookupError):
    code = -11


class NoSuchFileError(NotFoundError, FileNotFoundError):
    """A file to open does not exist (also a FileNotFoundError)."""


class UnsupportedError(Error):
    code = -12


class ImageError(Error):
    code = -13


class NetworkError(Error):
    code = -14


class StateError(Error):
    code = -15


class BigtableError(Error):
    """Any failure of the Bigtable writer or reader; e.code tells which kind."""


_BY_CODE = {
    -1: InvalidArgumentError, -2: OutOfMemoryError, -3: IOFailureError,
    -4: TruncatedRecordError, -5: CorruptRecordError, -6: CorruptRecordError,
    -7: RecordTooLargeError, -8: TrailingGarbageError, -9: CompressionError,
    -10: ParseError, -11: NotFoundError, -12: UnsupportedError,
    -13: ImageError, -14: NetworkError, -15: StateError,
}


def error_for(code, message=None, cls=None):
    """The exception for status code (message defaults to the thread's last one)."""
    if message is None:
        message = lib.tfrec_last_errmsg()
    if isinstance(message, bytes):
        message = message.decode("utf-8", "replace")
    if not message:
        message = lib.tfrec_strerror(code).decode()
    return (cls or _BY_CODE.get(code, Error))(message, code)


def open_error(code):
    """The exception for a failed open of a local path."""
    return error_for(code, cls=NoSuchFileError if code == NotFoundError.code else None)


def check(code, message=None):
    """Raise for a negative status code, return it otherwise."""
    if code < 0:
        raise error_for(code, message)
    return code
