"""CRC32C of libtfrec.so against an independent implementation: Debian's
python3-crc32c module (software, written by other people), on random
buffers, through the public entry point and through every implementation
this CPU supports, plus the TFREC_CRC32C=portable override."""
import ctypes
import os
import random
import subprocess
import sys

import crc32c
import pytest

IMPLS = {"auto": 0, "portable": 1, "sse42": 2, "clmul": 3, "avx512": 4, "arm64": 5}
E_UNSUPPORTED = -12


@pytest.fixture(scope="module")
def lib(build_dir):
    path = os.path.join(build_dir, "libtfrec.so")
    if not os.path.exists(path):
        pytest.fail("%s not built" % path)
    so = ctypes.CDLL(path)
    so.tfrec_crc32c_extend.restype = ctypes.c_uint32
    so.tfrec_crc32c_extend.argtypes = [ctypes.c_uint32, ctypes.c_char_p, ctypes.c_size_t]
    so.tfrec_crc32c_extend_with.restype = ctypes.c_int
    so.tfrec_crc32c_extend_with.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_uint32),
                                            ctypes.c_char_p, ctypes.c_size_t]
    return so


def buffers():
    rng = random.Random(20240229)
    lengths = list(range(0, 300)) + [rng.randrange(300, 70000) for _ in range(200)]
    lengths += [1 << 20, (8 << 20) + 13]
    for n in lengths:
        yield rng.randbytes(n)


def with_impl(lib, impl, data, crc=0):
    c = ctypes.c_uint32(crc)
    rc = lib.tfrec_crc32c_extend_with(impl, ctypes.byref(c), data, len(data))
    return rc, c.value


def test_public_entry_matches_python(lib):
    for data in buffers():
        assert lib.tfrec_crc32c_extend(0, data, len(data)) == crc32c.crc32c(data), len(data)


def test_extend_matches_python_incremental(lib):
    rng = random.Random(7)
    data = rng.randbytes(100000)
    ours = theirs = 0
    pos = 0
    while pos < len(data):
        step = rng.choice([1, 7, 64, 1000, 4096, 20000])
        piece = data[pos:pos + step]
        ours = lib.tfrec_crc32c_extend(ours, piece, len(piece))
        theirs = crc32c.crc32c(piece, theirs)
        assert ours == theirs, pos
        pos += step
    assert ours == crc32c.crc32c(data)


def test_every_available_impl_matches_python(lib):
    available = [name for name, i in IMPLS.items() if with_impl(lib, i, b"")[0] == 0]
    assert "portable" in available and "auto" in available
    if os.uname().machine == "x86_64":
        assert "sse42" in available  # every machine this suite targets has it
    for data in buffers():
        want = crc32c.crc32c(data)
        for name in available:
            rc, got = with_impl(lib, IMPLS[name], data)
            assert rc == 0 and got == want, (name, len(data))
    missing = "arm64" if os.uname().machine == "x86_64" else "sse42"
    assert with_impl(lib, IMPLS[missing], b"abc")[0] == E_UNSUPPORTED


def test_env_override_selects_portable(build_dir):
    # The variable is read at first use, so ask a fresh process.
    code = (
        "import ctypes, sys, crc32c, random\n"
        "so = ctypes.CDLL(sys.argv[1])\n"
        "so.tfrec_crc32c_impl_name.restype = ctypes.c_char_p\n"
        "so.tfrec_crc32c_extend.restype = ctypes.c_uint32\n"
        "so.tfrec_crc32c_extend.argtypes = [ctypes.c_uint32, ctypes.c_char_p, ctypes.c_size_t]\n"
        "d = random.Random(3).randbytes(50000)\n"
        "assert so.tfrec_crc32c_extend(0, d, len(d)) == crc32c.crc32c(d)\n"
        "print(so.tfrec_crc32c_impl_name(so.tfrec_crc32c_impl()).decode())\n"
    )
    env = dict(os.environ, TFREC_CRC32C="portable")
    out = subprocess.run([sys.executable, "-c", code, os.path.join(build_dir, "libtfrec.so")],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
    assert out.stdout.decode().strip() == "portable"
