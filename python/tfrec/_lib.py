"""Find and load libtfrec's shared libraries and declare the C prototypes.

libtfrec comes in parts: the core libtfrec.so (records, tf.Example, CRC32C)
and the optional libtfrec-image.so (convert_images) and libtfrec-bigtable.so
(tfrec.bigtable), each present only if it was built and installed.

The core is searched in this order (the first file that exists and loads wins):
  1. the TFREC_LIBRARY environment variable (a path to the .so),
  2. next to this package (a copy inside the package, or the library
     directory the package was installed beside by `make install`),
  3. the source tree's build directory: $TFREC_BUILD if set, else
     <repo>/build, found from this file's location (development checkouts),
  4. the system loader, by soname (libtfrec.so.1: LD_LIBRARY_PATH and the
     ldconfig cache) and by ctypes.util.find_library("tfrec"),
  5. the standard library directories (/usr/local/lib, /usr/lib and their
     multiarch and lib64 forms, and this Python's prefix), which the loader
     itself does not search for /usr/local until `ldconfig` has run: so a
     package installed with pip finds a `make install`ed library even then;
     the directories ld.so.conf lists, for the same reason,
  6. PREFIX/lib of a `make install` into any PREFIX whose tools are on PATH
     (PREFIX/bin/tfrec: the install put the libraries in PREFIX/lib).
A library of another major version is skipped (its ABI differs). If none is
found, LibraryNotFoundError gives the exact commands that fix it and lists
where it looked (places that cannot exist, such as a directory that is not
there, are left out).
The optional parts come from the same place as the core: the directory the
core was loaded from, or the system loader (4). Parts of two builds are
never mixed (they share an internal interface tied to the exact version).
To run without a part, point TFREC_LIBRARY at a directory that holds only
the core. tfrec.parts() tells what was found where.
"""

import ctypes
import ctypes.util
import os

from ctypes import POINTER, c_char_p, c_int, c_size_t, c_uint64, c_void_p

SOVERSION = 1
CORE = "tfrec"
# Optional part -> (the feature it brings, the make switch that builds it).
OPTIONAL_PARTS = {
    "tfrec-image": ("convert_images", "WITH_IMAGE"),
    # Google credentials shared by the Bigtable and storage parts (loaded
    # with them; listed so that parts() tells what is installed).
    "tfrec-gcp": ("google_credentials", "WITH_GCP"),
    "tfrec-bigtable": ("tfrec.bigtable", "WITH_BIGTABLE"),
    "tfrec-storage": ("gs:// paths", "WITH_STORAGE"),
}
# Which part defines a C function, by its prefix (everything else: the core).
_PREFIXES = (("tfrec_imagenet_", "tfrec-image"), ("tfrec_image_", "tfrec-image"),
             ("tfrec_bt_", "tfrec-bigtable"), ("tfrec_storage_", "tfrec-storage"))


def _names(part):
    return ("lib%s.so" % part, "lib%s.so.%d" % (part, SOVERSION))


from ._handles import (ExampleBuilderHandle, ExampleHandle, ReaderHandle, RecordBatchHandle,
                       WriterHandle, declared)


class LibraryNotFoundError(ImportError):
    """libtfrec.so could not be found or loaded."""


class MissingPartError(LibraryNotFoundError):
    """A feature was used whose optional part (libtfrec-image.so,
    libtfrec-bigtable.so) is not installed next to the core library."""


def _standard_dirs():
    """Library directories where `make install` (PREFIX=/usr/local or /usr)
    and distributions put libraries, and this Python's own prefixes."""
    import sys
    import sysconfig
    multiarch = sysconfig.get_config_var("MULTIARCH")
    dirs = []
    for prefix in ("/usr/local", "/usr", sys.prefix, sys.base_prefix):
        if multiarch:
            dirs.append(os.path.join(prefix, "lib", multiarch))
        dirs += [os.path.join(prefix, "lib"), os.path.join(prefix, "lib64")]
    seen = set()
    return [d for d in dirs if not (d in seen or seen.add(d))]


