"""literature-search-mcp's operations, importable and testable without MCP: arguments in,
Envelope out.

* :meth:`LiteratureService.search` fans the chosen providers out at once under one deadline
  (:func:`readingroom.core.fanout.fan_out`), turns each outcome into that provider's source
  status, fuses the lists (:mod:`.fusion`), writes one history line and deposits a receipt.
* :meth:`LiteratureService.sources` describes the providers and which optional variables are
  configured (and where), never their values.
* :meth:`LiteratureService.fulltext` resolves a PMID or DOI to a PMCID through Europe PMC,
  fetches the JATS full text and returns its sections; nothing of it is written anywhere.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
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
from ..core.http import HttpClient
from ..core.responses import status_for
from ..core.settings import ENV_TOOL_DEADLINE, env_float
from . import SERVER
from .cache import CachedGets, GetCache
from .fulltext import join_full_text, parse_jats
from .fusion import RRF_K, FusedRecord, fuse
from .history import History, history_line
from .identifiers import (
    arxiv_abs_url,
    arxiv_pdf_url,
    normalize_doi,
    normalize_pmcid,
    normalize_pmid,
)
from .models import PROVIDER_ORDER, LiteratureRecord, SearchRequest
from .providers import PROVIDERS
from .providers.base import Provider, ProviderSettings

__all__ = ["FANOUT_MARGIN_S", "LiteratureService", "SecretLookup", "fanout_deadline"]

log = logging.getLogger("readingroom.literature")

FANOUT_MARGIN_S = 5.0
"""The fan-out stops waiting this long before the tool deadline (at most a tenth of it), so
the tool answers with the providers that did answer."""

SecretLookup = Callable[[str], secrets.SecretValue | None]

_NOT_CONFIGURED = frozenset({Code.CAPABILITY_UNAVAILABLE})


def fanout_deadline(tool_deadline: float) -> float:
    """Seconds the fan-out waits for providers under a tool deadline of ``tool_deadline``."""
    return max(0.5, tool_deadline - min(FANOUT_MARGIN_S, tool_deadline / 10))


class LiteratureService:
    """Search, sources and full text over the seven providers, answering with envelopes.

    Args:
        env: where settings are read (default ``os.environ``).
        clock: stamps receipts and history and paces the providers' clients.
        transport: an httpx transport every provider client sends through (tests pass
            ``httpx.MockTransport``), or one per provider id.
        secret_lookup: resolves an optional variable (default: environment, then keyring).
        history: where searches are recorded (default: the state folder of ``env``).
        deadline: the tool deadline in seconds (default ``READINGROOM_TOOL_DEADLINE``).
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
    ) -> None:
        import os

        self._env: Mapping[str, str] = os.environ if env is None else env
        self.clock: Clock = clock or SystemClock()
        self._transport = transport
        self._lookup: SecretLookup = secret_lookup or (lambda n: secrets.resolve(n, self._env))
        self.history = history or History.from_environment(self._env)
        self.deadline = deadline if deadline is not None else env_float(
            ENV_TOOL_DEADLINE, SERVER.deadline_s, 1.0, 900.0, self._env)
        self.cache = GetCache(clock=self.clock)
        self._settings: dict[str, ProviderSettings] = {}
        self._clients: dict[str, HttpClient] = {}
        self._where: dict[str, str | None] = {}

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

    def client(self, provider_id: str) -> HttpClient:
        """The provider's paced client (one per process)."""
        if provider_id not in self._clients:
            provider = PROVIDERS[provider_id]
            transport = self._transport
            if isinstance(transport, Mapping):
                transport = transport.get(provider_id)
            self._clients[provider_id] = provider.client(
                self.settings(provider_id), transport=transport, clock=self.clock)
        return self._clients[provider_id]

    def cached(self, provider_id: str) -> HttpClient:
        """The provider's client seen through the shared GET cache."""
        return cast(HttpClient, CachedGets(self.client(provider_id), self.cache, provider_id))

    async def aclose(self) -> None:
        """Close every client."""
        for http in self._clients.values():
            await http.aclose()
        self._clients.clear()

    # ------------------------------------------------------------------ search
    async def search(
        self,
        request: SearchRequest,
        sources: Sequence[str] | None = None,
        *,
        arguments: Mapping[str, Any] | None = None,
    ) -> Envelope:
        """Search the chosen providers at once and return the fused envelope.

        Invalid input (blank query, an unknown source, a year range that ends before it
        starts) is refused before anything is sent. Every completed search, whatever its
        providers' outcomes, writes one history line and deposits one receipt.
        """
        operation = "literature_search"
        query_input = dict(arguments or {})
        chosen = [p for p in PROVIDER_ORDER if sources is None or p in set(sources)]
        problem = _invalid(request, sources, chosen)
        if problem is not None:
            env = Envelope.failure(SERVER.name, operation, problem,
                                   query=QueryInfo(input=query_input),
                                   capabilities=list(PROVIDER_ORDER))
            self._credit(env, {p: SourceStatus.skipped for p in PROVIDER_ORDER}, chosen)
            return env

        calls = {p: self._caller(PROVIDERS[p], request) for p in chosen}
        outcomes = await fan_out(calls, deadline=fanout_deadline(self.deadline),
                                 clock=self.clock)
        statuses: dict[str, SourceStatus] = {p: SourceStatus.skipped for p in PROVIDER_ORDER}
        lists: dict[str, list[LiteratureRecord]] = {}
        diagnostics: list[tuple[Code, str, str | None]] = []
        for provider_id, outcome in outcomes.items():
            statuses[provider_id] = _status(outcome)
            if outcome.ok:
                lists[provider_id] = list(outcome.value or [])
            else:
                diagnostics.append(_reason(provider_id, outcome))

        upstreams = {p: PROVIDERS[p].info.upstream or p for p in PROVIDER_ORDER}
        fused = [r for r in fuse(lists, upstreams=upstreams) if _wanted(r, request)]
        items = [_item(i, r, request.abstract_max_chars)
                 for i, r in enumerate(fused[: request.limit], start=1)]

        answered = [p for p in chosen if outcomes[p].ok]
        env_query = QueryInfo(input=query_input, normalized=request.query.strip(),
                              params=_params(request, chosen))
        if not answered:
            first = next(o.error for o in outcomes.values() if o.error is not None)
            assert first is not None
            code = (Code.RATE_LIMITED if all(s is SourceStatus.rate_limited
                                             for p, s in statuses.items() if p in chosen)
                    else first.code)
            err = CoreError(
                code,
                "No provider answered; the result is unknown, not empty.",
                details={"sources": {p: str(statuses[p]) for p in chosen}},
                remediation="Read the diagnostics for each provider's reason; try again later "
                "or with other sources.",
            )
            env = Envelope.failure(SERVER.name, operation, err, query=env_query)
        else:
            env = Envelope(server=SERVER.name, operation=operation, query=env_query, items=items)
            env.result = ResultInfo(
                total=len(fused), returned=len(items), start=1,
                has_more=len(fused) > len(items),
                by_provider={p: len(lists[p]) for p in answered},
                match_type="fuzzy" if items else "none",
            )
            env.coverage_note = (
                f"Each provider was asked for its top {request.limit} records by its own "
                "relevance; `total` counts the distinct papers among those lists, not "
                "everything that matches. Ranked by reciprocal-rank fusion (k = "
                f"{RRF_K}), one vote per upstream index; provider scores are not used."
            )
            if not items:
                env.diagnose(Level.info, Code.ZERO_RESULT,
                             "No record was found by the providers that answered.",
                             hint="Try other words, fewer filters, or more sources.")
        for code, message, hint in diagnostics:
            env.diagnose(Level.warning, code, message, hint=hint, field="sources")
        self._credit(env, statuses, chosen)
        await receipt.deposit(
            env,
            query=request.query.strip(),
            params=_params(request, chosen),
            providers=chosen,
            endpoint=None,
            outcome="ok" if items else ("empty" if env.error is None else str(env.error.code)),
            result_ids=[_result_id(i) for i in items],
            extra={"source_statuses": {p: str(statuses[p]) for p in chosen},
                   "endpoints": {p: self.settings(p).base_url for p in chosen}},
            clock=self.clock,
            environ=self._env,
        )
        await self._record(request, chosen, statuses, items)
        return env

    def _caller(self, provider: Provider, request: SearchRequest) -> Callable[[], Any]:
        provider_id = provider.info.id

        async def call() -> list[LiteratureRecord]:
            return await provider.search(self.cached(provider_id), self.settings(provider_id),
                                         request)

        return call

    def _credit(self, env: Envelope, statuses: Mapping[str, SourceStatus],
                chosen: Sequence[str]) -> None:
        """Every provider's status (unchosen ones ``skipped``) and the chosen ones' credit."""
        env.sources = [
            SourceInfo(**_source_fields(p), status=statuses.get(p, SourceStatus.skipped))
            for p in PROVIDER_ORDER
        ]
        asked = chosen or PROVIDER_ORDER
        env.attribution = list(dict.fromkeys(PROVIDERS[p].info.source.credit for p in asked))

    async def _record(self, request: SearchRequest, chosen: Sequence[str],
                      statuses: Mapping[str, SourceStatus], items: list[dict[str, Any]]) -> None:
        line = history_line(
            at=utc_now_iso(self.clock.now()),
            parameters={**_params(request, chosen), "query": request.query.strip()},
            statuses={p: str(statuses[p]) for p in chosen},
            items=items,
        )
        try:
            await anyio.to_thread.run_sync(self.history.append, line)
        except OSError as exc:
            # The search stands; the history is a convenience, not a record of proof.
            log.warning("search history not written (%s)", type(exc).__name__)

    # ------------------------------------------------------------------ sources
    def sources(self) -> Envelope:
        """The providers, their limitations and the optional variables (configured or not)."""
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
        arguments: Mapping[str, Any] | None = None,
    ) -> Envelope:
        """Europe PMC open-access full text by PMCID (or a PMID or DOI resolved to one).

        ``data.status`` is ``ok``, or ``not_found`` (no PMC record, not in the open-access
        subset — HTTP 404 — or an article without a body); a transport or upstream failure is
        an error envelope with ``data.status`` ``error``. Nothing is persisted.
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

        http = self.client("europepmc")
        resolved = wanted_pmcid
        asked_by = "pmcid" if wanted_pmcid else ("pmid" if wanted_pmid else "doi")
        try:
            if resolved is None:
                resolved = await self._resolve_pmcid(wanted_pmid, wanted_doi)
            if resolved is None:
                return await self._not_found(
                    operation, query, asked_by,
                    "Europe PMC holds no PubMed Central record for this "
                    f"{asked_by}, so there is no open-access full text to read.",
                    ids={"pmid": wanted_pmid, "doi": wanted_doi})
            try:
                response = await http.get(f"{base}/{resolved}/fullTextXML",
                                          headers={"Accept": "application/xml"})
            except CoreError as exc:
                if exc.details.get("status") == 404:
                    return await self._not_found(
                        operation, query, asked_by,
                        f"{resolved} is not in Europe PMC's open-access subset (HTTP 404): "
                        "its full text cannot be downloaded.",
                        ids={"pmcid": resolved, "pmid": wanted_pmid, "doi": wanted_doi})
                raise
            try:
                article = parse_jats(response.content)
            except (CoreError, ValueError) as exc:
                raise CoreError(
                    Code.API_ERROR,
                    f"Europe PMC's full text of {resolved} could not be read as JATS.",
                    details={"pmcid": resolved, "reason": type(exc).__name__},
                    remediation="Try again later; the full text is unknown, not absent.",
                ) from None
        except CoreError as err:
            env = Envelope.failure(SERVER.name, operation, err, query=query,
                                   data={"status": "error", "pmcid": resolved})
            _credit_europepmc(env, status_for(err.code))
            await self._deposit_fulltext(env, resolved, str(err.code))
            return env

        if not article.has_body or not any(s.text for s in article.sections):
            return await self._not_found(
                operation, query, asked_by,
                f"Europe PMC's XML of {resolved} has front matter but no body: the publisher "
                "does not allow downloading this full text as XML.",
                ids={"pmcid": resolved, "pmid": article.pmid, "doi": article.doi},
                title=article.title, abstract=article.abstract, metadata=article.metadata())
        full = join_full_text(article)
        env = Envelope(server=SERVER.name, operation=operation, query=query)
        env.data = {
            "status": "ok",
            "pmcid": resolved,
            "title": article.title,
            "abstract": article.abstract,
            "sections": [s.to_dict() for s in article.sections],
            "full_text": full[:max_chars],
            "full_text_chars": len(full),
            "truncated": len(full) > max_chars,
            "metadata": article.metadata(),
            "source_url": f"https://europepmc.org/article/PMC/{resolved}",
        }
        if len(full) > max_chars:
            env.diagnose(Level.info, Code.COUNT_CAPPED,
                         f"full_text holds the first {max_chars} of {len(full)} characters; "
                         "`sections` are complete.", field="max_chars")
        _credit_europepmc(env, SourceStatus.ok)
        await self._deposit_fulltext(env, resolved, "ok")
        return env

    async def _resolve_pmcid(self, pmid: str | None, doi: str | None) -> str | None:
        base = self.settings("europepmc").base_url.rstrip("/")
        query = f"EXT_ID:{pmid} AND SRC:MED" if pmid else f'DOI:"{doi}"'
        payload = await self.cached("europepmc").get_json(
            f"{base}/search",
            {"query": query, "format": "json", "resultType": "lite", "pageSize": "1"},
        )
        results = (payload.get("resultList") or {}).get("result") if isinstance(payload, dict) \
            else None
        if not isinstance(results, list):
            raise CoreError(Code.API_ERROR, "The Europe PMC answer was not a search result.",
                            details={"provider": "europepmc"},
                            remediation="Try again later; the result is unknown.")
        for item in results:
            if isinstance(item, dict):
                found = normalize_pmcid(item.get("pmcid"))
                if found:
                    return found
        return None

    async def _not_found(
        self, operation: str, query: QueryInfo, asked_by: str, reason: str, *,
        ids: Mapping[str, str | None], title: str | None = None, abstract: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Envelope:
        env = Envelope(server=SERVER.name, operation=operation, query=query)
        env.data = {"status": "not_found", "reason": reason,
                    **{k: v for k, v in ids.items() if v},
                    "title": title, "abstract": abstract, "sections": [], "full_text": "",
                    "metadata": dict(metadata or {})}
        env.data = {k: v for k, v in env.data.items() if v is not None}
        env.diagnose(Level.info, Code.ZERO_RESULT, reason,
                     hint="Use the record's url or pdf_url from literature_search instead.")
        _credit_europepmc(env, SourceStatus.empty)
        await self._deposit_fulltext(env, ids.get("pmcid"), "not_found")
        return env

    async def _deposit_fulltext(self, env: Envelope, pmcid: str | None, outcome: str) -> None:
        await receipt.deposit(
            env, query=f"fullTextXML:{pmcid or '?'}", params=dict(env.query.input)
            if env.query else {}, providers=["europepmc"],
            endpoint=env.query.endpoint if env.query else None, outcome=outcome,
            result_ids=[pmcid] if pmcid and outcome == "ok" else [],
            clock=self.clock, environ=self._env,
        )


# ---------------------------------------------------------------------- helpers
def _invalid(request: SearchRequest, sources: Sequence[str] | None,
             chosen: Sequence[str]) -> CoreError | None:
    if not request.query.strip():
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


def _status(outcome: Outcome[list[LiteratureRecord]]) -> SourceStatus:
    if outcome.status is Status.ok:
        return SourceStatus.ok if outcome.value else SourceStatus.empty
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
        message = (f"{provider_id}: no answer within {outcome.seconds:.1f} s; abandoned so the "
                   "others' answers stand. Its result is unknown, not empty.")
    elif err.code is Code.RATE_LIMITED:
        message = (f"{provider_id}: rate limited (HTTP 429) after the retries allowed. Its "
                   "result is unknown, not 'no results'.")
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


def _params(request: SearchRequest, chosen: Sequence[str]) -> dict[str, str]:
    params = {"limit": str(request.limit), "sources": ",".join(chosen),
              "abstract_max_chars": str(request.abstract_max_chars)}
    for name in ("year_from", "year_to", "open_access"):
        value = getattr(request, name)
        if value is not None:
            params[name] = str(value).lower() if isinstance(value, bool) else str(value)
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
