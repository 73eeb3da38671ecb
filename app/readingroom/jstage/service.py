"""jstage-mcp's operations, importable and testable without MCP: arguments in, Envelope out.

All three operations (article search, DOI lookup, volume list) answer with the suite's envelope
and deposit a receipt. J-STAGE's status codes are read by meaning (:mod:`.upstreams.feed`):
``ERR_001`` is a checked zero, ``ERR_003`` is ``RATE_LIMITED`` (never an empty result), the
input errors are ``API_ERROR`` naming the field, ``WARN_002`` a breadth warning. An answer that
cannot be read as a result is ``API_ERROR``, never an empty one.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core import receipt, redaction, responses
from ..core.clock import Clock, SystemClock
from ..core.envelope import (
    Envelope,
    Level,
    MatchKind,
    QueryInfo,
    ResultInfo,
    SearchedFor,
    SourceStatus,
    TermUse,
    breadth_of,
)
from ..core.errors import Code, CoreError
from ..core.http import HttpClient
from ..core.script import Script, detect_script, has_latin
from ..core.settings import env_str
from . import DEFAULT_ENDPOINT, ENV_JSTAGE_URL, SERVER
from .models import Feed, JstageArticle
from .sources import JSTAGE
from .upstreams.articles import ArticleClient
from .upstreams.courtesy import MAX_LOOKUP_PAGES, MAX_RECORDS, new_http
from .upstreams.feed import STATUSES, StatusKind
from .upstreams.issues import IssueClient

__all__ = ["ARTICLE_FIELDS", "ISSUE_FIELDS", "SERVER_NAME", "FieldSpec", "JstageService",
           "split_doi"]

SERVER_NAME = SERVER.name
log = logging.getLogger("readingroom.jstage")


@dataclass(frozen=True)
class FieldSpec:
    """How one argument is sent: the WebAPI parameter, its match, and whether it is text."""

    param: str
    match: MatchKind
    free_text: bool


ARTICLE_FIELDS: dict[str, FieldSpec] = {
    "article": FieldSpec("article", MatchKind.partial, True),
    "author": FieldSpec("author", MatchKind.partial, True),
    "affil": FieldSpec("affil", MatchKind.partial, True),
    "keyword": FieldSpec("keyword", MatchKind.partial, True),
    "abst": FieldSpec("abst", MatchKind.partial, True),
    "text": FieldSpec("text", MatchKind.partial, True),
    "material": FieldSpec("material", MatchKind.partial, True),
    "issn": FieldSpec("issn", MatchKind.exact, False),
    "cdjournal": FieldSpec("cdjournal", MatchKind.exact, False),
    "vol": FieldSpec("vol", MatchKind.exact, False),
    "no": FieldSpec("no", MatchKind.exact, False),
    "pubyearfrom": FieldSpec("pubyearfrom", MatchKind.range, False),
    "pubyearto": FieldSpec("pubyearto", MatchKind.range, False),
}
"""The article search fields (``service=3``), as the WebAPI names them."""

ISSUE_FIELDS: dict[str, FieldSpec] = {
    "material": FieldSpec("material", MatchKind.exact, True),
    "issn": FieldSpec("issn", MatchKind.exact, False),
    "cdjournal": FieldSpec("cdjournal", MatchKind.exact, False),
    "pubyearfrom": FieldSpec("pubyearfrom", MatchKind.range, False),
    "pubyearto": FieldSpec("pubyearto", MatchKind.range, False),
}
"""The volume list fields (``service=2``); ``material`` matches the journal name exactly."""

SORT_FLAGS = {"score": "1", "volume": "2"}
VOL_ORDERS = {"ascending": "1", "descending": "2"}

_ISSN = re.compile(r"^([0-9]{4})-?([0-9]{3}[0-9X])$")
_CODE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,39}$")
_DOI = re.compile(r"^10\.[0-9]{4,9}/\S{1,300}$")
_DOI_PREFIXES = ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/",
                 "http://dx.doi.org/", "doi:")


def split_doi(doi: str) -> tuple[str, dict[str, str]] | None:
    """(the DOI normalised, the ``cdjournal``/``vol``/``no`` to look it up by), or None.

    J-STAGE's DOI suffixes start with the journal code, then the volume, then ``<no>_<page>``
    for many journals (``10.11249/jsbpjjpp.23.1_53``; ``10.4264/numa.70.125``). The journal
    code in a DOI is not always J-STAGE's ``cdjournal`` (``jeigakushi`` for
    ``jeigakushi1969``): such a DOI is then NOT_FOUND by this lookup, and found by a search.
    """
    text = doi.strip()
    for prefix in _DOI_PREFIXES:
        if text.lower().startswith(prefix):
            text = text[len(prefix):]
            break
    if not _DOI.match(text):
        return None
    parts = text.split("/", 1)[1].split(".")
    journal = parts[0]
    if not _CODE.match(journal) or not journal[0].isalpha():
        return None
    # Journal codes are lower case on J-STAGE (jsbpjjpp, numa, johokanri); DOIs are not
    # case-sensitive, so 10.11249/JSBPJJPP.23.1_53 names the same article.
    query = {"cdjournal": journal.lower()}
    if len(parts) > 1 and parts[1].isdigit():
        query["vol"] = parts[1]
        if len(parts) > 2 and "_" in parts[2] and parts[2].split("_")[0].isdigit():
            query["no"] = parts[2].split("_")[0]
    return text, query


class JstageService:
    """Search, look up and list J-STAGE, answering with envelopes and receipts.

    Args:
        endpoint: the WebAPI (default ``JSTAGE_API_URL``, else J-STAGE's).
        http: the paced client (default a new one over ``transport`` and ``clock``).
        transport: an httpx transport for a new client (tests: ``httpx.MockTransport``).
        clock: pacing of a new client and the receipts' ``issued_at``.
        env: where settings and ``MCP_RECEIPT_LOG`` are read (default ``os.environ``).
    """

    def __init__(self, *, endpoint: str | None = None, http: HttpClient | None = None,
                 transport: Any = None, clock: Clock | None = None,
                 env: Mapping[str, str] | None = None) -> None:
        self.endpoint = endpoint or env_str(ENV_JSTAGE_URL, DEFAULT_ENDPOINT, env)
        self._http = http or new_http(transport=transport, clock=clock)
        self.articles = ArticleClient(self._http, self.endpoint)
        self.issues = IssueClient(self._http, self.endpoint)
        self._env = env
        self.clock = clock or SystemClock()

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._http.aclose()

    # ------------------------------------------------------------------ search
    async def search_articles(
        self, fields: Mapping[str, Any], *, start: int = 1, count: int = 20,
        sortflg: str | None = None, arguments: Mapping[str, Any] | None = None,
    ) -> Envelope:
        """Search articles (``service=3``) and return the envelope."""
        operation = "jstage_search_articles"
        query_input = dict(arguments or {})
        try:
            terms, params = _build(fields, ARTICLE_FIELDS)
            if sortflg is not None:
                if sortflg not in SORT_FLAGS:
                    raise _invalid(f"sortflg must be one of {', '.join(SORT_FLAGS)}.",
                                   "sortflg")
                params["sortflg"] = SORT_FLAGS[sortflg]
        except CoreError as err:
            return self._refused(operation, err, query_input)
        wanted = min(count, MAX_RECORDS)
        params.update({"count": str(wanted), "start": str(start)})
        matching = "full_text_conjunction" if "text" in params else "metadata_conjunction"
        env = self._envelope(operation, terms, params, query_input, ARTICLE_FIELDS, matching,
                             "jstage:articles")
        _capped(env, count)
        _latin(env, terms, ARTICLE_FIELDS)
        try:
            exchange = await self.articles.search(params)
        except CoreError as err:
            return await self._failed(env, err, terms, {"service": "3", **params})
        return await self._listing(env, exchange.feed, terms, exchange.params, start, wanted,
                                   "article", ARTICLE_FIELDS)

    async def list_issues(
        self, fields: Mapping[str, Any], *, start: int = 1, count: int = 20,
        volorder: str | None = None, arguments: Mapping[str, Any] | None = None,
    ) -> Envelope:
        """List a journal's volumes and issues (``service=2``) and return the envelope."""
        operation = "jstage_list_issues"
        query_input = dict(arguments or {})
        try:
            terms, params = _build(fields, ISSUE_FIELDS, need=("material", "issn", "cdjournal"))
            if volorder is not None:
                if volorder not in VOL_ORDERS:
                    raise _invalid(f"volorder must be one of {', '.join(VOL_ORDERS)}.",
                                   "volorder")
                params["volorder"] = VOL_ORDERS[volorder]
        except CoreError as err:
            return self._refused(operation, err, query_input)
        wanted = min(count, MAX_RECORDS)
        params.update({"count": str(wanted), "start": str(start)})
        env = self._envelope(operation, terms, params, query_input, ISSUE_FIELDS,
                             "metadata_conjunction", "jstage:volumes")
        _capped(env, count)
        try:
            exchange = await self.issues.list(params)
        except CoreError as err:
            return await self._failed(env, err, terms, {"service": "2", **params})
        return await self._listing(env, exchange.feed, terms, exchange.params, start, wanted,
                                   "volume", ISSUE_FIELDS)

    # ------------------------------------------------------------------ fetch
    async def get_article_by_doi(self, doi: str, *, arguments: Mapping[str, Any] | None = None
                                 ) -> Envelope:
        """Look one article up by DOI (its journal code and volume); no ``searched_for``."""
        operation = "jstage_get_article_by_doi"
        query_input = dict(arguments or {})
        split = split_doi(doi)
        if split is None:
            err = CoreError(
                Code.INVALID_INPUT,
                "doi must be a DOI (10.<registrant>/<suffix>) whose suffix starts with a journal "
                "code, as J-STAGE's do; nothing was sent.",
                details={"field": "doi"},
                remediation="Check the DOI; or find the article with jstage_search_articles "
                "(article title, author) and read its doi.")
            return self._refused(operation, err, query_input)
        normalized, lookup = split
        env = Envelope(server=SERVER_NAME, operation=operation,
                       query=QueryInfo(input=query_input, normalized=f"doi={normalized}",
                                       endpoint=self.endpoint))
        checked = unreadable = 0
        total: int | None = None
        params: dict[str, str] = {}
        for page in range(MAX_LOOKUP_PAGES):
            params = {**lookup, "count": str(MAX_RECORDS), "start": str(1 + page * MAX_RECORDS)}
            try:
                exchange = await self.articles.search(params)
            except CoreError as err:
                return await self._failed(env, err, [], {"service": "3", **params},
                                          query=f"doi={normalized}")
            feed = exchange.feed
            refusal = _refusal(feed, 1 + page * MAX_RECORDS)
            if refusal is not None and refusal.code is not Code.NOT_FOUND:
                return await self._failed(env, refusal, [], exchange.params,
                                          query=f"doi={normalized}")
            if refusal is None:
                total = feed.total
                for entry in feed.entries:
                    checked += 1
                    unreadable += entry.item is None
                    if entry.item is not None and (entry.item.doi or "").lower() == \
                            normalized.lower():
                        return await self._found(env, entry.item, exchange.params, normalized)
            if refusal is None and unreadable and (total is None or checked >= total
                                                   or not feed.entries):
                unsure = _malformed(f"{unreadable} of the {checked} articles of {lookup} "
                                    "could not be read, so the DOI may be among them")
                return await self._failed(env, unsure, [], exchange.params,
                                          query=f"doi={normalized}")
            if refusal is not None or total is None or checked >= total or not feed.entries:
                return await self._not_found(env, normalized, lookup, checked, exchange.params)
        window = CoreError(
            Code.API_ERROR,
            f"J-STAGE's {lookup} holds {total} articles; this lookup reads at most "
            f"{MAX_LOOKUP_PAGES * MAX_RECORDS} of them and the DOI was not among those. The "
            "result is unknown, not absent.",
            details={"reason": "lookup_window", "doi": normalized, "lookup": lookup,
                     "checked": checked, "total": total},
            remediation="Find the article with jstage_search_articles (its title or author, "
            "with cdjournal) instead.")
        return await self._failed(env, window, [], {"service": "3", **params},
                                  query=f"doi={normalized}")

    # ------------------------------------------------------------------ envelopes
    def _envelope(self, operation: str, terms: list[TermUse], params: Mapping[str, str],
                  query_input: dict[str, Any], specs: Mapping[str, FieldSpec], matching: str,
                  provider: str) -> Envelope:
        free = " ".join(t.term for t in terms if specs[t.field].free_text)
        return Envelope(
            server=SERVER_NAME, operation=operation,
            searched_for=SearchedFor(terms=terms,
                                     script=detect_script(free) if free else Script.none,
                                     matching=matching, providers=[provider]),
            query=QueryInfo(input=query_input, normalized=_normalized(params),
                            params=dict(redaction.redact(params)), endpoint=self.endpoint))

    async def _listing(self, env: Envelope, feed: Feed[Any], terms: list[TermUse],
                       params: Mapping[str, str], start: int, asked: int, noun: str,
                       specs: Mapping[str, FieldSpec]) -> Envelope:
        refusal = _refusal(feed, start)
        if refusal is not None and refusal.code is not Code.NOT_FOUND:
            return await self._failed(env, refusal, terms, params)
        zero = refusal is not None  # ERR_001: J-STAGE's own "no results"
        total = 0 if zero else feed.total
        assert total is not None
        entries = [] if zero else feed.entries
        if len(entries) > asked:
            env.diagnose(Level.warning, Code.UPSTREAM_DIAGNOSTIC,
                         f"J-STAGE sent {len(entries)} entries where {asked} were asked; the "
                         f"first {asked} are shown.")
            entries = entries[:asked]
        matched = [t.field for t in terms if t.match != MatchKind.range]
        items: list[dict[str, Any]] = []
        for entry in entries:
            if entry.item is None:
                env.diagnose(Level.warning, Code.RECORD_UNREADABLE,
                             f"Entry {start + entry.position - 1} could not be read: "
                             f"{entry.problem}.", hint="It is counted in `total` but not in "
                             "`items`.")
                continue
            item = entry.item
            if isinstance(item, JstageArticle):
                item = item.model_copy(update={"matched_in": matched})
                if item.title_missing:
                    env.diagnose(Level.info, Code.UPSTREAM_DIAGNOSTIC,
                                 f"Entry {start + entry.position - 1} has no title in J-STAGE's "
                                 "answer; it is kept (title_missing).")
            items.append(_dump(item))
        if feed.status == "WARN_002":
            env.diagnose(Level.warning, Code.UPSTREAM_DIAGNOSTIC,
                         "J-STAGE judged this query too broad (WARN_002: too many results); "
                         "the count is noisy, not the size of a literature.",
                         hint="Add a second term, a journal (material, issn) or a year range.")
        delivered = len(entries) + (0 if zero else feed.empty_entries)
        has_more = bool(entries) and start - 1 + delivered < total
        env.items = items
        env.result = ResultInfo(
            total=total, returned=len(items), start=start, has_more=has_more,
            next_start=start + delivered if has_more else None, breadth=breadth_of(total),
            match_type="none" if not total else _match_type(terms))
        if not total:
            env.diagnose(Level.info, Code.ZERO_RESULT,
                         f"J-STAGE found no {noun} matching every term"
                         + (" (ERR_001: no results)." if zero else "."),
                         hint=_zero_hint(terms, specs))
        elif "text" in params and total > 50:
            env.diagnose(Level.info, Code.UPSTREAM_DIAGNOSTIC,
                         f"{total} articles match on full text, where a word anywhere in an "
                         "article counts: many may be only incidentally related.",
                         hint="Narrow with article, keyword or abst, or read matched_in.")
        responses.credit(env, [JSTAGE], SourceStatus.ok if total else SourceStatus.empty)
        env.coverage_note = _coverage(noun)
        await self._deposit(env, params, terms, outcome="ok" if total else "empty",
                            provider=f"jstage:{'articles' if noun == 'article' else 'volumes'}")
        return env

    async def _found(self, env: Envelope, item: JstageArticle, params: Mapping[str, str],
                     doi: str) -> Envelope:
        env.items = [_dump(item)]
        env.result = ResultInfo(total=1, returned=1, start=1, breadth=breadth_of(1),
                                match_type="exact")
        env.query = env.query.model_copy(update={"params": dict(params)}) if env.query else None
        responses.credit(env, [JSTAGE], SourceStatus.ok)
        await self._deposit(env, params, [], outcome="ok", query=f"doi={doi}")
        return env

    async def _not_found(self, env: Envelope, doi: str, lookup: Mapping[str, str],
                         checked: int, params: Mapping[str, str]) -> Envelope:
        where = ", ".join(f"{k} {v}" for k, v in lookup.items())
        err = CoreError(
            Code.NOT_FOUND,
            f"J-STAGE has no article with DOI {doi} in {where} (the {checked} articles there "
            "were checked).",
            details={"field": "doi", "identifier": doi, "lookup": dict(lookup),
                     "checked": checked},
            remediation="Check the DOI; the journal code in a DOI is not always J-STAGE's "
            "cdjournal, so find the article with jstage_search_articles (its title or author) "
            "and read its doi.")
        failed = responses.failed_after_send(env, err, sources=[JSTAGE])
        # J-STAGE answered, and the DOI was not there: the source is empty, not broken.
        responses.credit(failed, [JSTAGE], SourceStatus.empty)
        await self._deposit(failed, params, [], outcome=str(Code.NOT_FOUND), query=f"doi={doi}")
        return failed

    async def _failed(self, env: Envelope, err: CoreError, terms: list[TermUse],
                      params: Mapping[str, str], *, query: str | None = None) -> Envelope:
        failed = responses.failed_after_send(env, err, sources=[JSTAGE])
        assert failed.error is not None
        if err.code is Code.RATE_LIMITED:
            failed.error.remediation = (
                "The result is UNKNOWN, not empty: do not report absence. Wait a minute and "
                "search again, one query at a time.")
        field = err.details.get("field")
        if err.details.get("kind") == "input" and isinstance(field, str):
            failed.diagnose(Level.error, Code.UPSTREAM_DIAGNOSTIC, err.message, field=field)
        await self._deposit(failed, params, terms, outcome=str(err.code), query=query)
        return failed

    def _refused(self, operation: str, err: CoreError, query_input: dict[str, Any]) -> Envelope:
        return responses.refused(SERVER_NAME, operation, err, sources=[JSTAGE],
                                 query=QueryInfo(input=query_input, endpoint=self.endpoint))

    async def _deposit(self, env: Envelope, params: Mapping[str, str], terms: Sequence[TermUse],
                       *, outcome: str, query: str | None = None,
                       provider: str = "jstage:articles") -> None:
        await receipt.deposit(
            env,
            query=query if query is not None else _normalized(params),
            params=params,
            providers=[provider],
            endpoint=self.endpoint,
            outcome=outcome,
            result_ids=[str(i.get("doi") or i.get("url")) for i in env.items
                        if i.get("doi") or i.get("url")],
            extra={"normalized_terms": [t.model_dump(mode="json") for t in terms]},
            clock=self.clock,
            environ=self._env,
        )


def _refusal(feed: Feed[Any], start: int) -> CoreError | None:
    """What a feed's status or shape says instead of a result, or None for a readable one.

    ``NOT_FOUND`` stands for J-STAGE's ``ERR_001`` (a checked zero: the caller decides what
    it means); every other error is the envelope's error.
    """
    if feed.problem is not None:
        return _malformed(feed.problem)
    if feed.status is None:
        return _malformed("the status (result/status) is missing")
    info = STATUSES.get(feed.status)
    if info is None:
        return CoreError(
            Code.API_ERROR,
            f"J-STAGE answered with a status this server does not know ({feed.status[:20]!r}"
            f": {(feed.message or '')[:200]}). The result is unknown.",
            details={"status": feed.status[:20], "message": (feed.message or "")[:200]},
            remediation="Report it; the WebAPI may have changed.")
    if info.kind is StatusKind.rate_limited:
        return CoreError(
            Code.RATE_LIMITED,
            f"J-STAGE refused the request for load ({feed.status}: {info.meaning}). The "
            "result is UNKNOWN, not empty.",
            details={"status": feed.status, "message": (feed.message or "")[:200]},
            remediation="Wait a minute before searching again.")
    if info.kind in (StatusKind.input, StatusKind.upstream):
        details: dict[str, Any] = {"status": feed.status, "kind": info.kind.value,
                                   "meaning": info.meaning,
                                   "message": (feed.message or "")[:200]}
        if info.field:
            details["field"] = info.field
        return CoreError(
            Code.API_ERROR,
            f"J-STAGE refused the request ({feed.status}: {info.meaning}"
            + (f", field {info.field}" if info.field else "") + "). The result is unknown.",
            details=details,
            remediation="Fix the named argument." if info.kind is StatusKind.input
            else "J-STAGE failed; try again later. The result is unknown, not empty.")
    readable = [e for e in feed.entries if e.item is not None]
    if info.kind is StatusKind.empty:
        if readable:
            return _malformed(f"the status is ERR_001 (no results) but {len(readable)} "
                              "records were delivered")
        return CoreError(Code.NOT_FOUND, "ERR_001")
    total = feed.total
    if total is None:
        return _malformed("opensearch:totalResults is missing")
    if total == 0 and readable:
        return _malformed(f"opensearch:totalResults is 0 but {len(readable)} records were "
                          "delivered")
    if not feed.entries and total >= start:
        if info.kind is StatusKind.broad:
            return CoreError(
                Code.API_ERROR,
                f"J-STAGE judged the query too broad to list (WARN_002: too many results; "
                f"{total} match). The result is unknown, not empty.",
                details={"status": feed.status, "total": total, "kind": "broad"},
                remediation="Narrow the query: add a term, a journal (material, issn) or a "
                "year range.")
        return _malformed(f"opensearch:totalResults says {total} but no record was delivered "
                          f"from {start}")
    if feed.entries and not readable:
        first = next((e.problem for e in feed.entries if e.problem), "unreadable")
        return _malformed(f"none of the {len(feed.entries)} entries could be read (the first: "
                          f"{first})")
    return None


def _malformed(problem: str) -> CoreError:
    return CoreError(
        Code.API_ERROR,
        f"J-STAGE answered in a form that cannot be read as a result: {problem}. The result "
        "is unknown, not empty.",
        details={"reason": "malformed", "problem": problem},
        remediation="Try again later; if it persists, the WebAPI's output has changed and this "
        "server needs an update. Do not report absence.")


def _build(fields: Mapping[str, Any], specs: Mapping[str, FieldSpec],
           need: Sequence[str] | None = None) -> tuple[list[TermUse], dict[str, str]]:
    """The terms and the WebAPI parameters; INVALID_INPUT when no request can be made."""
    terms: list[TermUse] = []
    params: dict[str, str] = {}
    for name, spec in specs.items():
        raw = fields.get(name)
        if raw is None:
            continue
        value = " ".join(str(raw).split())
        if not value:
            continue
        if name == "issn":
            match = _ISSN.match(value.upper())
            if not match:
                raise _invalid(f"issn {str(raw)[:20]!r} is not an ISSN (XXXX-XXXX).", name)
            value = f"{match.group(1)}-{match.group(2)}"
        if name in ("cdjournal",) and not _CODE.match(value):
            raise _invalid("cdjournal must be a J-STAGE journal code (letters and digits).",
                           name)
        params[spec.param] = value
        terms.append(TermUse(field=name, term=value, index=spec.param, match=spec.match,
                             script=detect_script(value)))
    wanted = need or [n for n, s in specs.items() if s.match != MatchKind.range]
    if not any(t.field in wanted for t in terms):
        raise _invalid(f"Give at least one of {', '.join(wanted)}: a request by years alone "
                       "is not sent.", None)
    low, high = params.get("pubyearfrom"), params.get("pubyearto")
    if low and high and int(low) > int(high):
        raise _invalid(f"pubyearfrom {low} is after pubyearto {high}.", "pubyearfrom")
    return terms, params


def _invalid(message: str, field: str | None) -> CoreError:
    return CoreError(Code.INVALID_INPUT, message + " Nothing was sent.",
                     details={"field": field} if field else {},
                     remediation="Fix the named argument and try again.")


def _capped(env: Envelope, count: int) -> None:
    if count > MAX_RECORDS:
        env.diagnose(Level.warning, Code.COUNT_CAPPED,
                     f"count {count} asked; at most {MAX_RECORDS} records are requested at once "
                     "(no bulk downloading from J-STAGE).",
                     hint="Page with `start` (result.next_start) if you need more.",
                     field="count")


def _latin(env: Envelope, terms: Sequence[TermUse], specs: Mapping[str, FieldSpec]) -> None:
    for term in terms:
        if specs[term.field].free_text and has_latin(term.term):
            env.diagnose(
                Level.warning, Code.SCRIPT_LATIN_QUERY,
                f"The {term.field} term {term.term!r} is in Latin letters; J-STAGE's "
                "Japanese-language articles are mostly indexed in Japanese script, so a "
                "romanised term finds only their English or romanised metadata.",
                hint="Search again with the term in kanji/kana before concluding absence.",
                field=term.field)


def _normalized(params: Mapping[str, str]) -> str:
    return " AND ".join(f'{k}="{v}"' for k, v in params.items()
                        if k not in ("service", "count", "start", "sortflg", "volorder"))


def _dump(item: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = item.model_dump(mode="json", exclude_none=True)
    return {k: v for k, v in dumped.items() if v != [] and v != {} and v is not False}


def _match_type(terms: Sequence[TermUse]) -> str:
    kinds = {t.match for t in terms if t.match != MatchKind.range}
    return "exact" if kinds == {MatchKind.exact} else "partial"


def _zero_hint(terms: Sequence[TermUse], specs: Mapping[str, FieldSpec]) -> str:
    if any(has_latin(t.term) for t in terms if specs[t.field].free_text):
        return "A Latin-script term may be the reason; try the Japanese-script form."
    if len([t for t in terms if t.match != MatchKind.range]) > 1:
        return "Every term must match; drop one field to widen the search."
    return "Try an alternative or shorter form of the term, or the text field (full text)."


def _coverage(noun: str) -> str:
    what = "articles" if noun == "article" else "journal volumes and issues"
    return (
        f"Searched J-STAGE's {what} (the journals Japanese learned societies deposit there). "
        "Absence here is not absence in the field: CiNii Research (cinii-mcp) and NDL's "
        "periodicals index (ndl-mcp) cover journals J-STAGE does not hold."
    )
