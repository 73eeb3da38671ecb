"""J-STAGE article search (``service=3``): the client and the pure parse of its entries.

**The request.** ``GET <endpoint>?service=3`` with the fields as the WebAPI names them:
``article`` (title), ``author``, ``affil``, ``keyword``, ``abst`` (abstract), ``text`` (full
text), ``material`` (journal name) — partial matches, case-insensitive —; ``issn`` (exact,
``XXXX-XXXX``), ``cdjournal``, ``vol``, ``no`` (exact); ``pubyearfrom``/``pubyearto``;
``sortflg`` (1 score, 2 volume/issue/page order); ``start``, ``count`` (J-STAGE allows up to
1,000; this server asks at most 100).

**An entry** (real recordings in ``shared/fixtures/jstage``): ``article_title/{en,ja}``,
``article_link/{en,ja}``, ``author/{en,ja}/name*``, ``cdjournal``, ``material_title/{en,ja}``,
``prism:issn``, ``prism:eIssn``, ``prism:volume``, ``prism:number``, ``prism:startingPage``,
``prism:endingPage``, ``pubyear``, ``prism:doi``, ``title``, ``link``, ``updated``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from lxml import etree

from ...core.http import HttpClient
from ...core.offload import run_blocking
from ...core.xmltree import first_child
from ..models import Feed, JstageArticle
from .feed import bilingual, check_size, names, read_feed, text, year_of

__all__ = ["ArticleClient", "ArticleExchange", "parse", "read_article"]


def read_article(entry: etree._Element) -> JstageArticle:
    """One ``service=3`` entry as an article (pure)."""
    title_ja, title_en = bilingual(entry, "article_title")
    fallback = text(first_child(entry, "title"))
    url_ja, url_en = bilingual(entry, "article_link")
    link = first_child(entry, "link")
    href = link.get("href") if link is not None else None
    journal_ja, journal_en = bilingual(entry, "material_title")
    start = text(first_child(entry, "startingPage"))
    end = text(first_child(entry, "endingPage"))
    title = title_ja or title_en or fallback
    return JstageArticle(
        title=title,
        title_ja=title_ja,
        title_en=title_en,
        title_missing=title is None,
        authors_ja=names(entry, "ja"),
        authors_en=names(entry, "en"),
        journal=journal_ja or journal_en,
        journal_ja=journal_ja,
        journal_en=journal_en,
        cdjournal=text(first_child(entry, "cdjournal")),
        issn=text(first_child(entry, "issn")),
        eissn=text(first_child(entry, "eIssn")),
        volume=text(first_child(entry, "volume")),
        number=text(first_child(entry, "number")),
        starting_page=start,
        ending_page=end,
        pages=f"{start}-{end}" if start and end else start or end,
        year=year_of(text(first_child(entry, "pubyear"))),
        doi=text(first_child(entry, "doi")),
        url=(href.strip()[:500] if href and href.strip() else None) or url_ja or url_en,
        url_ja=url_ja,
        url_en=url_en,
        updated=text(first_child(entry, "updated")),
    )


def parse(body: bytes) -> Feed[JstageArticle]:
    """One ``service=3`` answer (pure; the hardened parser reads it).

    Raises:
        CoreError: API_ERROR for a body that is not well-formed XML.
    """
    return read_feed(body, read_article)


@dataclass(frozen=True)
class ArticleExchange:
    """One article search sent (its parameters) and its parsed answer."""

    params: dict[str, str]
    endpoint: str
    feed: Feed[JstageArticle]


class ArticleClient:
    """Article searches over the shared, paced J-STAGE client; read off the event loop."""

    def __init__(self, http: HttpClient, endpoint: str) -> None:
        self._http = http
        self.endpoint = endpoint

    async def search(self, params: Mapping[str, str]) -> ArticleExchange:
        """Send one ``service=3`` search and parse its answer.

        Raises:
            CoreError: RATE_LIMITED (HTTP 429), TRANSPORT_ERROR, API_ERROR.
        """
        sent = {"service": "3", **params}
        response = await self._http.get(self.endpoint, sent)
        asked = int(sent.get("count", "20") or 20)
        feed = await run_blocking(_checked_parse, response.content, asked)
        return ArticleExchange(params=sent, endpoint=self.endpoint, feed=feed)


def _checked_parse(body: bytes, asked: int) -> Feed[JstageArticle]:
    check_size(body, asked)
    return parse(body)
