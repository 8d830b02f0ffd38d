"""tfrec.bigtable.Reader against a Bigtable that is not there (a closed
loopback port): the first read raises within seconds, naming the endpoint
and how long it tried, instead of blocking for the ten minutes of retries."""
# needs: tfrec-bigtable
import socket
import time

import pytest


@pytest.fixture(scope="module")
def tfrec(bigtable_tfrec):
    return bigtable_tfrec


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.mark.parametrize("shards", [None, (0, 2)])
def test_reader_reports_unreachable_server(tfrec, shards):
    addr = "127.0.0.1:%d" % closed_port()
    t0 = time.monotonic()
    with pytest.raises(tfrec.bigtable.BigtableError) as e:
        if shards:  # making the split plan asks SampleRowKeys
            tfrec.bigtable.plan("p", "i", "t", shards[1], endpoint=addr)
        with tfrec.bigtable.Reader("p", "i", "t", endpoint=addr) as r:
            next(iter(r))
    took = time.monotonic() - t0
    assert took < 15, took
    assert "cannot reach Bigtable at " + addr in str(e.value), str(e.value)
    assert "tried for" in str(e.value), str(e.value)
