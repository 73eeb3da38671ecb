"""Every real CKAN, Memobase and Dodis sample parsed, each with its recorded expectation.

Read in place from ``<samples>/heritage`` (the Helveticat samples are
``tests/heritage/helveticat/test_samples.py``'s). :data:`EXPECTED` names every file of the
folder that these tests own; an unexpected non-Helveticat file fails under
``READINGROOM_REQUIRE_SAMPLES=1``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from readingroom.heritage.upstreams import ckan, dodis, memobase

EXPECTED = {
    "sikart_ckan_datastore_search_giacometti.json",
    "sikart_ckan_datastore_filter_hauptnr.json",
    "snm_ckan_package_search_museum.json",
    "memobase_search_zuerich_3of51119.json",
    "memobase_record_abb-001-1603_39_Foto_St.json",
    "dodis_solr_query_zuerich_3of5.json",
    "dodis_solr_full_G27.json",
}
_HELVETICAT_SIDE = ("helveticat_", "swisscovery_", "erara_", "emanuscripta_", "zenodo_")


def _load(samples: Path, name: str) -> object:
    return json.loads((samples / "heritage" / name).read_text("utf-8"))


def test_every_source_sample_has_an_expectation(samples: Path):
    present = {p.name for p in (samples / "heritage").glob("*.json")
               if not p.name.startswith(_HELVETICAT_SIDE)}
    unexpected = present - EXPECTED
    if unexpected and os.environ.get("READINGROOM_REQUIRE_SAMPLES") == "1":
        pytest.fail(f"samples without an expectation: {sorted(unexpected)}")
    assert present >= EXPECTED


def test_sikart_search_rows_carry_their_own_licence(samples: Path):
    page, fields = ckan.parse_datastore(
        _load(samples, "sikart_ckan_datastore_search_giacometti.json"), limit=5,
        readable=ckan.SIKART_ROW)
    assert (page.total, len(page.rows), fields) == (12, 3, ["_id", "HAUPTNR", "NUTZUNGSLIZENZ"])
    assert page.has_more and page.notes == []
    items = [ckan.artist_item(r) for r in page.rows]
    assert [i["id"] for i in items] == ["4005571", "4000049", "4023387"]
    first = items[0]
    assert first["title"] == "Diego Giacometti"
    assert first["life_dates"] == "* 15.11.1902 Borgonovo, + 15.7.1985 Paris"
    assert first["permalink"].startswith("https://recherche.sik-isea.ch/de/sik:person-4005571")
    # The regression: the original said CC BY; every row says CC-BY-NC-SA.
    assert {i["licence"] for i in items} == {"CC BY-NC-SA"}
    assert {i["licence_from"] for i in items} == {"record"}
    assert "rank" not in first["record"] and "_id" not in first["record"]


def test_sikart_filter_by_hauptnr(samples: Path):
    page, _ = ckan.parse_datastore(
        _load(samples, "sikart_ckan_datastore_filter_hauptnr.json"), limit=1,
        readable=ckan.SIKART_ROW)
    assert (page.total, len(page.rows), page.has_more) == (1, 1, False)
    item = ckan.artist_item(page.rows[0])
    assert (item["id"], item["canton"], item["licence"]) == ("4005571", "GR", "CC BY-NC-SA")


def test_snm_package_search(samples: Path):
    page = ckan.parse_package_search(
        _load(samples, "snm_ckan_package_search_museum.json"), limit=5)
    packages = page.rows
    assert (page.total, len(packages), page.has_more) == (10, 3, True)
    assert {p["organization"]["name"] for p in packages} == {"schweizerisches-nationalmuseum-snm"}
    items = [ckan.dataset_item(p) for p in packages]
    first = items[0]
    assert first["title"].startswith("Repräsentative Auswahl aus der Sammlung \"Spezialsammlungen")
    assert first["permalink"] == ("https://opendata.swiss/de/dataset/reprasentative-auswahl-aus-"
                                  "der-sammlung-spezialsammlungen-des-schweizerischen-"
                                  "nationalmuseums")
    assert first["licence"] == "https://opendata.swiss/terms-of-use#terms_by"
    assert first["resources"][0]["id"] == "e84174f9-4c6e-49fb-8b51-81f78696e29a"
    # Every recorded resource is a download without a DataStore: browse must refuse them.
    assert not any(r["datastore_active"] for i in items for r in i["resources"])
    assert sum(len(i["resources"]) for i in items) == 5


def test_memobase_search(samples: Path):
    page = memobase.parse_search(_load(samples, "memobase_search_zuerich_3of51119.json"),
                                 limit=5)
    items = [memobase.record_item(r) for r in page.rows]
    assert (page.total, len(items), page.has_more) == (51119, 3, True)
    first = items[0]
    assert (first["id"], first["title"], first["type"], first["date"]) == (
        "abb-001-1603_39_Foto_St", "Zürich", "Foto", "1939")
    # The digital object's own usage rule, not the physical one's InC-EDU.
    assert first["licence_item"] == ("Creative Commons - Attribution, Non-Commercial, "
                                     "ShareAlike (BY-NC-SA)")
    assert first["rights_url"] == "http://creativecommons.org/licenses/by-nc-sa/4.0/"
    assert first["rights_holder"] == "Die Verwertungsrechte liegen beim Burgerarchiv."
    assert first["permalink"] == "https://memobase.ch/record/abb-001-1603_39_Foto_St"
    assert items[1]["licence_item"] == "In Copyright (InC)"
    assert items[1]["description"].startswith('"Zürich" - Bootsanlegestelle')


def test_memobase_record(samples: Path):
    item = memobase.parse_record(_load(samples, "memobase_record_abb-001-1603_39_Foto_St.json"),
                                 "mbr:abb-001-1603_39_Foto_St")
    assert item["id"] == "abb-001-1603_39_Foto_St" and "unreadable_fields" not in item
    assert item["titles"] == ["Zürich"]
    assert item["identifiers"] == ["abb-001-1603_39_Foto_St", "1603_39_Foto_St"]
    assert item["part_of"] == "mbrs:abb-001"
    assert item["licence_from"] == "record" and item["licence_item"]


def test_dodis_query_is_a_bare_list(samples: Path):
    page = dodis.parse_query(_load(samples, "dodis_solr_query_zuerich_3of5.json"), limit=5)
    items = [dodis.hit_item(h) for h in page.rows]
    assert (page.total, page.has_more) == (None, False)  # 3 of 5 asked: a short page
    assert [(i["id"], i["title"], i["type"]) for i in items] == [
        ("G27", "Zürich", "Place"), ("G3361", "Zürich (Kanton)", "Place"),
        ("G734", "Zürich-Oerlikon", "Place")]
    assert items[0]["permalink"] == "https://dodis.ch/G27"


def test_dodis_full_place(samples: Path):
    item = dodis.parse_full(_load(samples, "dodis_solr_full_G27.json"))
    assert (item["id"], item["title"], item["type"]) == ("G27", "Zürich", "Place")
    assert item["withheld_fields"] == []
    assert item["record"]["geo_regionCode_s"] == "CH-ZH"
