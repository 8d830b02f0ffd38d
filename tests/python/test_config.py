"""Settings through the API (include/tfrec/config.h, python/tfrec/config.py):
each one the library reads from the environment can be set instead, and
docs/config.md lists every one."""
import os

import pytest

from bindings_env import load_tfrec


@pytest.fixture
def tfrec(build_dir):
    return load_tfrec(build_dir)


def test_set_wins_over_the_environment_and_none_forgets(tfrec, monkeypatch):
    monkeypatch.setenv("TFREC_BT_CONNECTIONS", "3")
    assert tfrec.get_config("TFREC_BT_CONNECTIONS") == "3"
    tfrec.set_config("TFREC_BT_CONNECTIONS", "5")
    try:
        assert tfrec.get_config("TFREC_BT_CONNECTIONS") == "5"
        tfrec.set_config("TFREC_BT_CONNECTIONS", "")
        assert tfrec.get_config("TFREC_BT_CONNECTIONS") is None
    finally:
        tfrec.set_config("TFREC_BT_CONNECTIONS", None)
    assert tfrec.get_config("TFREC_BT_CONNECTIONS") == "3"
    with pytest.raises(tfrec.InvalidArgumentError, match="NO_SUCH"):
        tfrec.set_config("NO_SUCH", "1")


def test_docs_list_every_setting(tfrec):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    text = open(os.path.join(root, "docs", "config.md")).read()
    names = tfrec.config_names()
    assert "GOOGLE_APPLICATION_CREDENTIALS" in names and "TFREC_BT_POLLERS" in names
    missing = [n for n in names if "`%s`" % n not in text]
    assert not missing, missing
