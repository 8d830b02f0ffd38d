"""The storage test server (tests/storage/gcs_emulator.js) and a small C
client of include/tfrec/storage.h (bench/storage.c) as pytest fixtures,
for test_storage_interop.py and test_storage_tls.py.

- `server`: (endpoint, admin URL, environment) of a server on loopback for
  the module, started here unless STORAGE_EMULATOR_HOST and
  TFREC_TEST_GCS_ADMIN are already set.
- `ours`: bench/storage.c compiled against the build's shared libraries.
"""
import os
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """(endpoint, admin URL, environment) of a running storage test server."""
    env = dict(os.environ)
    npm_dir = subprocess.run([os.path.join(REPO, "scripts", "install-npm-deps.sh")],
                             stdout=subprocess.PIPE, check=True, timeout=900).stdout.decode().strip()
    env["TFREC_NPM_DIR"] = npm_dir
    if env.get("STORAGE_EMULATOR_HOST") and env.get("TFREC_TEST_GCS_ADMIN"):
        yield env["STORAGE_EMULATOR_HOST"], env["TFREC_TEST_GCS_ADMIN"], env
        return
    log = tmp_path_factory.mktemp("gcs") / "server.log"
    with open(log, "wb") as errf:
        proc = subprocess.Popen(["node", os.path.join(REPO, "tests", "storage", "gcs_emulator.js")],
                                stdout=subprocess.PIPE, stderr=errf, env=env)
    try:
        line = proc.stdout.readline().decode()
        if not line.startswith("gcs_emulator port="):
            pytest.fail("storage test server did not start: %s" % log.read_text())
        fields = dict(f.split("=") for f in line.split()[1:])
        env["STORAGE_EMULATOR_HOST"] = "http://127.0.0.1:%s" % fields["port"]
        env["TFREC_TEST_GCS_ADMIN"] = "http://127.0.0.1:%s" % fields["admin"]
        yield env["STORAGE_EMULATOR_HOST"], env["TFREC_TEST_GCS_ADMIN"], env
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def ours(build_dir, tmp_path_factory):
    """Path of bench/storage.c compiled against the build's shared libraries."""
    exe = str(tmp_path_factory.mktemp("prog") / "storage")
    subprocess.run(["cc", "-std=c11", "-O1", "-D_GNU_SOURCE", "-I" + os.path.join(REPO, "include"),
                    os.path.join(REPO, "bench", "storage.c"), "-o", exe, "-L" + build_dir,
                    "-ltfrec-storage", "-ltfrec", "-pthread", "-Wl,-rpath," + build_dir],
                   check=True, timeout=120)
    return exe
