"""Import the tfrec Python package from python/ against the build under test.

The bindings find libtfrec.so through TFREC_LIBRARY first; the tests point it
at the build directory the suite runs against (TFREC_BUILD, as set by
tests/run.sh), so a stale library elsewhere can never be picked up.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PYTHON_DIR = os.path.join(REPO, "python")


def load_tfrec(build_dir):
    os.environ["TFREC_LIBRARY"] = os.path.join(build_dir, "libtfrec.so")
    if PYTHON_DIR not in sys.path:
        sys.path.insert(0, PYTHON_DIR)
    import tfrec
    assert os.path.realpath(tfrec.library_path) == os.path.realpath(os.environ["TFREC_LIBRARY"])
    return tfrec


# The library part behind each optional feature, for the failure message.
FEATURE_PARTS = {"bigtable": "libtfrec-bigtable", "convert_images": "libtfrec-image"}


def load_tfrec_with(build_dir, *features):
    """The tfrec package; fails the test when a feature's part is missing."""
    import pytest
    t = load_tfrec(build_dir)
    have = t.features()
    missing = [FEATURE_PARTS.get(f, f) for f in features if not have[f]]
    if missing:
        pytest.fail("%s not built or not found: %s" % (" / ".join(missing), t.parts()))
    return t