def _ld_conf_dirs(conf="/etc/ld.so.conf", _depth=0):
    """The directories the loader's configuration lists (ld.so.conf and its
    include globs): where ldconfig looks, so a `make install` into one of
    them is found before `ldconfig` has run."""
    import glob
    dirs = []
    try:
        with open(conf, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return dirs
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("include") and _depth < 4:
            for pat in line.split()[1:]:
                if not os.path.isabs(pat):
                    pat = os.path.join(os.path.dirname(conf), pat)
                for inc in sorted(glob.glob(pat)):
                    dirs += _ld_conf_dirs(inc, _depth + 1)
        elif line.startswith("/"):
            dirs.append(line.split()[0])
    return dirs


def _in_source_tree(here):
    """True when this package is python/tfrec of a libtfrec source tree
    (not a copy installed into site-packages, where ../../build is no
    build directory)."""
    root = os.path.join(here, "..", "..")
    return (os.path.exists(os.path.join(here, "..", "setup.py")) and
            os.path.exists(os.path.join(root, "Makefile")) and
            os.path.isdir(os.path.join(root, "include", "tfrec")))


def _candidates():
    """(description, path) pairs in search order; a path without a
    directory is a name for the system loader."""
    env = os.environ.get("TFREC_LIBRARY")
    if env:
        yield "TFREC_LIBRARY", env
        return  # an explicit choice that fails must not be papered over
    here = os.path.dirname(os.path.abspath(__file__))
    for n in _names(CORE):
        yield "inside the package", os.path.join(here, n)
    # `make install` puts the package in LIBDIR/python3[.X]/dist-packages/tfrec
    # (a venv's site-packages has the same shape: PREFIX=venv).
    site = os.path.dirname(here)
    if (os.path.basename(site) in ("dist-packages", "site-packages") and
            os.path.basename(os.path.dirname(site)).startswith("python3")):
        libdir = os.path.dirname(os.path.dirname(site))
        for n in _names(CORE):
            yield "LIBDIR of the install beside the package", os.path.join(libdir, n)
    builds = []
    if os.environ.get("TFREC_BUILD"):
        builds.append(os.environ["TFREC_BUILD"])
    if _in_source_tree(here):
        builds.append(os.path.join(here, "..", "..", "build"))
    for d in builds:
        for n in _names(CORE):
            yield "build directory", os.path.normpath(os.path.join(d, n))
    soname = _names(CORE)[1]
    yield "system loader", soname
    found = ctypes.util.find_library(CORE)
    if found and found != soname:
        yield "system loader (find_library)", found
    for d in _standard_dirs():
        yield "standard directory", os.path.join(d, soname)
    for d in _ld_conf_dirs():
        if d not in _standard_dirs():
            yield "loader configuration (ld.so.conf)", os.path.join(d, soname)
    for d in _tool_prefix_libdirs():
        yield "PREFIX/lib of the tools on PATH", os.path.join(d, soname)


def _tool_prefix_libdirs():
    """PREFIX/lib for each PREFIX/bin on PATH that holds libtfrec's tools:
    `make install PREFIX=P` put the libraries in P/lib beside them."""
    import shutil
    out = []
    for tool in ("tfrec", "tfrec2bt", "bt2tfrec", "imagenet2tfrec"):
        found = shutil.which(tool)
        if not found:
            continue
        d = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(found))), "lib")
        if d not in out and d not in _standard_dirs():
            out.append(d)
    return out


def _major(dll):
    """The major version of a loaded core library, or None if unknown."""
    try:
        fn = dll.tfrec_version
        fn.restype = c_char_p
        return int(fn().split(b".")[0])
    except (AttributeError, ValueError, TypeError):
        return None


