"""What `with` does for the package's objects (tfrec/_closing.py): inputs
are closed however the block ends; outputs are committed when it ends
normally and discarded when it raises, and the exception goes on."""
import pytest

from bindings_env import load_tfrec


@pytest.fixture(scope="module")
def closing(build_dir):
    load_tfrec(build_dir)
    from tfrec import _closing
    return _closing


def recorder(base):
    class Obj(base):
        def __init__(self):
            self.calls = []

        def close(self):
            self.calls.append("close")

        def _discard(self):
            self.calls.append("discard")
    return Obj()


def test_inputs_close_either_way(closing):
    with recorder(closing.Closing) as o:
        pass
    assert o.calls == ["close"]
    with pytest.raises(KeyError):
        with recorder(closing.Closing) as o:
            raise KeyError("x")
    assert o.calls == ["close"]


def test_outputs_commit_or_discard(closing):
    with recorder(closing.Committing) as o:
        pass
    assert o.calls == ["close"]
    with pytest.raises(KeyError):
        with recorder(closing.Committing) as o:
            raise KeyError("x")
    assert o.calls == ["discard"]


def test_classes_use_them(build_dir):
    tfrec = load_tfrec(build_dir)
    assert issubclass(tfrec.Dataset, tfrec._closing.Closing)
    assert issubclass(tfrec.RandomAccessReader, tfrec._closing.Closing)
    if tfrec.features()["bigtable"]:
        assert issubclass(tfrec.bigtable.Reader, tfrec._closing.Closing)
        assert tfrec.bigtable.Writer._discard is tfrec.bigtable.Writer.abandon
