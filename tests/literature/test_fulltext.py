"""Europe PMC JATS full text: the real samples' sections, and not_found versus error."""

from __future__ import annotations

import json

import httpx
import pytest

from readingroom.core.clock import FakeClock
from readingroom.core.errors import Code
from readingroom.literature.fake import canned
from readingroom.literature.fulltext import join_full_text, parse_jats
from readingroom.literature.history import History
from readingroom.literature.service import LiteratureService

pytestmark = pytest.mark.anyio


def test_pmc3339582_nested_sections_in_document_order(samples):
    body = (samples / "literature/europepmc/sibils-jats-parser_PMC3339582_fullTextXML.xml")
    article = parse_jats(body.read_bytes())
    assert article.pmcid == "PMC3339582" and article.pmid == "22558532"
    assert article.doi == "10.1007/s13205-011-0003-y"
    assert article.title.startswith("Cloning, expression and characterization of l-asparaginase")
    paths = [s.path for s in article.sections]
    assert paths[0] == "Introduction"
    assert "Materials and methods > Kinetic analysis" in paths
    assert paths.index("Results") < paths.index("Results > Kinetic analysis") < \
        paths.index("Discussion")
    assert article.abstract and article.references == 22
    assert len(article.authors) == 4


def test_pmc2852030_bare_paragraphs_before_the_first_sec_are_a_leading_section(samples):
    body = (samples / "literature/europepmc/sibils-jats-parser_PMC2852030_fullTextXML.xml")
    article = parse_jats(body.read_bytes())
    lead = article.sections[0]
    assert lead.title is None and lead.path == "" and lead.text.count("\n") == 2  # three <p>
    assert article.sections[1].title.startswith("Imaging anatomy of the pancreas")
    full = join_full_text(article)
    assert full.startswith(lead.text) and "Conclusion\n" in full
    assert article.title not in full and article.abstract not in full  # sent apart, once


def test_canned_article_formulas_figures_lists_and_ack():
    article = parse_jats(canned("fulltext_PMC9000001.xml"))
    text = {s.path: s.text for s in article.sections}
    assert "η=0.9" in text["Results > Editing efficiency"]
    assert "[Fig. 1 Editing efficiency per embryo.]" in text["Results > Editing efficiency"]
    assert "- Controls: 10 of 10." in text["Results > Survival"]
    assert text["Acknowledgements"].startswith("We thank")
    assert article.licence == "https://creativecommons.org/licenses/by/4.0/"
    assert article.abstract == ("Background: The readingroom gene is a made-up locus used to "
                                "test literature search.\nResults: Base editing restored its "
                                "function in 9 of 10 embryos.")


async def test_fulltext_by_pmid_resolves_through_europepmc(make_service, fake):
    env = await make_service().fulltext(pmid="90000001")
    data = env.data
    assert env.error is None and data["status"] == "ok" and data["pmcid"] == "PMC9000001"
    assert not data["truncated"] and len(data["full_text"]) == data["full_text_chars"]
    assert data["metadata"]["doi"] == "10.5555/rr.2024.0001"
    assert [r.path for r in fake.log] == ["search", "PMC9000001/fullTextXML"]
    assert {s.id: str(s.status) for s in env.sources} == {"europepmc": "ok"}


async def test_not_found_for_no_body_404_and_no_pmc_record(make_service):
    # The suite's rule for fetch tools: an identifier the upstream has nothing for is a
    # NOT_FOUND error pointing at the search tool; an upstream failure is another error.
    service = make_service()
    bodyless = await service.fulltext(pmcid="PMC9000002")
    missing = await service.fulltext(pmcid="PMC123")
    unresolved = await service.fulltext(doi="10.5555/not.in.pmc")
    for env in (bodyless, missing, unresolved):
        assert env.error is not None and env.error.code == Code.NOT_FOUND
        assert "literature_search" in env.error.remediation
        assert env.data["status"] == "not_found" and env.data["reason"] == env.error.message
        assert "full_text" not in env.data and "sections" not in env.data
        assert {s.id: str(s.status) for s in env.sources} == {"europepmc": "empty"}
    assert "no body" in bodyless.data["reason"]
    assert "404" in missing.data["reason"]
    assert bodyless.data["title"] == "A note on shelving order in reading rooms"


async def test_an_upstream_failure_is_an_error_not_not_found(make_service, fake):
    fake.modes["europepmc"] = "error"
    env = await make_service().fulltext(pmcid="PMC9000001")
    assert env.error is not None and env.error.code == Code.TRANSPORT_ERROR
    assert env.data == {"status": "error", "pmcid": "PMC9000001"}
    fake.modes["europepmc"] = "malformed"
    env = await make_service().fulltext(pmcid="PMC9000001")
    assert env.error.code == Code.API_ERROR and env.data["status"] == "error"


async def test_bad_identifiers_are_refused_before_sending(make_service, fake):
    service = make_service()
    for kwargs in ({}, {"pmcid": "12x"}, {"doi": "not a doi"}, {"pmid": "abc"}):
        env = await service.fulltext(**kwargs)
        assert env.error.code == Code.INVALID_INPUT
    assert fake.log == []


async def test_a_real_sample_through_the_service_is_read_in_bounded_parts(samples, tmp_path):
    sample = (samples / "literature/europepmc/sibils-jats-parser_PMC3339582_fullTextXML.xml")
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        if request.url.path.endswith("/PMC3339582/fullTextXML"):
            return httpx.Response(200, content=sample.read_bytes())
        return httpx.Response(404)

    service = LiteratureService(env={"EUROPEPMC_URL": "https://epmc.test/rest"},
                                clock=FakeClock(), transport=httpx.MockTransport(answer),
                                secret_lookup=lambda n: None, history=History(tmp_path))
    env = await service.fulltext(pmcid="pmc3339582", max_chars=1000)
    data = env.data
    assert data["status"] == "ok" and seen == ["/rest/PMC3339582/fullTextXML"]
    assert 0 < len(data["full_text"]) < 1000 < data["full_text_chars"] and data["truncated"]
    spent = (len(data["title"]) + len(data.get("abstract", "")) + len(data["full_text"])
             + len(json.dumps(data["sections"])) + len(json.dumps(data["metadata"])))
    assert spent <= 1000
    assert [d.code for d in env.diagnostics if d.field == "max_chars"] == [Code.COUNT_CAPPED]
    # Read to the end in parts: the parts join to the whole text, each within max_chars.
    parts = [data["full_text"]]
    while "next_offset" in data:
        env = await service.fulltext(pmcid="PMC3339582", max_chars=20_000,
                                     offset=data["next_offset"])
        data = env.data
        parts.append(data["full_text"])
        assert "abstract" not in data
    whole = "".join(parts)
    assert len(whole) == data["full_text_chars"] and whole.startswith("Introduction\n")
    assert not (tmp_path / "history.jsonl").exists()  # full text is never persisted
