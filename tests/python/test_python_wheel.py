"""The Python package in a virtual environment made by Debian's
python3-venv (`python3 -m venv --system-site-packages`), installed by pip
offline (--no-index --no-build-isolation) from local files:
  - the wheel of `make python-wheel` carries the shared libraries: `import
    tfrec` writes and reads a record with neither TFREC_LIBRARY nor
    LD_LIBRARY_PATH, from the libraries inside the package;
  - `pip install ./python` (no libraries inside) finds those of a `make
    install` into another PREFIX through the tools on PATH;
  - without any library, LibraryNotFoundError gives the exact fix for this
    venv (make python-wheel, this interpreter's pip) and lists no place that
    cannot exist."""
import glob
import os
import subprocess

import pytest

from install_env import PROBE, copy_python_source, make, pip_install_offline, system_has_libtfrec

CLEAN = ("TFREC_LIBRARY", "TFREC_BUILD", "LD_LIBRARY_PATH", "PYTHONPATH", "VIRTUAL_ENV")


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in CLEAN}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env.update(extra)
    return env


def venv(path):
    out = subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(path)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return str(path / "bin" / "python")


def pip_install(py, what, cwd):
    pip_install_offline(py, what, "--force-reinstall", "-q", env=clean_env(), cwd=cwd)


def site_of(py):
    return subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(scope="module")
def venv_python(tmp_path_factory):
    """One venv for the file (making one takes a while); each test installs
    what it needs over what the previous one left."""
    return venv(tmp_path_factory.mktemp("venv") / "venv")


@pytest.fixture(scope="module")
def source_copy(tmp_path_factory):
    """python/ without any library copied in (pip builds in place)."""
    return copy_python_source(tmp_path_factory.mktemp("src") / "python")


def test_pip_installed_package_finds_a_make_install_by_the_tools_on_path(
        build_dir, tmp_path, source_copy, venv_python):
    if system_has_libtfrec():
        pytest.skip("a libtfrec installed on this machine would be found first")
    prefix = tmp_path / "prefix"
    parts = make(build_dir, "install", "PREFIX=" + str(prefix))
    py = venv_python
    pip_install(py, str(source_copy), tmp_path)
    env = clean_env(PATH=str(prefix / "bin") + os.pathsep + os.environ["PATH"])
    out = subprocess.run([py, "-c", PROBE, str(tmp_path / "r.tfrecord")], cwd="/",
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    path, found = out.stdout.splitlines()
    assert path == str(prefix / "lib" / "libtfrec.so.1") and found == repr(sorted(parts))


def test_not_found_in_a_venv_gives_the_exact_fix(tmp_path, source_copy, venv_python):
    if system_has_libtfrec():
        pytest.skip("this machine has a libtfrec installed: nothing to miss")
    py = venv_python
    pip_install(py, str(source_copy), tmp_path)
    out = subprocess.run([py, "-c", "import tfrec"], cwd="/", capture_output=True, text=True,
                         env=clean_env(), timeout=120)
    assert out.returncode != 0
    err = out.stderr
    assert "LibraryNotFoundError" in err, err
    assert "`make python-wheel`, then `%s -m pip install --no-index build/dist/tfrec-*.whl`" % py \
        in err, err
    assert "sudo make install PREFIX=/usr/local && sudo ldconfig" in err
    looked = err.split("Looked in:\n", 1)[1].splitlines()
    assert looked, err
    for line in looked:
        line = line.strip()
        what, _, rest = line.partition(": ")
        path, _, why = rest.partition(" (")
        if why.startswith("absent"):
            # every place listed could hold the library: its directory exists
            assert os.path.isdir(os.path.dirname(path)), line
    assert "build directory" not in err
    assert not any("/usr/lib64/" in line for line in looked if not os.path.isdir("/usr/lib64"))


def test_wheel_carries_the_libraries(build_dir, tmp_path, venv_python):
    parts = make(build_dir, "python-wheel")
    (wheel,) = glob.glob(os.path.join(build_dir, "dist", "tfrec-*.whl"))
    # the binaries inside make it this platform's wheel, not py3-none-any
    assert "none-any" not in wheel and "linux" in wheel, wheel
    py = venv_python
    pip_install(py, wheel, tmp_path)
    site = site_of(py)
    assert site.startswith(os.path.dirname(os.path.dirname(py))), site
    out = subprocess.run([py, "-c", PROBE, str(tmp_path / "r.tfrecord")], cwd="/",
                         capture_output=True, text=True, env=clean_env(), timeout=120)
    assert out.returncode == 0, out.stderr
    path, found = out.stdout.splitlines()
    assert path == os.path.join(site, "tfrec", "libtfrec.so.1")
    assert found == repr(sorted(parts))  # every built part came along
    # pip uninstall takes the libraries with the package
    out = subprocess.run([py, "-m", "pip", "uninstall", "-y", "-q", "tfrec"],
                         capture_output=True, text=True, env=clean_env(), timeout=300)
    assert out.returncode == 0, out.stderr
    assert not glob.glob(os.path.join(site, "tfrec", "*.so*"))