NOT_FOUND_HELP = (
    "libtfrec.so.%d (the libtfrec C library) is not installed where Python can find it. "
    "Install it from the libtfrec source tree: `make && sudo make install "
    "PREFIX=/usr/local && sudo ldconfig`; or point TFREC_LIBRARY at the file "
    "(TFREC_LIBRARY=/path/to/libtfrec.so.%d), or add its directory to "
    "LD_LIBRARY_PATH." % (SOVERSION, SOVERSION))


def _not_found_help():
    """The exact fix for this interpreter: the install command, and the
    wheel with the libraries inside when running in a venv."""
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    if _in_source_tree(here):
        root = os.path.normpath(os.path.join(here, "..", ".."))
        return ("libtfrec.so.%d is not built in this source tree: run `make -C %s` "
                "(or set TFREC_BUILD to the build directory, TFREC_LIBRARY to the file, or "
                "LD_LIBRARY_PATH to its directory). To install it instead: "
                "`make && sudo make install PREFIX=/usr/local && sudo ldconfig`."
                % (SOVERSION, root))
    text = NOT_FOUND_HELP
    if sys.prefix != sys.base_prefix:
        text += (" In this virtual environment the package can carry the libraries itself: "
                 "in the libtfrec source tree run `make python-wheel`, then `%s -m pip install "
                 "--no-index build/dist/tfrec-*.whl`." % sys.executable)
    return text


def _can_exist(line):
    """False for an "(absent)" entry in a directory that is not there,
    unless TFREC_LIBRARY named it (the user's own setting is always said)."""
    what, _, rest = line.partition(": ")
    path, _, why = rest.partition(" (")
    return what == "TFREC_LIBRARY" or not (why.startswith("absent") and
                                           not os.path.isdir(os.path.dirname(path)))


def _load():
    """(CDLL, path, directory or None when found by the system loader)."""
    tried = []
    for what, path in _candidates():
        by_name = os.sep not in path
        if not by_name and not os.path.exists(path):
            tried.append("%s: %s (absent)" % (what, path))
            continue
        try:
            dll = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s: %s (%s)" % (what, path, e))
            continue
        major = _major(dll)
        if major != SOVERSION:
            tried.append("%s: %s (version %s, not %d)" % (what, path, major, SOVERSION))
            continue
        return dll, path, None if by_name else os.path.dirname(os.path.abspath(path))
    listed = [t for t in tried if _can_exist(t)]
    raise LibraryNotFoundError(_fix(tried) + _not_found_help() + " Looked in:\n  " +
                               "\n  ".join(listed))


def _fix(tried):
    """The exact fix, when a library file was there but did not load."""
    for line in tried:
        what, _, rest = line.partition(": ")
        path, _, why = rest.partition(" (")
        if os.sep not in path or why.startswith("absent") or what == "TFREC_LIBRARY":
            continue
        if why.startswith("version"):
            return ("%s is of another major version (%s: install libtfrec %d.x over it. "
                    % (path, why.rstrip(")"), SOVERSION))
        return ("%s exists but does not load (%s: install what it needs (`ldd %s` lists "
                "it), or rebuild libtfrec on this system. " % (path, why.rstrip(")"), path))
    return ""


def _load_part(part, core_dir):
    """(CDLL or None, path or None, why it is missing or None)."""
    names = _names(part)
    if core_dir is None:
        for name in reversed(names):  # the soname first
            try:
                return ctypes.CDLL(name), name, None
            except OSError:
                pass
        return None, None, "the system loader finds no %s" % " or ".join(names)
    for name in names:
        p = os.path.join(core_dir, name)
        if os.path.exists(p):
            try:
                return ctypes.CDLL(p), p, None
            except OSError as e:
                return None, None, "%s does not load (%s)" % (p, e)
    return None, None, "no %s in %s, where libtfrec.so was found" % (" or ".join(names), core_dir)


