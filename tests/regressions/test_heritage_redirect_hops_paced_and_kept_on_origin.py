"""Regression (issue 18 §11): heritage's redirect hops skipped pacing and left the origin.

* Redirect hops were sent back to back (6 requests in 16 ms): the 0.2 s per-host floor held
  for the first request only. Every hop now waits for the host's slot.
* A redirect to another port of an allowed host was followed. A hop must keep the scheme,
  host and port of the request; another port is refused unfetched (``API_ERROR`` naming it).
On loopback, with the real clock (three hops: about 0.6 s).
"""

from __future__ import annotations

import itertools
import socket

import pytest
from tests.heritage.loopback import json_answer, on_loopback

from readingroom.core.clock import SystemClock
from readingroom.heritage.fake import canned

pytestmark = pytest.mark.anyio

HOPS = ["datastore_search", "hop1", "hop2", "hop3"]
FLOOR_S = 0.2
"""The per-host floor between request starts (``egress.MIN_INTERVAL_S``)."""


async def test_every_redirect_hop_keeps_the_per_host_floor():
    def script(prefix: str, path: str, _params: dict[str, str], _body: str):
        if prefix != "ckan":
            return None
        if path in HOPS[:-1]:
            return 302, {"Location": f"/ckan/{HOPS[HOPS.index(path) + 1]}"}, b""
        return 200, json_answer({})[1], canned("sikart_search.json")

    async with on_loopback(clock=SystemClock()) as h:
        h.script(script)
        env, text, error = await h.call("heritage_search_artists", {"query": "Probe"})
        arrivals = [r.arrived for r in h.fake.requests("ckan")]
    assert not error and env["items"], text[:300]
    assert len(arrivals) == len(HOPS)
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    # Starts are paced; the fake stamps each arrival after its accept, which a loaded machine
    # may delay by tens of milliseconds. Unpaced hops arrived 5 ms apart.
    assert min(gaps) >= FLOOR_S / 2, gaps
    assert sum(gaps) >= FLOOR_S * (len(HOPS) - 1) - 0.1, gaps


async def test_a_redirect_to_another_port_of_an_allowed_host_is_refused_unfetched():
    other = socket.socket()
    other.bind(("127.0.0.1", 0))
    other.listen(4)
    other.setblocking(False)
    port = other.getsockname()[1]
    try:
        async with on_loopback() as h:
            h.script(lambda p, _path, _q, _b: (302, {"Location": f"http://127.0.0.1:{port}/x"},
                                               b"") if p == "ckan" else None)
            env, _text, error = await h.call("heritage_search_artists", {"query": "Probe"})
        with pytest.raises(BlockingIOError):
            other.accept()  # nobody connected to the other port
    finally:
        other.close()
    assert error and env["error"]["code"] == "API_ERROR"
    assert f"127.0.0.1:{port}" in env["error"]["message"]
    assert "scheme, host and port" in env["error"]["message"]
