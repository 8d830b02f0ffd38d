"""Shared pytest fixtures for libtfrec's Python tests.

- `build_dir`: the build directory (env TFREC_BUILD, default <repo>/build).
- `tfrec_bin`, `imagenet2tfrec_bin`: paths of those tools in it (the test
  fails when one was not built); `built_tool(build_dir, name)` for others.
- `pb2`: tf.Example message classes (`pb2.Example`, `pb2.Feature`, ...)
  generated from our own proto/ with `protoc --python_out` into a temporary
  directory once per session; nothing generated is ever committed.
- `run_tfrec(*args, input=None)`: run the tool, returning CompletedProcess
  with bytes stdout/stderr.
- `bigtable_tfrec`: the tfrec package, failing the test when
  libtfrec-bigtable was not built; `load_tfrec_with(build_dir, *features)`
  the same for any of tfrec.features() ("bigtable", "convert_images").
- `bigtable_emulator`: one Bigtable emulator per test module
  (scripts/emulator.sh), its address in BIGTABLE_EMULATOR_HOST while the
  module runs; the fixture's value is that address.

tfrecord_ref (next to this file) is importable from every test module.
"""
import importlib
import os
import subprocess
import sys
import types

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from bindings_env import load_tfrec_with  # noqa: E402 (found through the line above)


def locate_build_dir():
    """TFREC_BUILD if set, else <repo>/build."""
    return os.path.abspath(os.environ.get("TFREC_BUILD") or os.path.join(REPO, "build"))


@pytest.fixture(scope="session")
def build_dir():
    d = locate_build_dir()
    if not os.path.isdir(d):
        pytest.fail("build directory %s does not exist (set TFREC_BUILD)" % d)
    return d


def built_tool(build_dir, name):
    """Path of bin/NAME in the build; fails the test when it was not built."""
    path = os.path.join(build_dir, "bin", name)
    if not os.access(path, os.X_OK):
        pytest.fail("%s not built" % path)
    return path


@pytest.fixture(scope="session")
def tfrec_bin(build_dir):
    return built_tool(build_dir, "tfrec")


@pytest.fixture(scope="session")
def imagenet2tfrec_bin(build_dir):
    return built_tool(build_dir, "imagenet2tfrec")


@pytest.fixture(scope="session")
def run_tfrec(tfrec_bin):
    def run(*args, input=None, timeout=600):
        return subprocess.run([tfrec_bin] + [str(a) for a in args], input=input,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=timeout)
    return run


def generate_pb2(out_dir, protos=("tensorflow/core/example/example.proto",
                                  "tensorflow/core/example/feature.proto")):
    """Compile protos from <repo>/proto into out_dir with protoc; returns out_dir."""
    proto_root = os.path.join(REPO, "proto")
    subprocess.run(["protoc", "-I" + proto_root, "--python_out=" + out_dir] +
                   [os.path.join(proto_root, p) for p in protos], check=True)
    return out_dir


@pytest.fixture(scope="session")
def pb2(tmp_path_factory):
    """tf.Example classes from our proto/: pb2.Example, pb2.Features, ..."""
    out = str(tmp_path_factory.mktemp("pb2"))
    generate_pb2(out)
    sys.path.insert(0, out)
    try:
        example_pb2 = importlib.import_module("tensorflow.core.example.example_pb2")
        feature_pb2 = importlib.import_module("tensorflow.core.example.feature_pb2")
    finally:
        sys.path.remove(out)
    ns = types.SimpleNamespace()
    for mod in (feature_pb2, example_pb2):
        for name in dir(mod):
            if not name.startswith("_"):
                setattr(ns, name, getattr(mod, name))
    ns.example_pb2, ns.feature_pb2 = example_pb2, feature_pb2
    return ns


@pytest.fixture(scope="module")
def bigtable_tfrec(build_dir):
    return load_tfrec_with(build_dir, "bigtable")


@pytest.fixture(scope="module")
def bigtable_emulator(tmp_path_factory):
    script = os.path.join(REPO, "scripts", "emulator.sh")
    log = tmp_path_factory.mktemp("emu") / "emulator.log"
    out = subprocess.run([script, "start", str(log)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    addr, pid = out.stdout.split()
    old = os.environ.get("BIGTABLE_EMULATOR_HOST")
    os.environ["BIGTABLE_EMULATOR_HOST"] = addr
    yield addr
    if old is None:
        del os.environ["BIGTABLE_EMULATOR_HOST"]
    else:
        os.environ["BIGTABLE_EMULATOR_HOST"] = old
    subprocess.run([script, "stop", pid], timeout=60)