class _Library:
    """The C functions of the core and of every loaded part, as one namespace."""

    def __init__(self, dlls):
        self._dlls = dlls

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        for dll in self._dlls:
            try:
                fn = getattr(dll, name)
            except AttributeError:
                continue
            setattr(self, name, fn)  # found once, prototypes set on it stick
            return fn
        part = symbol_part(name)
        if part != CORE and not loaded(part):
            raise AttributeError("%s is in lib%s, which is not loaded: %s"
                                 % (name, part, _parts[part][2]))
        raise AttributeError("%s: no such function in libtfrec" % name)


def symbol_part(name):
    """The part that defines C function `name`."""
    for prefix, part in _PREFIXES:
        if name.startswith(prefix):
            return part
    return CORE


def loaded(part):
    """True if `part` ("tfrec", "tfrec-image", "tfrec-bigtable") is loaded."""
    return _parts.get(part, (None,))[0] is not None


def parts():
    """{part: path of its shared library, or None when it is not installed}."""
    return {p: v[1] for p, v in _parts.items()}


def features():
    """{feature: available}: the core's, and those of the optional parts."""
    out = {"records": True, "examples": True, "crc32c": True}
    for part, (feature, _) in OPTIONAL_PARTS.items():
        out[feature.split(".")[-1]] = loaded(part)
    return out


def missing(part, feature=None):
    """The MissingPartError for using `feature` of a part that is not loaded."""
    feature = feature or OPTIONAL_PARTS[part][0]
    return MissingPartError(
        "%s needs lib%s, which is not installed (%s); build it with make %s=1 (the "
        "default) and install it next to libtfrec.so" % (
            feature, part, _parts[part][2], OPTIONAL_PARTS[part][1]))


def require(part, feature=None):
    if not loaded(part):
        raise missing(part, feature)


def unavailable(feature, part):
    """A stand-in for function `feature` of a missing part: raises when called."""
    def stub(*args, **kwargs):
        raise missing(part, feature)
    stub.__name__ = stub.__qualname__ = feature
    stub.__doc__ = "Not available: needs lib%s, which is not installed." % part
    return stub


_core, path, _core_dir = _load()
_parts = {CORE: (_core, path, None)}
for _p in OPTIONAL_PARTS:
    _parts[_p] = _load_part(_p, _core_dir)
lib = _Library([v[0] for v in _parts.values() if v[0] is not None])

_u64p = POINTER(c_uint64)


def _proto(name, restype, *argtypes):
    """Declare a C function's prototype; a function of a missing part raises
    MissingPartError, naming the part (at import of the module using it)."""
    part = symbol_part(name)
    if not loaded(part):
        raise missing(part)
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    fn = declared(fn)  # a handle of the wrong type raises TypeError
    setattr(lib, name, fn)
    return fn


class _Sized(ctypes.Structure):
    """Base of the mirrors of libtfrec's growable structs (include/tfrec/
    common.h): their first member is struct_size, set here to the mirror's
    own size, so the library knows which fields this binding has."""

    def __init__(self, **fields):
        super().__init__(**fields)
        self.struct_size = ctypes.sizeof(self)


def has(name):
    """True if a loaded library (core or part) exports symbol name."""
    return hasattr(lib, name)


# error.h
_proto("tfrec_strerror", c_char_p, c_int)
_proto("tfrec_last_errmsg", c_char_p)
_proto("tfrec_version", c_char_p)
_proto("tfrec_free", None, c_void_p)

