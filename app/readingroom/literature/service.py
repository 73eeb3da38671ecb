"""literature-search-mcp's operations, importable and testable without MCP: arguments in,
Envelope out.

* :meth:`LiteratureService.search` fans the chosen providers out at once, each inside its
  budget (:mod:`.budget`), through one paced client per host (:mod:`.client`); turns each
  outcome into that provider's source status; fuses the pages (:mod:`.fusion`), continuing
  from a cursor when one is given (:mod:`.paging`); writes one history line and deposits a
  receipt whose outcome is what the envelope says.
* :meth:`LiteratureService.sources` describes the providers, their hosts' pace, the budgets,
  paging, and which optional variables are configured (and where), never their values.
* :meth:`LiteratureService.fulltext` resolves a PMID or DOI to a PMCID through Europe PMC,
  fetches the JATS full text and returns one part of it, every text field within
  ``max_chars``; an identifier Europe PMC has no open-access full text for is ``NOT_FOUND``.
  Nothing of it is written anywhere.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

import anyio

from ..core import receipt, secrets
from ..core.clock import Clock, SystemClock
from ..core.envelope import (
    Envelope,
    Level,
    QueryInfo,
    ResultInfo,
    SourceInfo,
    SourceStatus,
    utc_now_iso,
)
from ..core.errors import Code, CoreError
from ..core.fanout import Outcome, Status, fan_out
from ..core.offload import run_blocking
from ..core.responses import status_for
from ..core.settings import ENV_TOOL_DEADLINE, env_float
from . import SERVER
from .budget import DEFAULT_BUDGETS, Budget, Budgets, fanout_deadline
from .cache import ResultCache
from .fulltext import answer_part, parse_jats
from .fusion import RRF_K, FusedRecord, fuse
from .history import History, history_line
from .host_clients import HostClients, ProviderHttp, budget_spent
from .identifiers import (
    arxiv_abs_url,
    arxiv_pdf_url,
    normalize_doi,
    normalize_pmcid,
    normalize_pmid,
)
from .models import PROVIDER_ORDER, SearchRequest
from .paging import MAX_RECORDS, Cursor, fingerprint, record_keys
from .upstreams import PROVIDERS
from .upstreams.base import Page, ProviderSettings
from .upstreams.common import (
    ACCEPT_JSON,
    as_dict,
    check_xml,
    count_value,
    list_field,
    load_json,
)

__all__ = ["FANOUT_MARGIN_S", "LiteratureService", "SecretLookup", "fanout_deadline"]

log = logging.getLogger("readingroom.literature")

FANOUT_MARGIN_S = 5.0
"""The fan-out stops waiting this long before the tool deadline (at most a tenth of it)."""

SecretLookup = Callable[[str], secrets.SecretValue | None]

_NOT_CONFIGURED = frozenset({Code.CAPABILITY_UNAVAILABLE})
_FULLTEXT_TAGS_ASKED = 100
"""A JATS article may hold as many tags as a page of this many records (see common)."""


class LiteratureService:
    """Search, sources and full text over the seven providers, answering with envelopes.

    Args:
        env: where settings are read (default ``os.environ``).
        clock: stamps receipts and history, paces the hosts and times the budgets.
        transport: an httpx transport every host client sends through (tests pass
            ``httpx.MockTransport``), or one per provider id.
        secret_lookup: resolves an optional variable (default: environment, then keyring).
        history: where searches are recorded (default: the state folder of ``env``).
        deadline: the tool deadline in seconds (default ``READINGROOM_TOOL_DEADLINE``).
        budgets: the search budgets (default :data:`~.budget.DEFAULT_BUDGETS`; tests pass
            small ones).
    """

    def __init__(
        self,
        *,
        env: Mapping[str, str] | None = None,
        clock: Clock | None = None,
        transport: object | Mapping[str, object] | None = None,
        secret_lookup: SecretLookup | None = None,
        history: History | None = None,
        deadline: float | None = None,
        budgets: Budgets | None = None,
    ) -> None:
        import os

        self._env: Mapping[str, str] = os.environ if env is None else env
        self.clock: Clock = clock or SystemClock()
        self._transport = transport
        self._lookup: SecretLookup = secret_lookup or (lambda n: secrets.resolve(n, self._env))
        self.history = history or History.from_environment(self._env)
        self.deadline = deadline if deadline is not None else env_float(
            ENV_TOOL_DEADLINE, SERVER.deadline_s, 1.0, 900.0, self._env)
        self.budgets = budgets or DEFAULT_BUDGETS
        self.cache = ResultCache(clock=self.clock)
        self._settings: dict[str, ProviderSettings] = {}
        self._where: dict[str, str | None] = {}
        self._hosts: HostClients | None = None

    # ------------------------------------------------------------------ configuration
    def settings(self, provider_id: str) -> ProviderSettings:
        """The provider's base URL and the optional values set (resolved once)."""
        if provider_id not in self._settings:
            provider = PROVIDERS[provider_id]
            info = provider.info
            base = self._env.get(info.url_setting, "").strip() or info.default_url
            values: dict[str, str] = {}
            for name in info.optional_settings:
                found = self._resolve(name)
                if found is not None:
                    values[name] = found.reveal()
            self._settings[provider_id] = ProviderSettings(base_url=base, values=values)
        return self._settings[provider_id]

    def _resolve(self, name: str) -> secrets.SecretValue | None:
        found = self._lookup(name)
        self._where[name] = None if found is None else found.source
        return found

    def where(self, name: str) -> str | None:
        """Where optional variable ``name`` is configured: environment, keyring or None."""
        if name not in self._where:
            self._resolve(name)
        return self._where[name]

    @property
    def hosts(self) -> HostClients:
        """One paced client per host, shared by the providers that reach it (built once)."""
        if self._hosts is None:
            paces = [(p, self.settings(p).base_url, PROVIDERS[p].pacing(self.settings(p)))
                     for p in PROVIDER_ORDER]
            self._hosts = HostClients(paces, clock=self.clock, transport=self._transport)
        return self._hosts

    def fetcher(self, provider_id: str, budget: Budget) -> ProviderHttp:
        """What ``provider_id`` sends through for one operation: its host's client, ``budget``."""
        settings = self.settings(provider_id)
        return ProviderHttp(provider_id, self.hosts.for_url(settings.base_url), budget,
                            self.clock, PROVIDERS[provider_id].headers(settings))

    def budget(self, seconds: float | None = None) -> Budget:
        """A fresh provider budget (its whole time, its retry allowance) from now."""
        b = self.budgets
        return Budget(self.clock, b.provider_s if seconds is None else seconds, b.retry_wait_s)

    async def aclose(self) -> None:
        """Close every client."""
        if self._hosts is not None:
            await self._hosts.aclose()
            self._hosts = None

    # ------------------------------------------------------------------ search
    async def search(
        self,
        request: SearchRequest,
        sources: Sequence[str] | None = None,
        *,
        arguments: Mapping[str, Any] | None = None,
        cursor: str | None = None,
    ) -> Envelope:
        """Search the chosen providers at once and return one fused page.

        Invalid input (blank query, an unknown source, a year range that ends before it
        starts, a cursor of another search or altered) is refused before anything is sent.
        Every completed search, whatever its providers' outcomes, writes one history line and
        deposits one receipt.
        """
        operation = "literature_search"
        query_input = dict(arguments or {})
        chosen = [p for p in PROVIDER_ORDER if sources is None or p in set(sources)]
        problem = _invalid(request, sources, chosen)
        state = Cursor.first(fingerprint(request, chosen), chosen)
        if problem is None and cursor is not None:
            try:
                state = Cursor.decode(cursor, fingerprint=state.fingerprint, providers=chosen)
            except CoreError as exc:
                problem = exc
        asked = {p: min(request.limit, MAX_RECORDS - state.offsets[p]) for p in chosen}
        active = [p for p in chosen if p not in state.done and asked[p] > 0]
        if problem is None and not active:
            problem = CoreError(Code.INVALID_INPUT, "The cursor has nothing left to page.",
                                remediation="Search again without a cursor.")
        if problem is not None:
            env = Envelope.failure(SERVER.name, operation, problem,
                                   query=QueryInfo(input=query_input),
                                   capabilities=list(PROVIDER_ORDER))
            self._credit(env, {p: SourceStatus.skipped for p in PROVIDER_ORDER}, chosen)
            return env

        calls = {p: self._caller(p, replace(request, limit=asked[p]), state.offsets[p])
                 for p in active}
        overall = min(self.budgets.fanout_s, fanout_deadline(self.deadline))
        outcomes = await fan_out(calls, deadline=overall, clock=self.clock)
        statuses: dict[str, SourceStatus] = {p: SourceStatus.skipped for p in PROVIDER_ORDER}
        pages: dict[str, Page] = {}
        failures: list[tuple[str, Outcome[Page]]] = []
        for provider_id, outcome in outcomes.items():
            statuses[provider_id] = _status(outcome)
            if outcome.ok and outcome.value is not None:
                pages[provider_id] = outcome.value
            else:
                failures.append((provider_id, outcome))

        upstreams = {p: PROVIDERS[p].info.upstream or p for p in PROVIDER_ORDER}
        fused = fuse({p: list(page.records) for p, page in pages.items()}, upstreams=upstreams)
        candidates = [r for r in fused if not state.is_seen(record_keys(r))]
        wanted = [r for r in candidates if _wanted(r, request)]
        shown = wanted[: request.limit]
        items = [_item(state.returned + i, r, request.abstract_max_chars)
                 for i, r in enumerate(shown, start=1)]
        after = _advance(state, pages, asked, fused, candidates, shown, request)
        returned = state.returned + len(items)
        more = len(wanted) > len(shown) or any(p not in after.done for p in pages)
        capped = more and returned >= MAX_RECORDS
        has_more = more and not capped

        params = _params(request, chosen, state.page)
        env_query = QueryInfo(input=query_input, normalized=request.query, params=params)
        if not pages:
            env = Envelope.failure(SERVER.name, operation, _nobody_answered(failures, statuses,
                                                                            active),
                                   query=env_query)
        else:
            env = Envelope(server=SERVER.name, operation=operation, query=env_query, items=items)
            env.result = ResultInfo(
                total=state.returned + len(wanted), returned=len(items),
                start=state.returned + 1, has_more=has_more,
                by_provider={p: len(page.records) for p, page in pages.items()},
                match_type="fuzzy" if items else "none",
            )
            env.data = {
                "paging": {"page": state.page, "returned_before": state.returned,
                           "max_records": MAX_RECORDS, "offsets": dict(after.offsets),
                           "finished": sorted(after.done, key=PROVIDER_ORDER.index)},
                "provider_totals": {p: page.total for p, page in pages.items()
                                    if page.total is not None},
            }
            if has_more:
                env.data["next_cursor"] = replace(after, returned=returned,
                                                  page=state.page + 1).encode()
            env.coverage_note = (
                f"Each provider was asked for its next {request.limit} records by its own "
                "relevance (data.paging.offsets says how far each list is read); `total` counts "
                "the distinct papers found so far, not everything that matches "
                "(data.provider_totals has the upstreams' own counts). Ranked by "
                f"reciprocal-rank fusion (k = {RRF_K}), one vote per upstream index; provider "
                "scores are not used. Pass data.next_cursor as `cursor` (with the same query) "
                f"for the next page; paging stops at {MAX_RECORDS} records."
            )
            self._page_diagnostics(env, request, pages, shown, failures, capped)
        for provider_id, outcome in failures:
            code, message, hint = _reason(provider_id, outcome)
            env.diagnose(Level.warning, code, message, hint=hint, field="sources")
        self._credit(env, statuses, chosen)
        if items:
            outcome_word = "ok"
        elif env.error is not None:
            outcome_word = str(env.error.code)
        else:
            outcome_word = "incomplete" if failures else "empty"
        await receipt.deposit(
            env,
            query=request.query,
            params=params,
            providers=chosen,
            endpoint=None,
            outcome=outcome_word,
            result_ids=[_result_id(i) for i in items],
            extra={"source_statuses": {p: str(statuses[p]) for p in chosen},
                   "endpoints": {p: self.settings(p).base_url for p in chosen}},
            clock=self.clock,
            environ=self._env,
        )
        await self._record(env, request, chosen, statuses, items, state.page)
        return env

    def _page_diagnostics(self, env: Envelope, request: SearchRequest, pages: Mapping[str, Page],
                          shown: Sequence[FusedRecord], failures: Sequence[object],
                          capped: bool) -> None:
        """The notes of a page that answered: providers' remarks, unreadable records, filters."""
        for provider_id, page in pages.items():
            for note in page.notes:
                env.diagnose(note.level, note.code, f"{provider_id}: {note.message}",
                             field=note.field)
            if page.unreadable:
                env.diagnose(Level.warning, Code.RECORD_UNREADABLE,
                             f"{provider_id}: {page.unreadable} record"
                             f"{'s' if page.unreadable != 1 else ''} on its page could not be "
                             "read and are not shown (counted, not dropped silently).",
                             field="sources")
        if request.year_from is not None or request.year_to is not None:
            undated = sum(1 for r in shown if r.year is None)
            if undated:
                env.diagnose(
                    Level.info, Code.UPSTREAM_DIAGNOSTIC,
                    f"{undated} of these results ha{'s' if undated == 1 else 've'} no "
                    "publication year at their providers and "
                    f"{'was' if undated == 1 else 'were'} kept: the year filter cannot tell "
                    "whether they fall inside it.",
                    field="year_from" if request.year_from is not None else "year_to")
        if not env.items:
            if failures:
                env.diagnose(Level.warning, Code.ZERO_RESULT,
                             "The providers that answered found no record; the others' results "
                             "are unknown (see their diagnostics), so this is not a checked "
                             "absence across all the sources asked.",
                             hint="Try again later, or with other sources.")
            else:
                env.diagnose(Level.info, Code.ZERO_RESULT,
                             "No record was found by the providers that answered.",
                             hint="Try other words, fewer filters, or more sources.")
        if capped:
            env.diagnose(Level.warning, Code.RESULT_WINDOW_CAPPED,
                         f"Paging stops at {MAX_RECORDS} records (the depth cap of one "
                         "search); more may match. Narrow the query to see them.",
                         field="cursor")

    def _caller(self, provider_id: str, request: SearchRequest,
                offset: int) -> Callable[[], Any]:
        async def call() -> Page:
            budget = self.budget()
            # The budget is also kept on the event loop's clock: a provider that never answers
            # is cut even when the injected clock is a fake one.
            with anyio.move_on_after(budget.seconds):
                return await self._page(provider_id, request, offset, budget)
            raise budget_spent(provider_id, budget)

        return call

    async def _page(self, provider_id: str, request: SearchRequest, offset: int,
                    budget: Budget) -> Page:
        """One provider's page: from the cache, or asked (and cached once it parsed)."""
        settings = self.settings(provider_id)
        key = ("page", provider_id, _settings_digest(settings), request.query,
               request.limit, offset, request.year_from, request.year_to, request.open_access)
        found = self.cache.get(key)
        if isinstance(found, Page):
            return found
        page = await PROVIDERS[provider_id].search(self.fetcher(provider_id, budget), settings,
                                                   request, offset=offset)
        self.cache.put(key, page)
        return page

    def _credit(self, env: Envelope, statuses: Mapping[str, SourceStatus],
                chosen: Sequence[str]) -> None:
        """Every provider's status (unchosen ones ``skipped``) and the chosen ones' credit."""
        env.sources = [
            SourceInfo(**_source_fields(p), status=statuses.get(p, SourceStatus.skipped))
            for p in PROVIDER_ORDER
        ]
        asked = chosen or PROVIDER_ORDER
        env.attribution = list(dict.fromkeys(PROVIDERS[p].info.source.credit for p in asked))

    async def _record(self, env: Envelope, request: SearchRequest, chosen: Sequence[str],
                      statuses: Mapping[str, SourceStatus], items: list[dict[str, Any]],
                      page: int) -> None:
        line = history_line(
            at=utc_now_iso(self.clock.now()),
            parameters={**_params(request, chosen, page), "query": request.query},
            statuses={p: str(statuses[p]) for p in chosen},
            items=items,
        )
        try:
            await anyio.to_thread.run_sync(self.history.append, line)
        except OSError as exc:
            # The search stands; the history is a convenience, not a record of proof.
            log.warning("search history not written (%s)", type(exc).__name__)
            env.diagnose(Level.warning, Code.PATH_UNUSABLE,
                         f"This search was not added to the search history: {self.history.path}"
                         f" could not be written ({_os_reason(exc)}).",
                         hint="Check the folder (LITERATURE_SEARCH_STATE_DIR), or ignore: the "
                         "search itself is unaffected.")

    # ------------------------------------------------------------------ sources
    def sources(self) -> Envelope:
        """The providers, their hosts, the budgets, paging and the optional variables."""
        providers = []
        for provider_id in PROVIDER_ORDER:
            info = PROVIDERS[provider_id].info
            providers.append({
                "id": info.id,
                "name": info.source.name,
                "url": info.source.url,
                "licence": info.source.licence,
                "credit": info.source.credit,
                "query_syntax": "native (passed through)" if info.native_syntax
                else "keywords (fields, wildcards and operators removed)",
                "exclusion": info.exclusion,
                "searches_index_of": info.upstream,
                "limitations": list(info.limitations),
                "base_url_setting": info.url_setting,
                "base_url_overridden": bool(self._env.get(info.url_setting, "").strip()),
                "optional_variables": list(info.optional_settings),
            })
        users: dict[str, list[str]] = {}
        for provider_id in PROVIDER_ORDER:
            for name in PROVIDERS[provider_id].info.optional_settings:
                users.setdefault(name, []).append(provider_id)
        variables = []
        for name in SERVER.secrets:
            source = self.where(name)
            variables.append({"name": name, "configured": source is not None,
                              "from": source, "used_by": users.get(name, [])})
        env = Envelope(server=SERVER.name, operation="literature_sources")
        env.data = {
            "providers": providers,
            "optional_variables": variables,
            "default_order": list(PROVIDER_ORDER),
            "budgets": self.budgets.describe(self.deadline),
            "hosts": self.hosts.describe(),
            "paging": {
                "max_records": MAX_RECORDS,
                "rule": "Each page asks every provider for its next `limit` records and fuses "
                "them; data.next_cursor (given exactly when has_more is true) carries each "
                "provider's offset and the identifiers already returned, so no record is "
                f"returned twice. One request per provider per page; at most {MAX_RECORDS} "
                "records per search.",
            },
            "ranking": (
                f"Reciprocal-rank fusion, k = {RRF_K}: each upstream index votes once per "
                "paper at its best rank (bioRxiv/medRxiv are searched in Europe PMC's preprint "
                "index, so they share Europe PMC's vote); ties by provider order, rank, title. "
                "Provider scores are never used."
            ),
            "deduplication": (
                "By normalised DOI, then PMID, then versionless arXiv id (arXiv's "
                "10.48550/arXiv DOIs count as the arXiv id), then normalised title (years at "
                "most one apart, no generic titles). Records with different values of the same "
                "identifier are never merged."
            ),
            "open_access_rule": (
                "Open access needs positive evidence: a licence or the provider's OA flag "
                "(Europe PMC isOpenAccess, OpenAlex is_oa, Semantic Scholar openAccessPdf, the "
                "PMC open-access filter, arXiv and bioRxiv/medRxiv preprints). A text-mining "
                "or free-to-read link is not."
            ),
            "status_vocabulary": {
                "ok": "answered with records", "empty": "answered: none (a checked zero)",
                "rate_limited": "refused for load; the result is unknown",
                "error": "failed, unreadable, or no answer within its budget (timeout); the "
                "result is unknown", "skipped": "not asked (not chosen, nothing it can "
                "search for, or finished on an earlier page)",
                "not_configured": "needs configuration (none of the seven today)",
            },
            "history_file": str(self.history.path),
        }
        self._credit(env, {}, PROVIDER_ORDER)
        return env

    # ------------------------------------------------------------------ full text
    async def fulltext(
        self,
        *,
        pmcid: str | None = None,
        pmid: str | None = None,
        doi: str | None = None,
        max_chars: int = 100_000,
        offset: int = 0,
        arguments: Mapping[str, Any] | None = None,
    ) -> Envelope:
        """One part of Europe PMC's open-access full text, by PMCID (or a PMID or DOI).

        ``data.status`` is ``ok`` with the part (every text field within ``max_chars``; pass
        ``data.next_offset`` as ``offset`` for the next part). An article Europe PMC has no
        open-access full text for (no PMC record, not in the open-access subset — HTTP 404 — or
        an article without a body) is a ``NOT_FOUND`` error with ``data.status`` ``not_found``
        and the reason; a transport or upstream failure is its own error (``data.status``
        ``error``), never ``not_found``. Nothing is persisted.
        """
        operation = "literature_get_fulltext"
        query_input = dict(arguments or {})
        base = self.settings("europepmc").base_url.rstrip("/")
        query = QueryInfo(input=query_input, endpoint=f"{base}/{{PMCID}}/fullTextXML")
        wanted_pmcid = normalize_pmcid(pmcid) if pmcid else None
        wanted_pmid = normalize_pmid(pmid) if pmid else None
        wanted_doi = normalize_doi(doi) if doi else None
        problem = None
        if not (pmcid or pmid or doi):
            problem = "Give one of pmcid, pmid or doi."
        elif pmcid and wanted_pmcid is None:
            problem = f"{pmcid!r} is not a PMCID (PMC followed by digits)."
        elif pmid and wanted_pmid is None:
            problem = f"{pmid!r} is not a PMID (digits)."
        elif doi and wanted_doi is None:
            problem = f"{doi!r} is not a DOI (10.<prefix>/<suffix>)."
        if problem is not None:
            err = CoreError(Code.INVALID_INPUT, problem,
                            remediation="Pass a PMCID such as PMC3339582, a PMID or a DOI.")
            env = Envelope.failure(SERVER.name, operation, err, query=query)
            _credit_europepmc(env, SourceStatus.skipped)
            return env

        asked_by = "pmcid" if wanted_pmcid else ("pmid" if wanted_pmid else "doi")
        unused = [(name, value) for name, value in (("pmid", wanted_pmid), ("doi", wanted_doi))
                  if value and name != asked_by]
        budget = self.budget(self.budgets.fanout_s)
        resolved = wanted_pmcid
        article = None
        try:
            with anyio.move_on_after(budget.seconds) as scope:
                http = self.fetcher("europepmc", budget)
                if resolved is None:
                    resolved = await self._resolve_pmcid(wanted_pmid, wanted_doi, budget)
                if resolved is not None:
                    article = await self._article(http, base, resolved)
            if scope.cancelled_caught:
                raise budget_spent("europepmc", budget)
        except _NotFound as missing:
            env = await self._not_found(operation, query, asked_by, missing.reason,
                                        ids={"pmcid": missing.pmcid or resolved,
                                             "pmid": wanted_pmid, "doi": wanted_doi})
            _note_unused(env, asked_by, unused)
            return env
        except CoreError as err:
            env = Envelope.failure(SERVER.name, operation, err, query=query,
                                   data={"status": "error", "pmcid": resolved})
            _credit_europepmc(env, status_for(err.code))
            await self._deposit_fulltext(env, resolved, str(err.code))
            return env
        if resolved is None:
            env = await self._not_found(
                operation, query, asked_by,
                "Europe PMC holds no PubMed Central record for this "
                f"{asked_by}, so there is no open-access full text to read.",
                ids={"pmid": wanted_pmid, "doi": wanted_doi})
            _note_unused(env, asked_by, unused)
            return env
        assert article is not None
        if not article.has_body or not any(s.text for s in article.sections):
            part = answer_part(article, max_chars=max_chars)
            env = await self._not_found(
                operation, query, asked_by,
                f"Europe PMC's XML of {resolved} has front matter but no body: the publisher "
                "does not allow downloading this full text as XML.",
                ids={"pmcid": resolved, "pmid": article.pmid, "doi": article.doi},
                extra={k: part.get(k) for k in ("title", "abstract", "metadata")})
            _note_unused(env, asked_by, unused)
            return env
        try:
            part = answer_part(article, max_chars=max_chars, offset=offset)
        except ValueError as exc:
            refused = CoreError(Code.INVALID_INPUT, f"{exc}.", details={"pmcid": resolved},
                                remediation="Pass an offset below full_text_chars (0 for the "
                                "start).")
            env = Envelope.failure(SERVER.name, operation, refused, query=query)
            _credit_europepmc(env, SourceStatus.ok)
            return env
        env = Envelope(server=SERVER.name, operation=operation, query=query)
        env.data = {"status": "ok", "pmcid": resolved, **part,
                    "source_url": f"https://europepmc.org/article/PMC/{resolved}"}
        env.data = {k: v for k, v in env.data.items() if v is not None}
        if part["truncated"]:
            end = part["next_offset"]
            env.diagnose(Level.info, Code.COUNT_CAPPED,
                         f"full_text holds characters {offset}-{end} of "
                         f"{part['full_text_chars']} (max_chars {max_chars} bounds the whole "
                         f"answer); pass offset {end} for the next part.", field="max_chars")
        _note_unused(env, asked_by, unused)
        _credit_europepmc(env, SourceStatus.ok)
        await self._deposit_fulltext(env, resolved, "ok")
        return env

    async def _article(self, http: ProviderHttp, base: str, pmcid: str) -> Any:
        try:
            response = await http.get(f"{base}/{pmcid}/fullTextXML",
                                      headers={"Accept": "application/xml"})
        except CoreError as exc:
            if exc.details.get("status") == 404:
                raise _NotFound(
                    f"{pmcid} is not in Europe PMC's open-access subset (HTTP 404): its full "
                    "text cannot be downloaded.", pmcid) from None
            raise
        try:
            return await run_blocking(_read_article, response.content)
        except (CoreError, ValueError) as exc:
            raise CoreError(
                Code.API_ERROR,
                f"Europe PMC's full text of {pmcid} could not be read as JATS.",
                details={"pmcid": pmcid, "reason": type(exc).__name__},
                remediation="Try again later; the full text is unknown, not absent.",
            ) from None

    async def _resolve_pmcid(self, pmid: str | None, doi: str | None,
                             budget: Budget) -> str | None:
        settings = self.settings("europepmc")
        base = settings.base_url.rstrip("/")
        query = f"EXT_ID:{pmid} AND SRC:MED" if pmid else f'DOI:"{doi}"'
        key = ("resolve", _settings_digest(settings), query)
        cached = self.cache.get(key)
        if isinstance(cached, tuple):
            return cast(str | None, cached[0])
        response = await self.fetcher("europepmc", budget).get(
            f"{base}/search",
            {"query": query, "format": "json", "resultType": "lite", "pageSize": "1"},
            headers=ACCEPT_JSON,
        )
        found = await run_blocking(_read_resolution, response.content)
        self.cache.put(key, (found,))
        return found

    async def _not_found(
        self, operation: str, query: QueryInfo, asked_by: str, reason: str, *,
        ids: Mapping[str, str | None], extra: Mapping[str, Any] | None = None,
    ) -> Envelope:
        err = CoreError(
            Code.NOT_FOUND, reason,
            details={k: v for k, v in ids.items() if v},
            remediation="Use literature_search to find the paper, then its url or pdf_url; "
            "literature_get_fulltext reads only Europe PMC's open-access subset.",
        )
        data = {"status": "not_found", "reason": reason, **{k: v for k, v in ids.items() if v},
                **{k: v for k, v in (extra or {}).items() if v}}
        env = Envelope.failure(SERVER.name, operation, err, query=query, data=data)
        _credit_europepmc(env, SourceStatus.empty)
        await self._deposit_fulltext(env, ids.get("pmcid"), str(Code.NOT_FOUND))
        return env

    async def _deposit_fulltext(self, env: Envelope, pmcid: str | None, outcome: str) -> None:
        await receipt.deposit(
            env, query=f"fullTextXML:{pmcid or '?'}", params=dict(env.query.input)
            if env.query else {}, providers=["europepmc"],
            endpoint=env.query.endpoint if env.query else None, outcome=outcome,
            result_ids=[pmcid] if pmcid and outcome == "ok" else [],
            clock=self.clock, environ=self._env,
        )


