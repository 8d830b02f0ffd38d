"""The Python package's copies of C declarations, judged by the C compiler.

Everything is collected by walking the tfrec package, so a new struct
mirror, constant or prototype is checked without editing this file:
- every ctypes Structure / Union names the C type it mirrors in _c_type_,
  and has that type's size and alignment, and each field the C member's
  offset, size and kind (signed, unsigned, floating, other); ctypes field
  names are the C member names;
- every module-level TFREC_* integer equals the C constant of that name;
- every status code the library knows has its own exception class;
- every prototype has the C function's arity, return type and handle
  types (a handle argument declared as a writer where C takes a reader
  does not compile).
"""
import ctypes
import importlib
import pkgutil
import re

import pytest

import c_probe
from bindings_env import load_tfrec


@pytest.fixture(scope="module")
def tfrec(build_dir):
    return load_tfrec(build_dir)


@pytest.fixture(scope="module")
def modules(tfrec):
    """Every module of the package that imports (an optional part of the
    library that is not installed leaves its module out)."""
    mods = [tfrec]
    for info in pkgutil.iter_modules(tfrec.__path__, tfrec.__name__ + "."):
        try:
            mods.append(importlib.import_module(info.name))
        except ImportError:
            continue
    names = {m.__name__ for m in mods}
    assert {"tfrec._lib", "tfrec.errors", "tfrec.record", "tfrec.example"} <= names
    return mods


@pytest.fixture(scope="module")
def handles(modules):
    from tfrec import _handles
    return _handles


# ------------------------------------------------------------------ structs

def struct_mirrors(modules):
    """{class: module} for every Structure / Union defined in the package
    (abstract bases without fields, such as _lib._Sized, mirror nothing)."""
    found = {}
    for m in modules:
        for obj in vars(m).values():
            if (isinstance(obj, type) and issubclass(obj, (ctypes.Structure, ctypes.Union))
                    and obj.__module__ == m.__name__ and hasattr(obj, "_fields_")):
                found[obj] = m
    return found


def fields(cls):
    """(name, ctype, is a bit field) of every field, base classes' first (as
    ctypes lays them out)."""
    out = []
    for klass in reversed(cls.__mro__):
        for f in vars(klass).get("_fields_", ()):
            out.append((f[0], f[1], len(f) == 3))
    return out


_INT_CODES = {"b", "h", "i", "l", "q"}
_UINT_CODES = {"B", "H", "I", "L", "Q", "?"}
_FLOAT_CODES = {"f", "d", "g"}


def py_kind(ctype):
    """The kind TFREC_PROBE_KIND gives the C type ctype stands for."""
    code = getattr(ctype, "_type_", None)
    if isinstance(ctype, type) and issubclass(ctype, ctypes._SimpleCData) and isinstance(code, str):
        if code in _INT_CODES:
            return "int"
        if code in _UINT_CODES:
            return "uint"
        if code in _FLOAT_CODES:
            return "float"
        if code == "c":
            return "char"
    return "other"


def test_every_struct_names_its_c_type(modules):
    mirrors = struct_mirrors(modules)
    assert len(mirrors) >= 3, "the package walk found too few ctypes structs: %r" % mirrors
    missing = ["%s.%s" % (m.__name__, cls.__name__) for cls, m in mirrors.items()
               if not isinstance(vars(cls).get("_c_type_"), str)]
    assert not missing, ("ctypes structs without _c_type_ (the C type they mirror), "
                         "so their layout cannot be checked: %s" % ", ".join(missing))


def layout_differences(classes, tmpdir):
    """How the ctypes structs differ from their C types ([] if not at all)."""
    queries, expected = [], {}

    def ask(key, expr, kind, value):
        queries.append((key, expr, kind))
        expected[key] = value

    for cls in classes:
        t = cls._c_type_
        ask(t + " sizeof", "sizeof(%s)" % t, "int", ctypes.sizeof(cls))
        ask(t + " alignment", "_Alignof(%s)" % t, "int", ctypes.alignment(cls))
        for name, ctype, bitfield in fields(cls):
            desc = getattr(cls, name)
            member = "((%s *)0)->%s" % (t, name)
            ask("%s.%s offset" % (t, name), "offsetof(%s, %s)" % (t, name), "int", desc.offset)
            if not bitfield:  # ctypes packs a bit field's position into .size
                ask("%s.%s size" % (t, name), "sizeof(%s)" % member, "int", desc.size)
                ask("%s.%s kind" % (t, name), "TFREC_PROBE_KIND(%s)" % member, "str",
                    py_kind(ctype))
    got = c_probe.values(tmpdir, queries)
    return ["%s: C %s, Python %s" % (k, got[k], expected[k])
            for k, _, _ in queries if got[k] != expected[k]]


