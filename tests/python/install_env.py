"""Installing the package and the libraries as a user does, offline, for the
tests that check what an installed `import tfrec` finds (test_install.py,
test_python_wheel.py): a copy of python/ to build from (pip builds in the
source directory), `pip install` with no index, no build isolation and no
dependencies, `make` targets of the build under test with its parts, and
the probe an installed package runs."""
import os
import shutil
import subprocess

from bindings_env import PYTHON_DIR, REPO

# Writes and reads two records, then prints the library it loaded and the
# optional parts it found.
PROBE = r"""
import os, sys, tfrec
p = sys.argv[1]
with tfrec.TFRecordWriter(p) as w:
    w.write_many([b"a", b"bc"])
assert list(tfrec.TFRecordReader(p)) == [b"a", b"bc"]
print(tfrec.library_path)
print(sorted(k for k, v in tfrec.parts().items() if v))
"""


def copy_python_source(dest):
    """python/ into dest without caches, build output or libraries; dest."""
    shutil.copytree(PYTHON_DIR, dest, ignore=shutil.ignore_patterns(
        "__pycache__", "build", "*.egg-info", "libtfrec*.so*"))
    return dest


def make(build_dir, *args):
    """`make ARGS` for the build under test, with the parts it was built
    with; returns those parts."""
    parts = open(os.path.join(build_dir, "parts")).read().split()
    out = subprocess.run(["make", "-C", REPO, "--no-print-directory", "BUILD=" + build_dir,
                          "WITH_IMAGE=%d" % ("tfrec-image" in parts),
                          "WITH_BIGTABLE=%d" % ("tfrec-bigtable" in parts),
                          "WITH_STORAGE=%d" % ("tfrec-storage" in parts)] + list(args),
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    return parts


def pip_install_offline(py, what, *options, env=None, cwd=None):
    """`py -m pip install` of what (a source directory or a wheel) from local
    files only; options such as --target go before it."""
    if env is None:
        env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
    out = subprocess.run([py, "-m", "pip", "install", "--no-index", "--no-build-isolation",
                          "--no-deps"] + list(options) + [str(what)],
                         capture_output=True, text=True, timeout=600, env=env,
                         cwd=None if cwd is None else str(cwd))
    assert out.returncode == 0, out.stdout + out.stderr


def system_has_libtfrec():
    """Whether this machine has a libtfrec installed, which the loader
    would find before anything a test installs."""
    out = subprocess.run(["/usr/bin/python3", "-c", "import ctypes; ctypes.CDLL('libtfrec.so.1')"],
                         capture_output=True)
    return out.returncode == 0 or any(
        os.path.exists(os.path.join(d, "libtfrec.so.1"))
        for d in ("/usr/local/lib", "/usr/lib", "/usr/lib/x86_64-linux-gnu"))
