"""Issue 18 §6, literature's part: answers bounded by what was asked.

Before: ``literature_get_fulltext`` with ``max_chars: 1000`` returned a 36 MB line: ``sections``
were never cut and carried the text a second time beside ``full_text``. Now ``max_chars`` bounds
every character of text in the answer (title, abstract, section headings, metadata and the
part of the full text), sections are an outline into ``full_text`` (the text goes out once
per copy of the envelope), and ``next_offset`` continues the reading.

Also: every text argument of the three tools has a ``maxLength`` (and every list a
``maxItems``), so a refused argument is never a huge answer.
"""

from __future__ import annotations

import json

import httpx
import pytest

from readingroom.core.clock import FakeClock
from readingroom.literature.history import History
from readingroom.literature.server import FulltextInput, SearchInput, SourcesInput, tool_specs
from readingroom.literature.service import LiteratureService

pytestmark = pytest.mark.anyio

PARAGRAPH = "Reading rooms hold the record of what was read, and by whom. " * 20


def huge_article(paragraphs: int) -> bytes:
    """A hand-made JATS article (shaped after the sibils samples) with a very long body."""
    body = "".join(f"<sec><title>Part {n}</title><p>{PARAGRAPH}</p></sec>"
                   for n in range(paragraphs))
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<article article-type="research-article">'
        "<front><article-meta><article-id pub-id-type=\"pmc\">9000777</article-id>"
        "<title-group><article-title>A very long article</article-title></title-group>"
        "<abstract><p>Short abstract.</p></abstract></article-meta></front>"
        f"<body>{body}</body></article>"
    ).encode()


@pytest.fixture
def service(tmp_path):
    article = huge_article(3000)  # about 3.7 MB of text

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=article, headers={"Content-Type": "application/xml"})

    return LiteratureService(env={"EUROPEPMC_URL": "https://epmc.test/rest"}, clock=FakeClock(),
                             transport=httpx.MockTransport(handler),
                             secret_lookup=lambda n: None, history=History(tmp_path))


@pytest.mark.parametrize("max_chars", [1000, 5000, 50_000])
async def test_max_chars_bounds_the_whole_answer(service, max_chars):
    env = await service.fulltext(pmcid="PMC9000777", max_chars=max_chars)
    assert env.error is None and env.data["status"] == "ok"
    text = env.to_json()
    assert len(text) <= max_chars * 1.25 + 3000, f"{len(text)} characters for {max_chars}"
    data = env.data
    assert data["truncated"] is True and data["next_offset"] == len(data["full_text"])
    assert all("text" not in s for s in data["sections"])  # an outline, not a second copy
    assert json.dumps(data["full_text"], ensure_ascii=False)[1:-1] in text
    assert text.count(PARAGRAPH[:80]) == data["full_text"].count(PARAGRAPH[:80])  # once


async def test_next_offset_continues_where_the_part_ended(service):
    first = await service.fulltext(pmcid="PMC9000777", max_chars=2000)
    second = await service.fulltext(pmcid="PMC9000777", max_chars=2000,
                                    offset=first.data["next_offset"])
    assert second.data["offset"] == first.data["next_offset"]
    assert "abstract" not in second.data  # sent with the first part only
    assert first.data["full_text"].startswith("Part 0\n")
    assert not second.data["full_text"].startswith("Part 0")
    whole = first.data["full_text"] + second.data["full_text"]
    assert whole.count("Part 0\n") == 1 and whole.index("Part 0\n") < whole.index("Part 1\n")


async def test_a_section_start_can_be_read_directly(service):
    first = await service.fulltext(pmcid="PMC9000777", max_chars=3000)
    later = first.data["sections"][-1]
    jumped = await service.fulltext(pmcid="PMC9000777", max_chars=3000, offset=later["start"])
    assert jumped.data["full_text"].startswith(later["path"])


def _strings(schema: dict, path: str = "") -> list[tuple[str, dict]]:
    found = []
    for name, prop in (schema.get("properties") or {}).items():
        options = prop.get("anyOf", [prop])
        for option in options:
            if option.get("type") in ("string", "array"):
                found.append((f"{path}{name}", option))
    return found


@pytest.mark.parametrize("model", [SearchInput, SourcesInput, FulltextInput])
def test_every_text_and_list_argument_is_capped(model):
    for name, option in _strings(model.model_json_schema()):
        if option["type"] == "string":
            assert "maxLength" in option, f"{model.__name__}.{name} has no maxLength"
        else:
            assert "maxItems" in option, f"{model.__name__}.{name} has no maxItems"


async def test_a_refused_huge_argument_is_a_small_answer(tmp_path):
    service = LiteratureService(env={}, secret_lookup=lambda n: None, history=History(tmp_path))
    (search,) = [s for s in tool_specs(service) if s.name == "literature_search"]
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as caught:
        search.input_model.model_validate({"query": "x" * 5_000_000})
    assert len(str(caught.value)) < 5000
    with pytest.raises(ValidationError):
        search.input_model.model_validate({"query": "x", "sources": ["pubmed"] * 10_000})
    with pytest.raises(ValidationError):
        search.input_model.model_validate({"query": "x", "cursor": "c" * 100_000})
