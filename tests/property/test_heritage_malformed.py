"""Property (issue 18 §3): a damaged heritage answer is a valid result or a structured error.

Every canned answer of the loopback fake (``app/readingroom/heritage/canned/``) and every real
sample (``<samples>/heritage/``) of every heritage source — SIKART and SNM over CKAN, Memobase,
Dodis, Helveticat SRU and OAI-PMH (the real e-rara, e-manuscripta, swisscovery and Zenodo
samples stand in for the shapes Helveticat has not been recorded in) — is served to the tool
that reads it, mutated by ``tests/property/mutate.py`` (wrong types, nulls, huge numbers, deep
values, missing keys, emptied containers, truncated XML). For every mutant:

* the service answers (no exception: over MCP that would be ``INTERNAL_ERROR``), the envelope
  serialises and renders as Markdown, and its code is never ``INTERNAL_ERROR``;
* a success that reads as empty (no item and ``match_type: none``, a total of 0, or a source
  ``empty``) is allowed only when the mutant really is empty: an empty list of records with a
  count of 0 or none, SRU ``numberOfRecords`` 0 with no record, OAI ``noRecordsMatch``. Anything
  else would be a fabricated zero.

Bounded and derandomised, in-process over ``httpx.MockTransport`` with a fake clock: there are
44 samples over six sources (SIKART, SNM, Memobase, Dodis, Helveticat SRU, Helveticat OAI), so
each sample gets a quarter of the suite's per-provider count (``PROPERTY_EXAMPLES // 4``, 10
by default: 440 mutants, 50-160 per source); with ``READINGROOM_PROPERTY_EXAMPLES`` set
(``.ci/run`` raises it), each sample gets that many (200 each: 8,800 mutants, all passing).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from hypothesis import given
from lxml import etree

from readingroom.core.clock import FakeClock
from readingroom.core.envelope import Envelope
from readingroom.core.xmlsafe import XmlParseError, parse_xml
from readingroom.heritage.catalogue import Catalogue
from readingroom.heritage.fake import ACTIVE, canned
from readingroom.heritage.render import render_markdown
from readingroom.heritage.service import HeritageService
from readingroom.heritage.shape import count_of
from readingroom.heritage.upstreams.helveticat import HelveticatClient

from ..conftest import samples_dir
from .mutate import PROPERTY_EXAMPLES, json_mutants, property_settings, xml_mutants

CANNED = Path(__file__).resolve().parents[2] / "app" / "readingroom" / "heritage" / "canned"
SRU = "https://helveticat.test/view/sru/41SNL_51_INST"
OAI = "https://helveticat.test/view/oai/41SNL_51_INST/request"
OAI_NS = "{http://www.openarchives.org/OAI/2.0/}"
EXAMPLES = (PROPERTY_EXAMPLES if "READINGROOM_PROPERTY_EXAMPLES" in os.environ
            else max(1, PROPERTY_EXAMPLES // 4))
"""Mutants per sample."""


def encode(value: Any) -> bytes:
    """JSON text of ``value`` without recursion (a 900-deep mutant is 1,800 containers)."""
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, _Token):
            out.append(node.text)
        elif isinstance(node, dict):
            out.append("{")
            parts: list[Any] = []
            for i, (k, v) in enumerate(node.items()):
                parts += [_Token(("," if i else "") + json.dumps(str(k)) + ":"), v]
            stack += [_Token("}"), *reversed(parts)]
        elif isinstance(node, list):
            out.append("[")
            parts = []
            for i, v in enumerate(node):
                if i:
                    parts.append(_Token(","))
                parts.append(v)
            stack += [_Token("]"), *reversed(parts)]
        else:
            out.append(json.dumps(node))
    return "".join(out).encode("utf-8")


@dataclass(frozen=True)
class _Token:
    text: str


# --- what "really empty" means for each shape ----------------------------------------------

def _zero(value: Any) -> bool:
    return value is None or count_of(value)[0] == 0


def ckan_empty(field: str, count: str) -> Callable[[Any], bool]:
    def empty(payload: Any) -> bool:
        result = payload.get("result") if isinstance(payload, dict) else None
        return (isinstance(result, dict) and result.get(field) == []
                and _zero(result.get(count)))
    return empty


def memobase_empty(payload: Any) -> bool:
    return (isinstance(payload, dict) and payload.get("hydra:member") == []
            and _zero(payload.get("hydra:totalItems")))


def dodis_empty(payload: Any) -> bool:
    return payload == [] or (isinstance(payload, dict) and payload.get("results") == [])


def sru_empty(body: bytes) -> bool:
    try:
        root = parse_xml(body)
    except XmlParseError:
        return False
    counts = [el.text for el in root.iter() if isinstance(el.tag, str)
              and etree.QName(el).localname == "numberOfRecords"]
    records = [el for el in root.iter() if isinstance(el.tag, str)
               and etree.QName(el).localname == "record"]
    return counts == ["0"] and not records


def oai_no_records(body: bytes) -> bool:
    try:
        root = parse_xml(body)
    except XmlParseError:
        return False
    return any(el.get("code") == "noRecordsMatch" for el in root.iter(f"{OAI_NS}error"))


def never_empty(_payload: Any) -> bool:
    return False


# --- which call reads which sample ---------------------------------------------------------

Call = Callable[["Services"], Any]


@dataclass
class Services:
    heritage: HeritageService
    helveticat: Catalogue


@dataclass(frozen=True)
class Driver:
    """How a sample reaches a tool: the path it answers, the call, what 'empty' means."""

    kind: str  # json | xml
    answers: Callable[[httpx.Request], bool]
    call: Call
    empty: Callable[[Any], bool]


def _path_is(*ends: str) -> Callable[[httpx.Request], bool]:
    return lambda r: r.url.path.endswith(ends)


def _verb(verb: str) -> Callable[[httpx.Request], bool]:
    return lambda r: r.url.params.get("verb") == verb


def _artists(s: Services) -> Any:
    return s.heritage.search_artists("Probe", None, 5, 0, arguments={})


def _artist(hauptnr: str) -> Call:
    return lambda s: s.heritage.get_artist(hauptnr, arguments={})


def _museum(s: Services) -> Any:
    return s.heritage.search_museum("Waffen", None, 5, 0, arguments={})


def _browse(s: Services) -> Any:
    return s.heritage.browse_collection(ACTIVE, None, 5, 0, arguments={})


def _memory(collection: str) -> Call:
    return lambda s: s.heritage.search_memory("Probe", collection, None, None, None, 5, 0,
                                              arguments={})


def _item(collection: str, item_id: str) -> Call:
    return lambda s: s.heritage.get_memory_item(collection, item_id, arguments={})


def _sru(s: Services) -> Any:
    return s.helveticat.search(query="Volksschule", limit=10)


def _collection(s: Services) -> Any:
    return s.helveticat.search(set_spec="swissbook", limit=10)


def _publication(identifier: str) -> Call:
    return lambda s: s.helveticat.get_publication(identifier)


def _sets(s: Services) -> Any:
    return s.helveticat.list_collections()


ROWS = _path_is("/datastore_search")
PACKAGES = _path_is("/package_search")
RESOURCE = _path_is("/resource_show")


def _memobase_search(request: httpx.Request) -> bool:
    return request.url.host == "api.memobase.ch" and request.url.path == "/"


MEMOBASE_SEARCH = _memobase_search

DRIVERS: dict[str, Driver] = {
    # SIKART (CKAN DataStore)
    "sikart_search.json": Driver("json", ROWS, _artists, ckan_empty("records", "total")),
    "sikart_empty.json": Driver("json", ROWS, _artists, ckan_empty("records", "total")),
    "sikart_ckan_datastore_search_giacometti.json": Driver(
        "json", ROWS, _artists, ckan_empty("records", "total")),
    "sikart_detail.json": Driver("json", ROWS, _artist("9900001"), never_empty),
    "sikart_detail_empty.json": Driver("json", ROWS, _artist("9900001"), never_empty),
    "sikart_ckan_datastore_filter_hauptnr.json": Driver("json", ROWS, _artist("4005571"),
                                                        never_empty),
    # SNM (CKAN package_search, resource_show, DataStore rows)
    "snm_packages.json": Driver("json", PACKAGES, _museum, ckan_empty("results", "count")),
    "snm_empty.json": Driver("json", PACKAGES, _museum, ckan_empty("results", "count")),
    "snm_ckan_package_search_museum.json": Driver("json", PACKAGES, _museum,
                                                  ckan_empty("results", "count")),
    "snm_rows.json": Driver("json", ROWS, _browse, ckan_empty("records", "total")),
    "resource_active.json": Driver("json", RESOURCE, _browse, never_empty),
    "resource_inactive.json": Driver("json", RESOURCE, _browse, never_empty),
    "resource_missing.json": Driver("json", RESOURCE, _browse, never_empty),
    # Memobase
    "memobase_search.json": Driver("json", MEMOBASE_SEARCH, _memory("memobase"),
                                   memobase_empty),
    "memobase_empty.json": Driver("json", MEMOBASE_SEARCH, _memory("memobase"),
                                  memobase_empty),
    "memobase_search_zuerich_3of51119.json": Driver("json", MEMOBASE_SEARCH,
                                                    _memory("memobase"), memobase_empty),
    "memobase_record.json": Driver("json", _path_is("/record/tst-001-1"),
                                   _item("memobase", "tst-001-1"), never_empty),
    "memobase_record_abb-001-1603_39_Foto_St.json": Driver(
        "json", _path_is("/record/abb-001-1603_39_Foto_St"),
        _item("memobase", "mbr:abb-001-1603_39_Foto_St"), never_empty),
    # Dodis
    "dodis_query.json": Driver("json", _path_is("/solr/query"), _memory("dodis"), dodis_empty),
    "dodis_empty.json": Driver("json", _path_is("/solr/query"), _memory("dodis"), dodis_empty),
    "dodis_solr_query_zuerich_3of5.json": Driver("json", _path_is("/solr/query"),
                                                 _memory("dodis"), dodis_empty),
    "dodis_full.json": Driver("json", _path_is("/solr/full/G90001"),
                              _item("dodis", "G90001"), never_empty),
    "dodis_solr_full_G27.json": Driver("json", _path_is("/solr/full/G27"),
                                       _item("dodis", "G27"), never_empty),
    # Helveticat SRU (and swisscovery, the same Alma software, in MARCXML)
    "helveticat_sru.xml": Driver("xml", _path_is("/41SNL_51_INST"), _sru, sru_empty),
    "helveticat_sru_empty.xml": Driver("xml", _path_is("/41SNL_51_INST"), _sru, sru_empty),
    "helveticat_sru_dc_sammlung_3of12675.xml": Driver("xml", _path_is("/41SNL_51_INST"), _sru,
                                                      sru_empty),
    "helveticat_sru_dc_volksschule_zuerich_4hits.xml": Driver(
        "xml", _path_is("/41SNL_51_INST"), _sru, sru_empty),
    "swisscovery_slsp_sru_marcxml_pestalozzi.xml": Driver("xml", _path_is("/41SNL_51_INST"),
                                                          _sru, sru_empty),
    # Helveticat OAI-PMH (and e-rara, e-manuscripta, Zenodo for shapes Alma was never
    # recorded in: oai_dc pages with tokens, paged sets, real <error>s)
    "helveticat_oai_listrecords.xml": Driver("xml", _verb("ListRecords"), _collection,
                                             oai_no_records),
    "helveticat_oai_listrecords_last.xml": Driver("xml", _verb("ListRecords"), _collection,
                                                  oai_no_records),
    "erara_oai_listrecords_oai_dc.xml": Driver("xml", _verb("ListRecords"), _collection,
                                               oai_no_records),
    "emanuscripta_oai_listrecords_oai_dc.xml": Driver("xml", _verb("ListRecords"), _collection,
                                                      oai_no_records),
    "zenodo_oai_error_noRecordsMatch_listrecords.xml": Driver(
        "xml", _verb("ListRecords"), _collection, oai_no_records),
    "zenodo_oai_error_badResumptionToken_listrecords.xml": Driver(
        "xml", _verb("ListRecords"), _collection, oai_no_records),
    "zenodo_oai_error_badArgument_metadataPrefix.xml": Driver(
        "xml", _verb("ListRecords"), _collection, oai_no_records),
    "helveticat_oai_listsets.xml": Driver("xml", _verb("ListSets"), _sets, never_empty),
    "helveticat_oai_listsets_68sets.xml": Driver("xml", _verb("ListSets"), _sets, never_empty),
    "erara_oai_listsets.xml": Driver("xml", _verb("ListSets"), _sets, never_empty),
    "helveticat_oai_getrecord.xml": Driver(
        "xml", _verb("GetRecord"), _publication("991090000000103976"), never_empty),
    "helveticat_oai_getrecord_marc21.xml": Driver(
        "xml", _verb("GetRecord"), _publication("991016034239703976"), never_empty),
    "helveticat_oai_iddoesnotexist.xml": Driver(
        "xml", _verb("GetRecord"), _publication("991090000000103976"), never_empty),
    "zenodo_oai_error_idDoesNotExist_getrecord.xml": Driver(
        "xml", _verb("GetRecord"), _publication("991090000000103976"), never_empty),
}
"""Every canned and real heritage sample, and the call that reads it."""

_OTHERS = {  # what the other requests of a call get, unmutated
    "/resource_show": "resource_active.json", "/datastore_search": "snm_rows.json",
}


def _samples() -> list[Any]:
    found = [pytest.param(p, id=f"canned/{p.name}") for p in sorted(CANNED.iterdir())
             if p.suffix in (".json", ".xml")]
    real = samples_dir() / "heritage"
    if real.is_dir():
        found += [pytest.param(p, id=f"real/{p.name}") for p in sorted(real.iterdir())
                  if p.suffix in (".json", ".xml")]
    else:
        found.append(pytest.param(None, id="real-samples-missing"))
    return found


def _run(driver: Driver, body: bytes) -> Envelope:
    """Serve ``body`` where the driver says, run its call, return the envelope."""

    def handle(request: httpx.Request) -> httpx.Response:
        if driver.answers(request):
            return httpx.Response(200, content=body)
        for end, name in _OTHERS.items():
            if request.url.path.endswith(end):
                return httpx.Response(200, content=canned(name))
        return httpx.Response(404, content=b"not scripted")

    async def main() -> Envelope:
        clock = FakeClock()
        transport = httpx.MockTransport(handle)
        env = {"MCP_RECEIPT_LOG": ""}
        services = Services(
            HeritageService(env=env, transport=transport, clock=clock, jitter=lambda: 0.5),
            Catalogue(HelveticatClient(sru_url=SRU, oai_url=OAI, transport=transport,
                                               clock=clock), env=env, clock=clock))
        try:
            return await driver.call(services)
        finally:
            await services.heritage.aclose()
            await services.helveticat.client.aclose()

    return anyio.run(main)


def _reads_as_empty(env: Envelope) -> bool:
    result = env.result
    if env.error is not None or result is None:
        return False
    return (not env.items and (result.match_type == "none" or result.total == 0
                               or any(s.status == "empty" for s in env.sources)))


def check(driver: Driver, what: str, body: bytes, payload: Any) -> None:
    """The property for one (possibly mutated) answer."""
    env = _run(driver, body)
    text = env.to_json()  # serialises
    markdown = render_markdown(env)
    assert "INTERNAL_ERROR" not in text and markdown, what
    if env.error is not None:
        assert env.error.code != "INTERNAL_ERROR" and env.error.message, what
        return
    if _reads_as_empty(env):
        assert driver.empty(payload), f"fabricated zero after: {what}"


@pytest.mark.parametrize("path", _samples())
def test_every_mutant_is_a_result_or_a_structured_error(path: Path | None):
    if path is None:
        pytest.skip(f"shared samples not found at {samples_dir()} (set READINGROOM_SAMPLES)")
    assert path.name in DRIVERS, f"no driver for sample {path.name}: add one"
    driver = DRIVERS[path.name]
    original = path.read_bytes()
    if driver.kind == "json":
        payload = json.loads(original)
        check(driver, "unmutated", original, payload)

        @property_settings(EXAMPLES)
        @given(json_mutants(payload))
        def mutated(case: tuple[str, Any]) -> None:
            what, mutant = case
            check(driver, what, encode(mutant), mutant)
    else:
        check(driver, "unmutated", original, original)

        @property_settings(EXAMPLES)
        @given(xml_mutants(original))
        def mutated(case: tuple[str, bytes]) -> None:
            what, mutant = case
            check(driver, what, mutant, mutant)

    mutated()


def test_every_sample_has_a_driver():
    names = {p.name for p in CANNED.iterdir() if p.suffix in (".json", ".xml")}
    real = samples_dir() / "heritage"
    if real.is_dir():
        names |= {p.name for p in real.iterdir() if p.suffix in (".json", ".xml")}
    assert names <= set(DRIVERS), sorted(names - set(DRIVERS))


def test_the_oracle_knows_a_fabricated_zero():
    driver = DRIVERS["sikart_search.json"]
    payload: Mapping[str, Any] = json.loads(canned("sikart_search.json"))
    emptied = {**payload, "result": {**payload["result"], "records": []}}
    assert not driver.empty(emptied)  # total 2 with no record: not really empty
    assert driver.empty({"success": True, "result": {"records": [], "total": 0}})
    assert encode(emptied) and json.loads(encode(emptied)) == emptied