def test_struct_layouts_match_c(modules, tmp_path):
    mirrors = [cls for cls in struct_mirrors(modules) if "_c_type_" in vars(cls)]
    wrong = layout_differences(mirrors, tmp_path)
    assert not wrong, "ctypes mirrors differ from the C headers:\n  " + "\n  ".join(wrong)


def test_layout_check_reports_each_difference(tmp_path):
    class Stats(ctypes.Structure):
        _c_type_ = "tfrec_reader_stats"
        _fields_ = [("struct_size", ctypes.c_size_t), ("records", ctypes.c_uint64),
                    ("bytes", ctypes.c_int64), ("skipped_regions", ctypes.c_uint32)]
    wrong = layout_differences([Stats], tmp_path)
    assert sorted(w.split(":")[0] for w in wrong) == [
        "tfrec_reader_stats sizeof", "tfrec_reader_stats.bytes kind",
        "tfrec_reader_stats.skipped_regions size"]
    assert "tfrec_reader_stats sizeof: C 40, Python 32" in wrong
    with pytest.raises(c_probe.CompileError, match="no member named .records_read"):
        class Renamed(ctypes.Structure):
            _c_type_ = "tfrec_reader_stats"
            _fields_ = [("records_read", ctypes.c_uint64)]
        layout_differences([Renamed], tmp_path)


# ------------------------------------------------------------------ constants

def python_constants(modules):
    """{name: value} of every module-level TFREC_* integer in the package."""
    found, clash = {}, []
    for m in modules:
        for name, value in vars(m).items():
            if re.fullmatch(r"TFREC_[A-Z0-9_]+", name) and type(value) is int:
                if found.setdefault(name, value) != value:
                    clash.append("%s: %r and %r" % (name, found[name], value))
    assert not clash, "one name, two values: %s" % clash
    return found


def constant_differences(consts, tmpdir):
    got = c_probe.values(tmpdir, [(n, n, "int") for n in sorted(consts)])
    return ["%s: C %d, Python %d" % (n, got[n], v) for n, v in sorted(consts.items())
            if got[n] != v]


def test_constants_match_c(modules, tmp_path):
    consts = python_constants(modules)
    # the ones the bindings cannot work without, so an empty walk fails
    assert {"TFREC_OK", "TFREC_END", "TFREC_E_INVALID", "TFREC_COMPRESSION_GZIP",
            "TFREC_FEATURE_INT64"} <= set(consts)
    wrong = constant_differences(consts, tmp_path)
    assert not wrong, "constants differ from the C headers:\n  " + "\n  ".join(wrong)


def test_constant_check_reports_differences(tmp_path):
    assert constant_differences({"TFREC_E_IO": -4, "TFREC_END": 1}, tmp_path) == [
        "TFREC_E_IO: C -3, Python -4"]
    with pytest.raises(c_probe.CompileError, match="TFREC_E_NO_SUCH_CODE"):
        constant_differences({"TFREC_E_NO_SUCH_CODE": -99}, tmp_path)


def test_every_status_code_has_its_exception(tfrec, modules):
    from tfrec import errors
    from tfrec._lib import lib
    unknown = lib.tfrec_strerror(-1000000)
    known = [c for c in range(-1, -200, -1) if lib.tfrec_strerror(c) != unknown]
    assert len(known) >= 15
    generic = [c for c in known if type(errors.error_for(c, "m")) is errors.Error]
    assert not generic, ("status codes the library knows but Python maps to the plain "
                         "tfrec.Error: %s" % generic)
    for c in known:
        assert errors.error_for(c, "m").code == c


# ------------------------------------------------------------------ prototypes

