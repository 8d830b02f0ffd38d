"""`pip install ./python` (offline: no build isolation, no dependencies) next
to a `make install`ed library: the package finds libtfrec through the
documented search order, or says exactly what to install."""
import os
import subprocess
import sys

import pytest

from bindings_env import PYTHON_DIR
from install_env import PROBE, copy_python_source, make, pip_install_offline, system_has_libtfrec

PY = "/usr/bin/python3"


@pytest.fixture(scope="module")
def installed(build_dir, tmp_path_factory):
    """(site dir holding the pip-installed package, PREFIX of make install)."""
    t = tmp_path_factory.mktemp("install")
    # pip builds in the source directory; build from a copy so that nothing
    # is written into the tree under test.
    src = copy_python_source(t / "src")
    site = t / "site"
    pip_install_offline(PY, src, "--target", str(site))
    assert (site / "tfrec" / "_lib.py").exists()
    prefix = t / "prefix"
    parts = make(build_dir, "install", "PREFIX=" + str(prefix))
    return site, prefix, parts


def run_probe(site, tmp_path, **env):
    base = {k: v for k, v in os.environ.items()
            if k not in ("TFREC_LIBRARY", "TFREC_BUILD", "LD_LIBRARY_PATH", "PYTHONPATH")}
    base.update(env)
    base["PYTHONPATH"] = str(site)
    return subprocess.run([PY, "-c", PROBE, str(tmp_path / "probe.tfrecord")], cwd=str(tmp_path),
                          capture_output=True, text=True, env=base, timeout=120)


def test_found_through_ld_library_path(installed, tmp_path):
    site, prefix, parts = installed
    out = run_probe(site, tmp_path, LD_LIBRARY_PATH=str(prefix / "lib"))
    assert out.returncode == 0, out.stderr
    path, found = out.stdout.splitlines()
    assert path == "libtfrec.so.1"  # by soname, as the loader finds it
    assert found == repr(sorted(parts))  # the optional parts come along


def test_found_through_tfrec_library(installed, tmp_path):
    site, prefix, parts = installed
    lib = prefix / "lib" / "libtfrec.so.1"
    out = run_probe(site, tmp_path, TFREC_LIBRARY=str(lib))
    assert out.returncode == 0, out.stderr
    path, found = out.stdout.splitlines()
    assert path == str(lib) and found == repr(sorted(parts))
    # an explicit choice that does not exist is an error, not a fallback
    out = run_probe(site, tmp_path, TFREC_LIBRARY=str(prefix / "nothing.so"),
                    LD_LIBRARY_PATH=str(prefix / "lib"))
    assert out.returncode != 0 and "nothing.so (absent)" in out.stderr


def test_found_in_a_standard_directory_without_ldconfig(installed, tmp_path):
    # A library in PREFIX/lib that the loader does not know (no ldconfig, no
    # LD_LIBRARY_PATH): found by looking in the standard directories, here
    # this Python's prefix pointed at PREFIX.
    site, prefix, parts = installed
    probe = "import sys; sys.prefix = %r\n" % str(prefix) + PROBE
    env = {k: v for k, v in os.environ.items()
           if k not in ("TFREC_LIBRARY", "TFREC_BUILD", "LD_LIBRARY_PATH")}
    env["PYTHONPATH"] = str(site)
    out = subprocess.run([PY, "-c", probe, str(tmp_path / "p.tfrecord")], cwd=str(tmp_path),
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    if not system_has_libtfrec():
        path, found = out.stdout.splitlines()
        assert path == str(prefix / "lib" / "libtfrec.so.1") and found == repr(sorted(parts))


def test_not_found_says_what_to_install(installed, tmp_path):
    site, prefix, parts = installed
    if system_has_libtfrec():
        return  # this machine has one installed: nothing to miss
    out = run_probe(site, tmp_path)
    assert out.returncode != 0
    err = out.stderr
    assert "LibraryNotFoundError" in err and "libtfrec.so.1" in err, err
    for hint in ("make install", "ldconfig", "TFREC_LIBRARY", "LD_LIBRARY_PATH"):
        assert hint in err, err
    assert "/usr/local/lib/libtfrec.so.1 (absent)" in err  # where it looked
    # a package installed into site-packages has no source tree around it:
    # no "build directory" that cannot exist is listed
    assert "build directory" not in err and str(site.parent / "build") not in err, err


def test_loader_configuration_directories(installed, tmp_path):
    """The directories of ld.so.conf (and its includes) are searched: a
    `make install` into one of them is found before `ldconfig` has run."""
    site, prefix, parts = installed
    conf = tmp_path / "ld.so.conf"
    (tmp_path / "conf.d").mkdir()
    conf.write_text("# comment\ninclude conf.d/*.conf\n/opt/a/lib\n")
    (tmp_path / "conf.d" / "x.conf").write_text("%s\n" % (prefix / "lib"))
    probe = ("import sys, tfrec._lib as L\nprint(L._ld_conf_dirs(sys.argv[1]))\n")
    out = subprocess.run([PY, "-c", probe, str(conf)], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(site),
                                  TFREC_LIBRARY=str(prefix / "lib" / "libtfrec.so.1")),
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == repr([str(prefix / "lib"), "/opt/a/lib"])


def test_a_library_that_does_not_load_gets_an_exact_fix(installed, tmp_path):
    site, prefix, parts = installed
    if system_has_libtfrec():
        return
    broken = tmp_path / "lib"
    broken.mkdir()
    (broken / "libtfrec.so.1").write_bytes(b"not an ELF file")
    probe = "import sys; sys.prefix = %r\n" % str(tmp_path) + PROBE
    env = {k: v for k, v in os.environ.items()
           if k not in ("TFREC_LIBRARY", "TFREC_BUILD", "LD_LIBRARY_PATH")}
    env["PYTHONPATH"] = str(site)
    out = subprocess.run([PY, "-c", probe, str(tmp_path / "p.tfrecord")], cwd=str(tmp_path),
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode != 0
    assert "%s exists but does not load" % (broken / "libtfrec.so.1") in out.stderr, out.stderr
    assert "ldd %s" % (broken / "libtfrec.so.1") in out.stderr


def test_type_hints_are_installed(installed):
    """pip and make install ship the stubs and py.typed (PEP 561)."""
    site, prefix, _ = installed
    src = os.path.join(PYTHON_DIR, "tfrec")
    stubs = sorted(f for f in os.listdir(src) if f.endswith(".pyi") or f == "py.typed")
    assert "py.typed" in stubs and "record.pyi" in stubs
    assert sorted(f for f in os.listdir(site / "tfrec")
                  if f.endswith(".pyi") or f == "py.typed") == stubs
    made = [os.path.join(d, "tfrec") for d, dirs, _ in os.walk(prefix)
            if "tfrec" in dirs and os.path.exists(os.path.join(d, "tfrec", "_lib.py"))]
    assert len(made) == 1
    assert sorted(f for f in os.listdir(made[0]) if f.endswith(".pyi") or f == "py.typed") == stubs
