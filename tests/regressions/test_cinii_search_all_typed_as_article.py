"""cinii-mcp's original typed every record of ``cinii_search_all`` as ``article``
(japan-apis.md §3.2), so a book or a KAKEN project was cited as an article. Now each item keeps
its own type (``dc:type``), and one without a type says ``unknown`` rather than guessing."""

from __future__ import annotations

import json

import pytest
from tests.cinii.upstream import Upstream, service

from readingroom.cinii.fake import canned
from readingroom.core.clock import FakeClock

pytestmark = pytest.mark.anyio


async def test_each_item_of_a_cross_type_search_keeps_its_type():
    data = json.loads(canned("all.json"))
    data["items"].append({**data["items"][0], "@id": "https://cir.nii.ac.jp/crid/9990000000000000099"})
    del data["items"][-1]["dc:type"]
    body = json.dumps(data, ensure_ascii=False).encode()
    up = Upstream(FakeClock(), script=lambda path, params: (200, {}, body))
    env = await service(up).search("cinii_search_all", "all", {"q": "漱石"})
    assert [(i["record_type"], i.get("type_label")) for i in env.items] == [
        ("article", "Article"), ("book", "Book"), ("project", "Project"),
        ("data", "Dataset"), ("unknown", None)]