def prototypes(modules, handles):
    """{name: (restype, argtypes)} of every C function the package declared:
    those recorded by _handles.declared(), and any other function with
    argtypes on a library object of the package."""
    fns = {name: getattr(f, "__wrapped__", f) for name, f in handles.PROTOTYPES.items()}
    libs = {id(v): v for m in modules for v in vars(m).values() if isinstance(v, ctypes.CDLL)}
    for lib in libs.values():
        for name, fn in vars(lib).items():
            fn = getattr(fn, "__wrapped__", fn)
            if name.startswith("tfrec_") and getattr(fn, "argtypes", None) is not None:
                fns.setdefault(name, fn)
    return {name: (fn.restype, list(fn.argtypes)) for name, fn in fns.items()}


_C_SCALARS = {"b": "signed char", "B": "unsigned char", "h": "short", "H": "unsigned short",
              "i": "int", "I": "unsigned int", "l": "long", "L": "unsigned long",
              "q": "long long", "Q": "unsigned long long", "f": "float", "d": "double",
              "g": "long double", "?": "_Bool", "c": "char", "z": "const char *"}


def c_type(ctype, handles):
    """How C spells the type ctype declares, or None where ctypes does not say
    (void pointers, function pointers)."""
    if issubclass(ctype, handles.Handle):
        return ctype._c_type_ + " *"
    if issubclass(ctype, (ctypes.Structure, ctypes.Union)):
        return vars(ctype).get("_c_type_")
    if issubclass(ctype, ctypes._Pointer):
        inner = c_type(ctype._type_, handles)
        return inner + " *" if inner else None
    if issubclass(ctype, ctypes._SimpleCData):
        return _C_SCALARS.get(ctype._type_)
    return None


def check_prototypes(protos, handles, tmpdir):
    """Compile a call of each function with arguments of the types Python
    declares, and assert its return type; raises CompileError."""
    statements = []
    for name, (restype, argtypes) in sorted(protos.items()):
        # Typed arguments as compound literals (not null pointer constants),
        # so C checks each one against its parameter.
        args = []
        for t in argtypes:
            spelled = c_type(t, handles)
            args.append("(%s){0}" % spelled if spelled else "0")
        call = "%s(%s)" % (name, ", ".join(args))
        statements.append("(void)%s;" % call)
        if restype is None:
            want, why = "void", "returns a value but Python declares restype None"
        else:
            want = c_type(restype, handles)
            why = "returns another type than Python's restype %s" % restype.__name__
        if want:
            statements.append('_Static_assert(__builtin_types_compatible_p(__typeof__(%s), %s), '
                              '"%s %s");' % (call, want, name, why))
    c_probe.check(tmpdir, statements)


def test_prototypes_match_c(modules, handles, tmp_path):
    protos = prototypes(modules, handles)
    assert {"tfrec_reader_open", "tfrec_writer_write", "tfrec_example_parse"} <= set(protos)
    try:
        check_prototypes(protos, handles, tmp_path)
    except c_probe.CompileError as e:
        pytest.fail("Python prototypes disagree with the C headers:\n%s" % e)


def test_prototype_check_reports_each_mistake(handles, tmp_path):
    from ctypes import POINTER, c_int, c_size_t, c_uint32, c_void_p
    wrong = {
        # a writer where C takes a reader
        "tfrec_reader_next": (c_int, [handles.WriterHandle, POINTER(c_void_p), POINTER(c_size_t)]),
        # one argument too many
        "tfrec_writer_flush": (c_int, [handles.WriterHandle, c_int]),
        # a 64-bit result read as 32 bits, a result ignored
        "tfrec_writer_records": (c_uint32, [handles.WriterHandle]),
        "tfrec_reader_seek": (None, [handles.ReaderHandle, c_size_t]),
    }
    with pytest.raises(c_probe.CompileError) as e:
        check_prototypes(wrong, handles, tmp_path)
    for name in wrong:
        assert name in str(e.value)
    check_prototypes({"tfrec_writer_flush": (c_int, [handles.WriterHandle])}, handles, tmp_path)


def test_handle_types_name_c_types(handles, tmp_path):
    kinds = [h for h in vars(handles).values()
             if isinstance(h, type) and issubclass(h, handles.Handle) and h is not handles.Handle]
    assert len(kinds) >= 9
    names = [h._c_type_ for h in kinds]
    assert len(set(names)) == len(names), "two handle types for one C type: %s" % names
    c_probe.check(tmp_path, ["%s *p%d = 0; (void)p%d;" % (n, i, i) for i, n in enumerate(names)])
