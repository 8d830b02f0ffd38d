"""One ctypes type per C handle.

The prototypes declare each handle argument (and each handle out-parameter)
with the handle's own type, so ctypes refuses a handle of another kind, a
writer passed where a reader is expected, before C is called. The check is
ctypes' own (done in C), but ctypes reports it as ctypes.ArgumentError,
which is not a TypeError; declared() wraps the prototypes that take handles
so that a mismatch raises TypeError naming the expected and the given type.
The wrapper costs one Python call (about 0.1 us against the 0.5-1 us of a
ctypes call); the batched record paths make few calls, so it does not show
there.

A handle type only tells what a pointer is, not whether it is still valid:
the Python objects drop their handle (None) when closed and raise ValueError
before anything reaches C.

_c_type_ names the C type a handle points to; tests/python/test_c_layout.py
checks every prototype in PROTOTYPES (argument and return types) against the
C declarations.
"""

import ctypes
import functools
import re

# Every function the package declared, by name, whichever library part it
# comes from: what the package calls (the ctypes function, or the wrapper
# of declared() whose __wrapped__ is the ctypes function with argtypes).
PROTOTYPES = {}


class Handle(ctypes.c_void_p):
    """Base of the handle types; never used in a prototype itself."""

    _c_type_ = None

    def __repr__(self):
        return "<%s %s>" % (type(self).__name__, hex(self.value) if self.value else "NULL")


class ReaderHandle(Handle):
    _c_type_ = "tfrec_reader"


class WriterHandle(Handle):
    _c_type_ = "tfrec_writer"


class RecordBatchHandle(Handle):
    _c_type_ = "tfrec_record_batch"


class ExampleBuilderHandle(Handle):
    _c_type_ = "tfrec_example_builder"


class ExampleHandle(Handle):
    """A parsed tf.Example."""
    _c_type_ = "tfrec_example"


class IndexHandle(Handle):
    _c_type_ = "tfrec_index"


class RandomReaderHandle(Handle):
    _c_type_ = "tfrec_random_reader"


class DatasetHandle(Handle):
    _c_type_ = "tfrec_dataset"


class ImageStageHandle(Handle):
    _c_type_ = "tfrec_image_stage"


class BtClientHandle(Handle):
    _c_type_ = "tfrec_bt_client"


class BtWriterHandle(Handle):
    _c_type_ = "tfrec_bt_writer"


class BtReaderHandle(Handle):
    _c_type_ = "tfrec_bt_reader"


class BtPlanHandle(Handle):
    _c_type_ = "tfrec_bt_plan"


class ImagenetResultHandle(Handle):
    _c_type_ = "tfrec_imagenet_result"


class StorageHandle(Handle):
    _c_type_ = "tfrec_storage"


class StorageListHandle(Handle):
    _c_type_ = "tfrec_storage_list"


def handle_type(argtype):
    """(Handle subclass, pointer depth) if argtype is a handle (depth 0) or
    points to one (an out-parameter, depth 1); (None, 0) otherwise."""
    depth = 0
    while isinstance(argtype, type) and issubclass(argtype, ctypes._Pointer):
        argtype = argtype._type_
        depth += 1
    if isinstance(argtype, type) and issubclass(argtype, Handle) and argtype is not Handle:
        return argtype, depth
    return None, 0


def _describe(value):
    """The type of an argument as the message shows it (byref(x): pointer to x's type)."""
    obj = getattr(value, "_obj", None)  # what byref() points to
    if obj is not None and type(value).__name__ == "CArgObject":
        return "pointer to " + type(obj).__name__
    return type(value).__name__


def _mismatch(name, argtypes, args, err):
    """TypeError for an ArgumentError about a handle argument, else None."""
    m = re.match(r"argument (\d+):", str(err))
    if not m:
        return None
    i = int(m.group(1)) - 1
    if not 0 <= i < min(len(argtypes), len(args)):
        return None
    want, depth = handle_type(argtypes[i])
    if want is None:
        return None
    expected = want.__name__ if depth == 0 else "pointer to " + want.__name__
    return TypeError("%s() argument %d must be %s (%s %s), not %s"
                     % (name, i + 1, expected, want._c_type_, "*" * (depth + 1),
                        _describe(args[i])))


def declared(fn):
    """What to call for the ctypes function fn (argtypes and restype set),
    recorded in PROTOTYPES: fn itself if none of its arguments is a handle,
    otherwise a function calling fn that raises TypeError for a handle of
    the wrong type."""
    name = fn.__name__
    PROTOTYPES[name] = fn
    argtypes = tuple(fn.argtypes or ())
    if not any(handle_type(t)[0] for t in argtypes):
        return fn

    @functools.wraps(fn)
    def call(*args):
        try:
            return fn(*args)
        except ctypes.ArgumentError as e:
            err = _mismatch(name, argtypes, args, e)
            if err is None:
                raise
            raise err from None

    call.__qualname__ = name
    PROTOTYPES[name] = call
    return call
