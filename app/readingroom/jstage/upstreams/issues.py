"""J-STAGE volume and issue list (``service=2``): the client and the pure parse of its entries.

**The request.** ``GET <endpoint>?service=2`` with ``material`` (the journal name, exact),
``issn``, ``cdjournal``, ``pubyearfrom``/``pubyearto``, ``volorder`` (1 ascending, 2
descending); ``start`` and ``count`` as the manual's sample request carries them.

**An entry** (the WebAPI manual's sample, ``shared/fixtures/jstage/pyjstage_service2_list.xml``;
no live recording exists): ``vols_title/{en,ja}``, ``vols_link/{en,ja}``, ``prism:issn``,
``prism:eIssn``, ``publisher/{name, url/{en,ja}}``, ``cdjournal``, ``material_title/{en,ja}``,
``prism:volume``, ``prism:number``, ``prism:startingPage``, ``pubyear``, ``title``, ``link``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from lxml import etree

from ...core.http import HttpClient
from ...core.offload import run_blocking
from ...core.xmltree import first_child
from ..models import Feed, JstageIssue
from .feed import bilingual, check_size, read_feed, text, year_of

__all__ = ["IssueClient", "IssueExchange", "parse", "read_issue"]


def read_issue(entry: etree._Element) -> JstageIssue:
    """One ``service=2`` entry as a volume or issue (pure)."""
    label_ja, label_en = bilingual(entry, "vols_title")
    url_ja, url_en = bilingual(entry, "vols_link")
    journal_ja, journal_en = bilingual(entry, "material_title")
    link = first_child(entry, "link")
    href = link.get("href") if link is not None else None
    publisher = first_child(entry, "publisher")
    cdjournal = text(first_child(entry, "cdjournal"))
    volume = text(first_child(entry, "volume"))
    number = text(first_child(entry, "number"))
    articles = {"cdjournal": cdjournal} if cdjournal else {}
    if articles and volume:
        articles["vol"] = volume
        if number:
            articles["no"] = number
    return JstageIssue(
        label=label_ja or label_en or text(first_child(entry, "title")),
        label_ja=label_ja,
        label_en=label_en,
        journal=journal_ja or journal_en,
        journal_ja=journal_ja,
        journal_en=journal_en,
        cdjournal=cdjournal,
        issn=text(first_child(entry, "issn")),
        eissn=text(first_child(entry, "eIssn")),
        volume=volume,
        number=number,
        starting_page=text(first_child(entry, "startingPage")),
        year=year_of(text(first_child(entry, "pubyear"))),
        publisher=text(first_child(publisher, "name")) if publisher is not None else None,
        url=(href.strip()[:500] if href and href.strip() else None) or url_ja or url_en,
        url_ja=url_ja,
        url_en=url_en,
        articles=articles,
    )


def parse(body: bytes) -> Feed[JstageIssue]:
    """One ``service=2`` answer (pure; the hardened parser reads it).

    Raises:
        CoreError: API_ERROR for a body that is not well-formed XML.
    """
    return read_feed(body, read_issue)


@dataclass(frozen=True)
class IssueExchange:
    """One volume list sent (its parameters) and its parsed answer."""

    params: dict[str, str]
    endpoint: str
    feed: Feed[JstageIssue]


class IssueClient:
    """Volume lists over the shared, paced J-STAGE client; read off the event loop."""

    def __init__(self, http: HttpClient, endpoint: str) -> None:
        self._http = http
        self.endpoint = endpoint

    async def list(self, params: Mapping[str, str]) -> IssueExchange:
        """Send one ``service=2`` request and parse its answer.

        Raises:
            CoreError: RATE_LIMITED (HTTP 429), TRANSPORT_ERROR, API_ERROR.
        """
        sent = {"service": "2", **params}
        response = await self._http.get(self.endpoint, sent)
        asked = int(sent.get("count", "20") or 20)
        feed = await run_blocking(_checked_parse, response.content, asked)
        return IssueExchange(params=sent, endpoint=self.endpoint, feed=feed)


def _checked_parse(body: bytes, asked: int) -> Feed[JstageIssue]:
    check_size(body, asked)
    return parse(body)