class _NotFound(Exception):
    """Europe PMC says there is no open-access full text for the identifier."""

    def __init__(self, reason: str, pmcid: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.pmcid = pmcid


def _read_article(body: bytes) -> Any:
    check_xml(body, asked=_FULLTEXT_TAGS_ASKED, provider="Europe PMC")
    return parse_jats(body)


def _read_resolution(body: bytes) -> str | None:
    """The PMCID a ``lite`` search answered (None: Europe PMC has no PMC record for it).

    Raises:
        CoreError: API_ERROR for an answer that is not a search result, or a count above zero
            with no result (unknown, never "no PMC record").
    """
    payload = as_dict(load_json(body, asked=1, provider="Europe PMC"))
    result_list = payload.get("resultList")
    if not isinstance(result_list, dict):
        raise CoreError(Code.API_ERROR, "The Europe PMC answer was not a search result.",
                        details={"provider": "europepmc"},
                        remediation="Try again later; the result is unknown.")
    results = list_field(result_list, "result", "Europe PMC", "search result") or []
    for item in results:
        if isinstance(item, dict):
            found = normalize_pmcid(item.get("pmcid"))
            if found:
                return found
    hits = count_value(payload.get("hitCount"))
    if not results and (hits is None or hits > 0):
        raise CoreError(Code.API_ERROR,
                        f"Europe PMC said {hits if hits is not None else 'an unknown number of'}"
                        " records match the identifier but delivered none.",
                        details={"provider": "europepmc"},
                        remediation="Try again later; the result is unknown.")
    return None


def _note_unused(env: Envelope, used: str, unused: Sequence[tuple[str, str]]) -> None:
    for name, value in unused:
        env.diagnose(Level.info, Code.INVALID_INPUT,
                     f"{used} was used; {name} {value} was not looked up (one identifier is "
                     "enough: pmcid first, then pmid, then doi).", field=name)


def _settings_digest(settings: ProviderSettings) -> str:
    """A digest of a provider's settings for cache keys (secret values never kept as such)."""
    basis = "\n".join([settings.base_url, *(f"{k}={v}" for k, v in sorted(
        settings.values.items()))])
    return hashlib.sha256(basis.encode("utf-8")).hexdigest()


def _os_reason(exc: OSError) -> str:
    import errno

    name = errno.errorcode.get(exc.errno or 0, "")
    return f"{exc.strerror or type(exc).__name__}{f', {name}' if name else ''}"


def _advance(state: Cursor, pages: Mapping[str, Page], asked: Mapping[str, int],
             fused: Sequence[FusedRecord], candidates: Sequence[FusedRecord],
             shown: Sequence[FusedRecord], request: SearchRequest) -> Cursor:
    """The cursor after this page: offsets past what was consumed, finished providers, seen.

    A provider's offset moves past the longest run of its records, from the top of its page,
    that were returned now or before or were filtered out; a provider is finished when its
    upstream said there is no more (its count reached, a short page) or the depth cap is hit.
    """
    owner = {id(m): record for record in fused for m in record.members}
    live = {id(r) for r in candidates}
    shown_ids = {id(r) for r in shown}
    offsets = dict(state.offsets)
    done = set(state.done)
    for provider_id, page in pages.items():
        consumed = 0
        for member in page.records:
            record = owner[id(member)]
            if id(record) in live and id(record) not in shown_ids and _wanted(record, request):
                break
            consumed += 1
        delivered = len(page.records) + page.unreadable
        moved = delivered if consumed == len(page.records) else consumed
        offsets[provider_id] = min(MAX_RECORDS, state.offsets[provider_id] + moved)
        short = delivered < asked[provider_id] and consumed == len(page.records)
        reached = page.total is not None and offsets[provider_id] >= page.total
        if short or reached or offsets[provider_id] >= MAX_RECORDS:
            done.add(provider_id)
    seen = set(state.seen)
    for record in shown:
        seen.update(record_keys(record))
    return replace(state, offsets=offsets, done=frozenset(done), seen=frozenset(seen))


def _nobody_answered(failures: Sequence[tuple[str, Outcome[Page]]],
                     statuses: Mapping[str, SourceStatus], active: Sequence[str]) -> CoreError:
    first = next(o.error for _p, o in failures if o.error is not None)
    code = (Code.RATE_LIMITED if all(statuses[p] is SourceStatus.rate_limited for p in active)
            else first.code)
    return CoreError(
        code,
        "No provider answered; the result is unknown, not empty.",
        details={"sources": {p: str(statuses[p]) for p in active}},
        remediation="Read the diagnostics for each provider's reason; try again later or "
        "with other sources.",
    )


# ---------------------------------------------------------------------- helpers
def _invalid(request: SearchRequest, sources: Sequence[str] | None,
             chosen: Sequence[str]) -> CoreError | None:
    if not request.query:
        return CoreError(Code.INVALID_INPUT, "The query is empty.",
                         remediation="Give words to search for.")
    unknown = [s for s in (sources or ()) if s not in PROVIDERS]
    if unknown:
        return CoreError(Code.INVALID_INPUT, f"Unknown sources: {', '.join(unknown)}.",
                         details={"unknown": unknown},
                         remediation=f"Choose among {', '.join(PROVIDER_ORDER)}.")
    if sources is not None and not chosen:
        return CoreError(Code.INVALID_INPUT, "No source was chosen.",
                         remediation="Omit `sources` to search all seven.")
    if (request.year_from is not None and request.year_to is not None
            and request.year_from > request.year_to):
        return CoreError(Code.INVALID_INPUT,
                         f"year_from {request.year_from} is after year_to {request.year_to}.",
                         remediation="Swap the years or drop one.")
    return None


def _status(outcome: Outcome[Page]) -> SourceStatus:
    if outcome.status is Status.ok:
        page = outcome.value
        return SourceStatus.ok if page is not None and page.records else SourceStatus.empty
    if outcome.status is Status.timeout:
        return SourceStatus.error
    code = outcome.code
    assert code is not None
    if code in _NOT_CONFIGURED:
        return SourceStatus.not_configured
    return status_for(code)


def _reason(provider_id: str, outcome: Outcome[Any]) -> tuple[Code, str, str | None]:
    err = outcome.error
    assert err is not None
    if outcome.status is Status.timeout:
        message = (f"{provider_id}: timeout: no answer within the search's "
                   f"{err.details.get('deadline_s', outcome.seconds):g} s; abandoned so the "
                   "others' answers stand. Its result is unknown, not empty.")
    elif err.code is Code.RATE_LIMITED:
        message = (f"{provider_id}: rate limited: {err.message} Its result is unknown, not "
                   "'no results'.")
    else:
        message = f"{provider_id}: {err.message}"
    return err.code, message, err.remediation or None


def _wanted(record: FusedRecord, request: SearchRequest) -> bool:
    year = record.year
    if year is not None:
        if request.year_from is not None and year < request.year_from:
            return False
        if request.year_to is not None and year > request.year_to:
            return False
    if request.open_access:
        is_oa, _ = record.open_access()
        return bool(is_oa) or record.first("pdf_url") is not None
    return True


def _params(request: SearchRequest, chosen: Sequence[str], page: int = 1) -> dict[str, str]:
    params = {"limit": str(request.limit), "sources": ",".join(chosen),
              "abstract_max_chars": str(request.abstract_max_chars)}
    for name in ("year_from", "year_to", "open_access"):
        value = getattr(request, name)
        if value is not None:
            params[name] = str(value).lower() if isinstance(value, bool) else str(value)
    if page > 1:
        params["page"] = str(page)
    return params


def _credit_europepmc(env: Envelope, status: SourceStatus) -> None:
    """Full text touches Europe PMC alone: it is the one source listed and credited."""
    env.sources = [SourceInfo(**_source_fields("europepmc"), status=status)]
    env.attribution = [PROVIDERS["europepmc"].info.source.credit]


def _source_fields(provider_id: str) -> dict[str, str]:
    source = PROVIDERS[provider_id].info.source
    return {"id": source.id, "name": source.name, "licence": source.licence, "url": source.url,
            "credit": source.credit}


def _item(rank: int, record: FusedRecord, max_chars: int) -> dict[str, Any]:
    arxiv = record.ids.get("arxiv")
    version = record.arxiv_version
    abstract = record.first("abstract")
    abstract_from = next((m.provider for m in record.members if m.abstract), None)
    url = record.first("url") or (arxiv_abs_url(arxiv) if arxiv else None)
    pdf = record.first("pdf_url") or (arxiv_pdf_url(arxiv, version) if arxiv else None)
    is_oa, oa_evidence = record.open_access()
    item: dict[str, Any] = {
        "rank": rank,
        "title": record.title,
        "doi": record.doi,
        "pmid": record.ids.get("pmid"),
        "pmcid": record.ids.get("pmcid"),
        "arxiv_id": arxiv,
        "arxiv_version": version,
        "year": record.year,
        "authors": list(cast(tuple[str, ...], record.first("authors") or ())),
        "venue": record.first("venue"),
        "url": url,
        "pdf_url": pdf,
        "rrf_score": round(record.score, 6),
        "evidence": [
            {"provider": e.provider, "rank": e.rank,
             **({"votes_with": e.upstream} if e.upstream != e.provider else {})}
            for e in record.evidence
        ],
        "open_access": is_oa,
        "open_access_evidence": oa_evidence,
    }
    if isinstance(abstract, str):
        item["abstract"] = abstract[:max_chars]
        item["abstract_source"] = abstract_from
        if len(abstract) > max_chars:
            item["abstract_truncated"] = True
    return {k: v for k, v in item.items() if v is not None and v != []}


def _result_id(item: Mapping[str, Any]) -> str:
    for key, prefix in (("doi", "doi:"), ("pmid", "pmid:"), ("arxiv_id", "arxiv:"),
                        ("pmcid", "pmcid:")):
        if item.get(key):
            return f"{prefix}{item[key]}"
    return f"title:{item.get('title', '')[:80]}"