# record.h
_proto("tfrec_reader_open", c_int, POINTER(ReaderHandle), c_char_p, c_void_p)
_proto("tfrec_reader_next", c_int, ReaderHandle, POINTER(c_void_p), POINTER(c_size_t))
_proto("tfrec_reader_offset", c_uint64, ReaderHandle)
_proto("tfrec_reader_seek", c_int, ReaderHandle, c_uint64)
_proto("tfrec_reader_compression", c_int, ReaderHandle)
_proto("tfrec_reader_stats_get", c_int, ReaderHandle, c_void_p)
_proto("tfrec_reader_errmsg", c_char_p, ReaderHandle)
_proto("tfrec_reader_free", None, ReaderHandle)
_proto("tfrec_writer_open", c_int, POINTER(WriterHandle), c_char_p, c_void_p)
_proto("tfrec_writer_write", c_int, WriterHandle, c_char_p, c_size_t)
_proto("tfrec_writer_flush", c_int, WriterHandle)
_proto("tfrec_writer_close", c_int, WriterHandle)
_proto("tfrec_writer_abort", None, WriterHandle)
_proto("tfrec_writer_free", None, WriterHandle)
_proto("tfrec_writer_records", c_uint64, WriterHandle)
_proto("tfrec_writer_bytes_out", c_uint64, WriterHandle)
_proto("tfrec_writer_errmsg", c_char_p, WriterHandle)
_proto("tfrec_compression_from_name", c_int, c_char_p)
_proto("tfrec_compression_name", c_char_p, c_int)

# batch.h
_proto("tfrec_writer_write_batch", c_int, WriterHandle, c_char_p, c_void_p, c_size_t)
_proto("tfrec_writer_write_vec", c_int, WriterHandle, c_void_p, c_void_p, c_size_t)
_proto("tfrec_record_batch_new", c_int, POINTER(RecordBatchHandle))
_proto("tfrec_record_batch_free", None, RecordBatchHandle)
_proto("tfrec_reader_read_batch", c_int, ReaderHandle, RecordBatchHandle, c_size_t, c_size_t)
_proto("tfrec_record_batch_count", c_size_t, RecordBatchHandle)
_proto("tfrec_record_batch_data", c_void_p, RecordBatchHandle)
_proto("tfrec_record_batch_ends", c_void_p, RecordBatchHandle)
_proto("tfrec_reader_skip", c_int, ReaderHandle, c_uint64, POINTER(c_uint64))
_proto("tfrec_example_to_batch", c_int, ExampleHandle, RecordBatchHandle)

# example.h
_proto("tfrec_example_builder_new", c_int, POINTER(ExampleBuilderHandle))
_proto("tfrec_example_builder_reset", None, ExampleBuilderHandle)
_proto("tfrec_example_builder_free", None, ExampleBuilderHandle)
_proto("tfrec_example_add_bytes", c_int, ExampleBuilderHandle, c_char_p, c_char_p, c_size_t)
_proto("tfrec_example_add_int64_list", c_int, ExampleBuilderHandle, c_char_p, c_void_p, c_size_t)
_proto("tfrec_example_add_float_list", c_int, ExampleBuilderHandle, c_char_p, c_void_p, c_size_t)
_proto("tfrec_example_add_empty", c_int, ExampleBuilderHandle, c_char_p, c_int)
_proto("tfrec_example_serialize_alloc", c_int, ExampleBuilderHandle, POINTER(c_void_p),
       POINTER(c_size_t))
_proto("tfrec_example_builder_errmsg", c_char_p, ExampleBuilderHandle)
_proto("tfrec_example_parse", c_int, POINTER(ExampleHandle), c_char_p, c_size_t)
_proto("tfrec_example_free", None, ExampleHandle)
_proto("tfrec_example_feature_count", c_size_t, ExampleHandle)
_proto("tfrec_example_feature_key", c_char_p, ExampleHandle, c_size_t)
_proto("tfrec_example_feature_type", c_int, ExampleHandle, c_char_p)
_proto("tfrec_example_value_count", c_size_t, ExampleHandle, c_char_p)
_proto("tfrec_example_get_bytes", c_int, ExampleHandle, c_char_p, c_size_t,
       POINTER(c_void_p), POINTER(c_size_t))
_proto("tfrec_example_get_int64_list", c_int, ExampleHandle, c_char_p,
       POINTER(c_void_p), POINTER(c_size_t))
_proto("tfrec_example_get_float_list", c_int, ExampleHandle, c_char_p,
       POINTER(c_void_p), POINTER(c_size_t))
