"""cinii-mcp's operations, importable and testable without MCP: arguments in, Envelope out.

Every search answers with the suite's envelope: what was searched for (each term with the field
it went to and its match), the parameters sent (the application id shown only as redacted),
a result whose zero is CiNii's own stated zero, typed diagnostics, credit, and a receipt in
the shared ledger. An answer that cannot be read as a result is ``API_ERROR``, never an empty
result. The application id (``CINII_APPID``) is looked up for every call, from the
environment, then the OS keyring; without one nothing is sent and the answer is
``NOT_CONFIGURED``. Its value never reaches an envelope, a receipt or a log line.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core import receipt, redaction, responses, secrets
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
from ..core.offload import run_blocking
from ..core.script import Script, detect_script, has_latin
from ..core.settings import env_str
from . import DEFAULT_BASE_URL, ENV_APPID, ENV_CINII_URL, REGISTRATION_URL, SERVER
from .models import CiniiItem, SearchPage
from .sources import CINII
from .upstreams.courtesy import MAX_RECORDS, new_http
from .upstreams.crid import CridClient, RecordExchange
from .upstreams.jsonld import CRID_PATTERN, crid_of
from .upstreams.opensearch import OpenSearchClient, OpenSearchExchange

__all__ = ["FIELDS", "SERVER_NAME", "SORT_ORDERS", "CiniiService", "FieldSpec"]

SERVER_NAME = SERVER.name
log = logging.getLogger("readingroom.cinii")

SecretLookup = Callable[[], "secrets.SecretValue | None"]


@dataclass(frozen=True)
class FieldSpec:
    """How one search argument is sent: its OpenSearch parameter and match."""

    param: str
    match: MatchKind
    free_text: bool


FIELDS: dict[str, FieldSpec] = {
    "q": FieldSpec("q", MatchKind.partial, True),
    "title": FieldSpec("title", MatchKind.partial, True),
    "creator": FieldSpec("creator", MatchKind.partial, True),
    "publisher": FieldSpec("publisher", MatchKind.partial, True),
    "isbn": FieldSpec("isbn", MatchKind.exact, False),
    "from": FieldSpec("from", MatchKind.range, False),
    "until": FieldSpec("until", MatchKind.range, False),
}
"""The search fields, as the OpenSearch API names them."""

SORT_ORDERS: dict[str, str] = {"relevance": "4", "newest": "0", "oldest": "1", "citations": "10"}
"""sortorder names and the codes CiNii takes (citations: articles only)."""

_TERMS = ("q", "title", "creator", "publisher", "isbn")
_DATE = re.compile(r"^[0-9]{4}(0[1-9]|1[0-2])?$")
_ISBN = re.compile(r"^(?:[0-9]{9}[0-9X]|[0-9]{13})$")
_REDACTED = redaction.REDACTED


class CiniiService:
    """Search and fetch CiNii Research, answering with envelopes and receipts.

    Args:
        base_url: the CiNii Research base (default ``CINII_RESEARCH_URL``, else
            https://cir.nii.ac.jp).
        http: the paced client (default a new one over ``transport`` and ``clock``).
        transport: an httpx transport for a new client (tests: ``httpx.MockTransport``).
        clock: pacing of a new client and the receipts' ``issued_at``.
        env: where settings and ``MCP_RECEIPT_LOG`` are read (default ``os.environ``).
        appid_lookup: where the application id comes from (default: ``CINII_APPID`` from
            ``env``, then the OS keyring).
    """

    def __init__(
        self,
        *,
        base_url: str | None = None,
        http: HttpClient | None = None,
        transport: Any = None,
        clock: Clock | None = None,
        env: Mapping[str, str] | None = None,
        appid_lookup: SecretLookup | None = None,
    ) -> None:
        self.base_url = (base_url or env_str(ENV_CINII_URL, DEFAULT_BASE_URL, env)).rstrip("/")
        self._http = http or new_http(transport=transport, clock=clock)
        self.searches = OpenSearchClient(self._http, self.base_url)
        self.records = CridClient(self._http, self.base_url)
        self._env = env
        self._lookup: SecretLookup = appid_lookup or (lambda: secrets.resolve(ENV_APPID, env))
        self.clock = clock or SystemClock()

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._http.aclose()

    # ------------------------------------------------------------------ search
    async def search(
        self,
        operation: str,
        search_type: str,
        fields: Mapping[str, Any],
        *,
        start: int = 1,
        count: int = 20,
        sortorder: str = "relevance",
        arguments: Mapping[str, Any] | None = None,
    ) -> Envelope:
        """Run one OpenSearch search of ``search_type`` and return its envelope.

        Refusals (no term, a bad date, no application id) send nothing and deposit no
        receipt; every answer after sending deposits one.
        """
        query_input = dict(arguments or {})
        endpoint = self.searches.endpoint(search_type)
        try:
            terms, params = _build(fields, sortorder, search_type)
        except CoreError as err:
            return self._refused(operation, err, query_input, endpoint)
        appid = await self._appid()
        if appid is None:
            return self._refused(operation, _not_configured(), query_input, endpoint)
        wanted = min(count, MAX_RECORDS)
        params.update({"count": str(wanted), "start": str(start)})
        normalized = _normalized(params)
        env = Envelope(
            server=SERVER_NAME, operation=operation,
            searched_for=_searched_for(terms, search_type),
            query=QueryInfo(input=query_input, normalized=normalized,
                            params=_shown(params), endpoint=endpoint),
        )
        if count > MAX_RECORDS:
            env.diagnose(Level.warning, Code.COUNT_CAPPED,
                         f"count {count} asked; at most {MAX_RECORDS} records are requested per "
                         "search (no bulk retrieval from CiNii Research).",
                         hint="Page with `start` (result.next_start) if you need more.",
                         field="count")
        for term in terms:
            if FIELDS[term.field].free_text and has_latin(term.term):
                env.diagnose(
                    Level.warning, Code.SCRIPT_LATIN_QUERY,
                    f"The {term.field} term {term.term!r} is in Latin letters; CiNii Research "
                    "holds most Japanese-language records in Japanese script only, so a "
                    "romanised term finds only their romanised or English metadata.",
                    hint="Search again with the term in kanji/kana before concluding absence.",
                    field=term.field)
        try:
            exchange = await self.searches.search(search_type, params, appid.reveal())
        except CoreError as err:
            return await self._failed(env, err, terms, params, endpoint, search_type,
                                      appid.reveal())
        return await self._answer(env, exchange, terms, start, wanted, search_type,
                                  appid.reveal())

    # ------------------------------------------------------------------ fetch
    async def get_record(self, crid: str, *, arguments: Mapping[str, Any] | None = None
                         ) -> Envelope:
        """Fetch one record by CRID (or its URL); the envelope has no ``searched_for``."""
        operation = "cinii_get_record"
        query_input = dict(arguments or {})
        given = crid.strip()
        wanted: str | None = None
        if CRID_PATTERN.match(given):
            wanted = given
        elif given.startswith(("https://cir.nii.ac.jp/crid/", "http://cir.nii.ac.jp/crid/")):
            wanted = crid_of(given)
        if wanted is None:
            err = CoreError(
                Code.INVALID_INPUT,
                "crid must be a CiNii Research id (the digits of https://cir.nii.ac.jp/crid/"
                "<CRID>) or that URL; nothing was sent.",
                details={"field": "crid"},
                remediation="Pass the crid of an item from a cinii_search_* result.")
            return self._refused(operation, err, query_input, f"{self.base_url}/crid/")
        endpoint = self.records.endpoint(wanted)
        appid = await self._appid()
        if appid is None:
            return self._refused(operation, _not_configured(), query_input, endpoint)
        env = Envelope(server=SERVER_NAME, operation=operation,
                       query=QueryInfo(input=query_input, normalized=f"crid={wanted}",
                                       params={"appid": _REDACTED}, endpoint=endpoint))
        try:
            exchange = await self.records.fetch(wanted, appid.reveal())
        except CoreError as err:
            if err.code is Code.API_ERROR and err.details.get("status") in (404, 410):
                return await self._not_found(env, wanted, endpoint, appid.reveal())
            return await self._failed(env, err, [], {}, endpoint, None, appid.reveal(),
                                      query=f"crid={wanted}")
        return await self._record(env, exchange, appid.reveal())

    # ------------------------------------------------------------------ envelopes
    async def _appid(self) -> secrets.SecretValue | None:
        # A keyring backend may block (D-Bus, a locked vault): looked up off the event loop.
        return await run_blocking(self._lookup)

    async def _answer(self, env: Envelope, exchange: OpenSearchExchange, terms: list[TermUse],
                      start: int, asked: int, search_type: str, secret: str) -> Envelope:
        page = exchange.page
        problem = _malformed(page, start)
        if problem is not None:
            err = CoreError(
                Code.API_ERROR,
                f"CiNii Research answered in a form that cannot be read as a result: {problem}. "
                "The result is unknown, not empty.",
                details={"reason": "malformed", "problem": problem},
                remediation="Try again later; if it persists, CiNii's output has changed and "
                "this server needs an update. Do not report absence.")
            return await self._failed(env, err, terms, exchange.params, exchange.endpoint,
                                      search_type, secret)
        assert page.total is not None
        results = page.items
        if len(results) > asked:
            env.diagnose(Level.warning, Code.UPSTREAM_DIAGNOSTIC,
                         f"CiNii Research sent {len(results)} records where {asked} were asked; "
                         f"the first {asked} are shown.")
            results = results[:asked]
        matched = [t.field for t in terms if t.match != MatchKind.range]
        items: list[dict[str, Any]] = []
        untitled = 0
        for res in results:
            if res.item is None:
                env.diagnose(Level.warning, Code.RECORD_UNREADABLE,
                             f"Record at position {start + res.position - 1} could not be read: "
                             f"{res.problem}.", hint="It is counted in `total` but not in `items`.")
                continue
            untitled += res.item.title_missing
            items.append(_dump(res.item.model_copy(update={"matched_in": matched})))
        if untitled:
            env.diagnose(Level.info, Code.UPSTREAM_DIAGNOSTIC,
                         f"{untitled} record(s) have no title in CiNii's answer; they are kept, "
                         "marked title_missing.",
                         hint="Fetch one with cinii_get_record for its full record.")
        total = page.total
        delivered = len(results)
        has_more = delivered > 0 and start - 1 + delivered < total
        env.items = items
        env.result = ResultInfo(
            total=total, returned=len(items), start=start, has_more=has_more,
            next_start=start + delivered if has_more else None, breadth=breadth_of(total),
            match_type="none" if not total else _match_type(terms))
        if total == 0:
            env.diagnose(Level.info, Code.ZERO_RESULT,
                         f"CiNii Research found no {search_type} record matching every term.",
                         hint=_zero_hint(terms))
        responses.credit(env, [CINII], SourceStatus.ok if total else SourceStatus.empty)
        env.coverage_note = _coverage(search_type)
        env = _scrub(env, secret)
        await self._deposit(env, exchange.params, exchange.endpoint, search_type, terms,
                            outcome="ok" if total else "empty")
        return env

    async def _record(self, env: Envelope, exchange: RecordExchange, secret: str) -> Envelope:
        page = exchange.page
        if page.item is None:
            err = CoreError(
                Code.API_ERROR,
                f"CiNii Research answered with a record that cannot be read: {page.problem}. "
                "The record is unknown, not absent.",
                details={"reason": "malformed", "problem": page.problem},
                remediation="Try again later; if it persists, report it.")
            return await self._failed(env, err, [], {}, exchange.endpoint, None, secret,
                                      query=f"crid={exchange.crid}")
        if page.item.crid != exchange.crid:
            env.diagnose(Level.info, Code.UPSTREAM_DIAGNOSTIC,
                         f"CiNii Research answered the CRID {exchange.crid} with the record "
                         f"{page.item.crid} (a merged or moved record).")
        if page.item.title_missing:
            env.diagnose(Level.info, Code.UPSTREAM_DIAGNOSTIC,
                         "The record has no title in CiNii's answer (title_missing).")
        env.items = [_dump(page.item)]
        env.result = ResultInfo(total=1, returned=1, start=1, breadth=breadth_of(1),
                                match_type="exact")
        responses.credit(env, [CINII], SourceStatus.ok)
        env = _scrub(env, secret)
        await self._deposit(env, {"crid": exchange.crid}, exchange.endpoint, None, [],
                            outcome="ok", query=f"crid={exchange.crid}")
        return env

    async def _not_found(self, env: Envelope, crid: str, endpoint: str, secret: str
                         ) -> Envelope:
        err = CoreError(
            Code.NOT_FOUND,
            f"CiNii Research has no record with CRID {crid}.",
            details={"field": "crid", "identifier": crid},
            remediation="Check the CRID; or find the record with cinii_search_all (or the "
            "search of its type) and pass the crid of its item.")
        failed = responses.failed_after_send(env, err, sources=[CINII])
        # CiNii answered, and answered "no such record": the source is empty, not broken.
        responses.credit(failed, [CINII], SourceStatus.empty)
        failed = _scrub(failed, secret)
        await self._deposit(failed, {"crid": crid}, endpoint, None, [],
                            outcome=str(Code.NOT_FOUND), query=f"crid={crid}")
        return failed

    async def _failed(self, env: Envelope, err: CoreError, terms: list[TermUse],
                      params: Mapping[str, str], endpoint: str, search_type: str | None,
                      secret: str, *, query: str | None = None) -> Envelope:
        failed = responses.failed_after_send(env, err, sources=[CINII])
        assert failed.error is not None
        if err.code is Code.RATE_LIMITED:
            failed.error.remediation = (
                "The result is UNKNOWN, not empty: do not report absence. Wait a minute and "
                "search again, one query at a time.")
        elif err.code is Code.API_ERROR and err.details.get("status") in (401, 403):
            failed.error.message = (
                f"CiNii Research refused the request (HTTP {err.details['status']}): the "
                f"application id in {ENV_APPID} may be wrong or withdrawn. The result is unknown.")
            failed.error.remediation = (
                f"Check the application id ({REGISTRATION_URL}); store it again with "
                f"`readingroom secrets set {ENV_APPID}`.")
        failed = _scrub(failed, secret)
        await self._deposit(failed, params, endpoint, search_type, terms,
                            outcome=str(err.code), query=query)
        return failed

    def _refused(self, operation: str, err: CoreError, query_input: dict[str, Any],
                 endpoint: str) -> Envelope:
        env = Envelope.failure(SERVER_NAME, operation, err,
                               query=QueryInfo(input=query_input, endpoint=endpoint))
        return responses.credit(env, [CINII], responses.status_for(err.code))

    async def _deposit(self, env: Envelope, params: Mapping[str, str], endpoint: str,
                       search_type: str | None, terms: Sequence[TermUse], *, outcome: str,
                       query: str | None = None) -> None:
        await receipt.deposit(
            env,
            query=query if query is not None else _normalized(params),
            params=_shown(params),
            providers=[f"{CINII.id}:{search_type}"] if search_type else [CINII.id],
            endpoint=endpoint,
            outcome=outcome,
            result_ids=[str(i["crid"]) for i in env.items if i.get("crid")],
            extra={"normalized_terms": [t.model_dump(mode="json") for t in terms]},
            secret_names=("appid",),
            clock=self.clock,
            environ=self._env,
        )


def _not_configured() -> CoreError:
    return CoreError(
        Code.NOT_CONFIGURED,
        f"cinii-mcp has no CiNii application id ({ENV_APPID}), which CiNii Research's Web API "
        "requires; nothing was sent. The result is unknown, not empty.",
        details={"setting": ENV_APPID, "registration": REGISTRATION_URL},
        remediation=f"Apply for an application id at {REGISTRATION_URL} (NII's developer "
        "registration), "
        f"then store it with `readingroom secrets set {ENV_APPID}` (or set {ENV_APPID} in "
        "the server's environment); no restart is needed.")


def _build(fields: Mapping[str, Any], sortorder: str, search_type: str
           ) -> tuple[list[TermUse], dict[str, str]]:
    """The terms and the OpenSearch parameters of a search; INVALID_INPUT when none can be."""
    terms: list[TermUse] = []
    params: dict[str, str] = {}
    for name, spec in FIELDS.items():
        raw = fields.get(name)
        if raw is None:
            continue
        value = " ".join(str(raw).split())
        if not value:
            continue
        if name == "isbn":
            value = value.replace("-", "").replace(" ", "").upper()
            if not _ISBN.match(value):
                raise _invalid(f"isbn {str(raw)[:40]!r} is not an ISBN-10 or ISBN-13.", name)
        if name in ("from", "until") and not _DATE.match(value):
            raise _invalid(f"{name} must be YYYY or YYYYMM (e.g. 1905 or 190501).", name)
        params[spec.param] = value
        terms.append(TermUse(field=name, term=value, index=spec.param, match=spec.match,
                             script=detect_script(value)))
    if not any(t.field in _TERMS for t in terms):
        raise _invalid("Give at least one of q, title, creator, publisher or isbn: a search "
                       "by dates alone is not sent.", None)
    if "from" in params and "until" in params and (
            params["from"] + "01")[:6] > (params["until"] + "12")[:6]:
        raise _invalid(f"from {params['from']} is after until {params['until']}.", "from")
    if sortorder not in SORT_ORDERS:
        raise _invalid(f"sortorder must be one of {', '.join(SORT_ORDERS)}.", "sortorder")
    if sortorder == "citations" and search_type != "articles":
        raise _invalid("sortorder citations is for articles only.", "sortorder")
    params["sortorder"] = SORT_ORDERS[sortorder]
    return terms, params


def _invalid(message: str, field: str | None) -> CoreError:
    return CoreError(Code.INVALID_INPUT, message + " Nothing was sent.",
                     details={"field": field} if field else {},
                     remediation="Fix the named argument and search again.")


def _normalized(params: Mapping[str, str]) -> str:
    """The query as sent, readable (the application id and format left out)."""
    return " AND ".join(f'{k}="{v}"' for k, v in params.items()
                        if k not in ("appid", "format", "count", "start", "sortorder"))


def _shown(params: Mapping[str, str]) -> dict[str, str]:
    """The parameters as an envelope and a receipt show them: the application id redacted."""
    shown = {k: v for k, v in params.items() if k != "appid"}
    return {**shown, "appid": _REDACTED}


def _searched_for(terms: list[TermUse], search_type: str) -> SearchedFor:
    free = " ".join(t.term for t in terms if FIELDS[t.field].free_text)
    return SearchedFor(terms=terms, script=detect_script(free) if free else Script.none,
                       matching="metadata_conjunction",
                       providers=[f"{CINII.id}:{search_type}"])


def _malformed(page: SearchPage, start: int) -> str | None:
    """Why an answer cannot be read as a result (a fabricated zero if it were), or None."""
    if page.problem is not None:
        return page.problem
    total, results = page.total, page.items
    if total is None:
        return "opensearch:totalResults is missing"
    if total < 0:
        return f"opensearch:totalResults is negative ({total})"
    if total == 0 and any(r.item is not None for r in results):
        return f"opensearch:totalResults is 0 but {len(results)} records were delivered"
    if not results and total >= start:
        return f"opensearch:totalResults says {total} but no record was delivered from {start}"
    if results and not any(r.item is not None for r in results):
        first = next((r.problem for r in results if r.problem), "unreadable")
        return f"none of the {len(results)} records delivered could be read (the first: {first})"
    return None


def _dump(item: CiniiItem) -> dict[str, Any]:
    dumped = item.model_dump(mode="json", exclude_none=True)
    # Empty lists and maps say nothing and cost the model tokens; the model defaults them.
    return {k: v for k, v in dumped.items() if v != [] and v != {} and v is not False}


def _scrub(env: Envelope, secret: str) -> Envelope:
    """``env`` with every occurrence of the application id replaced (an upstream that echoes
    it back in a title or a message must not carry it into an answer)."""
    if len(secret) < 4:  # a value this short would redact ordinary text, and is no id
        return env
    text = env.model_dump_json()
    escaped = json.dumps(secret, ensure_ascii=False)[1:-1]
    if escaped not in text:
        return env
    log.warning("an answer from CiNii Research contained the application id; it was redacted")
    return Envelope.model_validate_json(text.replace(escaped, _REDACTED))


def _match_type(terms: Sequence[TermUse]) -> str:
    kinds = {t.match for t in terms if t.match != MatchKind.range}
    return "exact" if kinds == {MatchKind.exact} else "partial"


def _zero_hint(terms: Sequence[TermUse]) -> str:
    if any(has_latin(t.term) for t in terms if FIELDS[t.field].free_text):
        return "A Latin-script term may be the reason; try the Japanese-script form."
    if len([t for t in terms if t.match != MatchKind.range]) > 1:
        return "Every term must match; drop one field to widen the search."
    return "Try a shorter or alternative form of the term, or another record type."


def _coverage(search_type: str) -> str:
    kinds = {"articles": "articles", "books": "books", "dissertations": "doctoral dissertations",
             "projects": "KAKEN research projects", "all": "every record type"}
    return (
        f"Searched CiNii Research ({kinds.get(search_type, search_type)}) through OpenSearch "
        "v2, a metadata search: every term must match (AND). CiNii unites NII's own "
        "databases, CiNii Books holdings, KAKEN, institutional repositories and JaLC; it is "
        "not NDL Search (holdings: ndl-mcp) nor J-STAGE full text (jstage-mcp). Records found "
        "in several of them are counted once here and may be counted again there."
    )

