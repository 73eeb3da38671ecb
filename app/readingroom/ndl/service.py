"""ndl-mcp's operations, importable and testable without MCP: arguments in, Envelope out."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from ..core import receipt, redaction, responses
from ..core.clock import Clock, SystemClock
from ..core.envelope import (
    Envelope,
    Level,
    QueryInfo,
    ResultInfo,
    SearchedFor,
    SourceStatus,
    breadth_of,
)
from ..core.errors import Code, CoreError
from ..core.script import Script, detect_script, has_latin
from . import SERVER
from .cql import BuiltQuery, build_record_query, build_search_query
from .diagnostics import DiagnosticKind
from .models import SruResponse
from .sources import ALL_DPIDS, sources
from .upstreams.ndl_search import MAX_RECORDS, RESULT_WINDOW, NdlClient, SruExchange

__all__ = ["SERVER_NAME", "NdlService"]

SERVER_NAME = SERVER.name
log = logging.getLogger("readingroom.ndl")


class NdlService:
    """Search and fetch over :class:`NdlClient`, answering with envelopes and receipts."""

    def __init__(
        self,
        client: NdlClient,
        *,
        env: Mapping[str, str] | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.client = client
        self._env = env
        self.clock = clock or SystemClock()

    # ------------------------------------------------------------------ search
    async def search(
        self,
        operation: str,
        dpids: Sequence[str],
        fields: Mapping[str, Any],
        *,
        start: int = 1,
        count: int = 20,
        arguments: Mapping[str, Any] | None = None,
    ) -> Envelope:
        """Run one field search over ``dpids`` and return its envelope.

        Typed refusals (reserved word, dpid, invalid input) raise :class:`CoreError` before
        anything is sent; failures after sending return a failure envelope with a receipt.
        """
        query_input = dict(arguments or {})
        try:
            built = build_search_query(fields, dpids)
        except CoreError as err:
            return self._refused(operation, err, query_input, dpids)
        if start > RESULT_WINDOW:
            past = CoreError(
                Code.INVALID_INPUT,
                f"start {start} is past NDL Search's result window: no record after the "
                f"{RESULT_WINDOW}th can be fetched.",
                details={"start": start, "window": RESULT_WINDOW},
                remediation="Narrow the query (add a term or a year range) instead of paging.",
            )
            return self._refused(operation, past, query_input, dpids)
        env = Envelope(
            server=SERVER_NAME,
            operation=operation,
            searched_for=_searched_for(built),
            query=QueryInfo(input=query_input, normalized=built.cql, endpoint=self.client.endpoint),
        )
        wanted = min(count, RESULT_WINDOW - start + 1)
        if count > MAX_RECORDS:
            env.diagnose(
                Level.warning, Code.COUNT_CAPPED,
                f"count {count} asked; at most {MAX_RECORDS} records are requested per search "
                "(an undertaking to the NDL).",
                hint="Page with `start` if you really need more, or narrow the query.",
                field="count",
            )
        for term in built.terms:
            if FIELD_IS_FREE_TEXT.get(term.field) and has_latin(term.term):
                env.diagnose(
                    Level.warning, Code.SCRIPT_LATIN_QUERY,
                    f"The {term.field} term {term.term!r} is in Latin letters; NDL Search "
                    "indexes Japanese-language records in Japanese script, so a romanised term "
                    "under-returns.",
                    hint="Search again with the term in kanji/kana before concluding absence.",
                    field=term.field,
                )
        try:
            exchange = await self.client.search_retrieve(built.cql, start=start, count=wanted)
        except CoreError as err:
            return await self._failed_after_send(env, err, built, start, wanted)
        return await self._answer(env, built, exchange, start)

    async def get_record(
        self, *, jpno: str | None, ndl_bib_id: str | None, ndl_search_id: str | None,
        arguments: Mapping[str, Any] | None = None,
    ) -> Envelope:
        """Fetch one record by an exact identifier; the envelope has no ``searched_for``."""
        operation = "ndl_get_record"
        query_input = dict(arguments or {})
        try:
            attempts = build_record_query(jpno=jpno, ndl_bib_id=ndl_bib_id,
                                          ndl_search_id=ndl_search_id)
        except CoreError as err:
            return self._refused(operation, err, query_input, ALL_DPIDS, searched=False)
        env: Envelope | None = None
        for number, (built, kind) in enumerate(attempts, 1):
            env = Envelope(
                server=SERVER_NAME, operation=operation,
                query=QueryInfo(input=query_input, normalized=built.cql,
                                endpoint=self.client.endpoint),
            )
            try:
                exchange = await self.client.search_retrieve(built.cql, start=1, count=1)
            except CoreError as err:
                return await self._failed_after_send(env, err, built, 1, 1)
            env = await self._answer(env, built, exchange, 1, searched=False, deposit=False)
            if env.error is not None:  # malformed or refused: answered and deposited
                return env
            if env.result is not None and env.result.total:
                await self._deposit(env, built, exchange.params, outcome="ok")
                return env
            if number < len(attempts):  # the next repository may hold it
                await self._deposit(env, built, exchange.params, outcome="empty")
                continue
            return await self._not_found(env, built, exchange, kind, attempts)
        raise AssertionError("build_record_query returns at least one query")

    async def _not_found(
        self, env: Envelope, built: BuiltQuery, exchange: SruExchange, kind: str,
        attempts: Sequence[tuple[BuiltQuery, str]],
    ) -> Envelope:
        """The suite's rule for a fetch of an identifier the upstream does not have."""
        given = built.terms[0].term if built.terms else ""
        err = CoreError(
            Code.NOT_FOUND,
            f"NDL Search has no record with {kind} {given!r} in the five declared sets "
            f"(searched {len(attempts)} exact index{'es' if len(attempts) > 1 else ''}).",
            details={"field": kind, "identifier": given, "queries": [b.cql for b, _ in attempts]},
            remediation="Check the identifier; or find the record with ndl_search_books (or "
            "ndl_search_all) and pass the ndl_search_id of its item.",
        )
        failed = responses.failed_after_send(env, err, sources=sources(built.dpids))
        # The upstream answered, and answered "none": the source is empty, not broken.
        responses.credit(failed, sources(built.dpids), SourceStatus.empty)
        await self._deposit(failed, built, exchange.params, outcome=str(Code.NOT_FOUND))
        return failed

    # ------------------------------------------------------------------ building envelopes
    async def _answer(
        self, env: Envelope, built: BuiltQuery, exchange: SruExchange, start: int,
        *, searched: bool = True, deposit: bool = True,
    ) -> Envelope:
        """The envelope of one answered request; failures are deposited here, a result only
        when ``deposit`` (the caller that decides what the user is told deposits it)."""
        resp = exchange.response
        asked = int(exchange.params["maximumRecords"])
        assert env.query is not None
        env.query.params = dict(redaction.redact(exchange.params))
        kinds = {d.kind for d in resp.diagnostics}
        fatal = [d for d in resp.diagnostics if d.kind is not DiagnosticKind.NO_RECORDS]
        if fatal and not resp.records:
            d = fatal[0]
            err = CoreError(
                Code.API_ERROR,
                f"NDL Search refused the query: {d.message}"
                + (f" ({d.details})" if d.details else ""),
                details={"uri": d.uri, "message": d.message, "details": d.details,
                         "kind": d.kind.value},
                remediation=_REMEDIATION.get(d.kind, "Check the query; the result is unknown."),
            )
            return await self._failed_after_send(env, err, built, start, asked)
        if resp.format_problem and not any(r.item for r in resp.records):
            err = CoreError(
                Code.API_ERROR,
                f"NDL Search answered in a format this server does not read: "
                f"{resp.format_problem}",
                details={"format_problem": resp.format_problem},
                remediation="This is unexpected for the request sent; report it.",
            )
            return await self._failed_after_send(env, err, built, start, asked)
        no_records = DiagnosticKind.NO_RECORDS in kinds
        problem = _malformed(resp, start, no_records)
        if problem is not None:
            err = CoreError(
                Code.API_ERROR,
                f"NDL Search answered in a form that cannot be read as a result: {problem}. "
                "The result is unknown, not empty.",
                details={"reason": "malformed", "problem": problem},
                remediation="Try again later; if it persists, NDL Search's output has changed "
                "and this server needs an update. Do not report absence.",
            )
            return await self._failed_after_send(env, err, built, start, asked)
        total = 0 if no_records and resp.total is None else resp.total
        records = resp.records
        if len(records) > asked:
            env.diagnose(
                Level.warning, Code.UPSTREAM_DIAGNOSTIC,
                f"NDL Search sent {len(records)} records where {asked} were asked; the first "
                f"{asked} are shown.",
            )
            records = records[:asked]
        items: list[dict[str, Any]] = []
        for rec in records:
            if rec.item is None:
                env.diagnose(
                    Level.warning, Code.RECORD_UNREADABLE,
                    f"Record at position {rec.position} could not be read: {rec.problem}",
                    hint="It is counted in `total` but not in `items`.",
                )
                continue
            item = rec.item.model_copy(update={"matched_in": built.indexes})
            dumped = item.model_dump(mode="json", exclude_none=True)
            # Empty lists say nothing and cost the model tokens; NdlItem defaults them anyway.
            items.append({k: v for k, v in dumped.items() if v != [] and v != {}})
        for d in fatal:  # non-fatal upstream notes alongside records
            env.diagnose(Level.warning, Code.UPSTREAM_DIAGNOSTIC,
                         d.message or d.uri or "an upstream diagnostic without a message",
                         hint=d.details)
        env.items = items
        next_pos = resp.next_record_position
        has_more = next_pos is not None and 0 < next_pos <= RESULT_WINDOW
        env.result = ResultInfo(
            total=total,
            returned=len(items),
            start=start,
            has_more=has_more,
            next_start=next_pos if has_more else None,
            breadth=breadth_of(total),
            match_type="none" if not total else _match_type(built),
            by_provider=resp.facets.get("REPOSITORY_NO") or None,
        )
        if no_records or total == 0:
            env.diagnose(
                Level.info, Code.ZERO_RESULT,
                "NDL Search found no record matching every term in the providers searched.",
                hint=_zero_hint(built),
            )
        if total is not None and total > RESULT_WINDOW:
            env.diagnose(
                Level.info, Code.RESULT_WINDOW_CAPPED,
                f"{total} records match; NDL Search serves only the first {RESULT_WINDOW}.",
                hint="Add a term, a subject or a year range to reach the rest.",
            )
        status = SourceStatus.ok if total else SourceStatus.empty
        responses.credit(env, sources(built.dpids), status)
        if searched:
            env.coverage_note = _coverage(built.dpids)
        if deposit:
            await self._deposit(env, built, exchange.params, outcome="ok" if total else "empty")
        return env

    async def _failed_after_send(
        self, env: Envelope, err: CoreError, built: BuiltQuery, start: int, count: int
    ) -> Envelope:
        params = self.client.params_for(built.cql, start=start, count=count)
        query = QueryInfo(input=env.query.input if env.query else {}, normalized=built.cql,
                          params=dict(redaction.redact(params)), endpoint=self.client.endpoint)
        failed = responses.failed_after_send(env, err, sources=sources(built.dpids), query=query)
        if err.code is Code.RATE_LIMITED:
            failed.error.remediation = (  # type: ignore[union-attr]
                "The result is UNKNOWN, not empty: do not report absence. Wait a minute and "
                "run the search again, one query at a time."
            )
        await self._deposit(failed, built, params, outcome=str(err.code))
        return failed

    def _refused(
        self, operation: str, err: CoreError, query_input: dict[str, Any],
        dpids: Sequence[str], *, searched: bool = True,
    ) -> Envelope:
        permitted = [d for d in dpids if d in ALL_DPIDS] or list(ALL_DPIDS)
        return responses.refused(
            SERVER_NAME, operation, err, sources=sources(permitted),
            query=QueryInfo(input=query_input, endpoint=self.client.endpoint),
            capabilities=ALL_DPIDS,
        )

    async def _deposit(
        self, env: Envelope, built: BuiltQuery, params: Mapping[str, str], *, outcome: str
    ) -> None:
        await receipt.deposit(
            env,
            query=built.cql,
            params=params,
            providers=built.dpids,
            endpoint=self.client.endpoint,
            outcome=outcome,
            result_ids=[str(i["ndl_search_id"]) for i in env.items if i.get("ndl_search_id")],
            extra={"normalized_terms": [t.model_dump(mode="json") for t in built.terms]},
            clock=self.clock,
            environ=self._env,
        )


FIELD_IS_FREE_TEXT = {"title": True, "creator": True, "publisher": True, "subject": True,
                      "anywhere": True}

_REMEDIATION = {
    DiagnosticKind.QUERY_SYNTAX: (
        "NDL could not parse the query. Simplify the terms (no operators, no quotes); the "
        "result is unknown, not empty."
    ),
    DiagnosticKind.INVALID_REQUEST: "A request parameter was refused; this is a server defect.",
}


def _malformed(resp: SruResponse, start: int, no_records: bool) -> str | None:
    """Why an answer cannot be read as a result (a fabricated zero if it were), or None.

    NDL's own zero is the "Record does not exist" diagnostic without records or count; a
    count of 0 is a zero too. Anything else must carry a count, and a count that promises
    records on this page must come with them, at least one of them readable.
    """
    total, records = resp.total, resp.records
    if no_records and not records and total in (None, 0):
        return None
    if total is None:
        return "numberOfRecords is missing or not a number"
    if total < 0:
        return f"numberOfRecords is negative ({total})"
    if not records and total >= start:
        return (f"numberOfRecords says {total} but no record was delivered from position "
                f"{start}")
    if records and not any(r.item is not None for r in records):
        first = next((r.problem for r in records if r.problem), "unreadable")
        return f"none of the {len(records)} records delivered could be read (the first: {first})"
    return None


def _searched_for(built: BuiltQuery) -> SearchedFor:
    free = " ".join(t.term for t in built.terms if FIELD_IS_FREE_TEXT.get(t.field))
    return SearchedFor(
        terms=built.terms,
        script=detect_script(free) if free else Script.none,
        matching="metadata_conjunction",
        providers=list(built.dpids),
    )


def _match_type(built: BuiltQuery) -> str:
    kinds = {t.match for t in built.terms if t.match != "range"}
    return "exact" if kinds == {"exact"} else "partial"


def _zero_hint(built: BuiltQuery) -> str:
    if any(has_latin(t.term) for t in built.terms if FIELD_IS_FREE_TEXT.get(t.field)):
        return "A Latin-script term may be the reason; try the Japanese-script form."
    if len(built.terms) > 1:
        return "Every term must match; drop one field to widen the search."
    return "Try a shorter or alternative form of the term."


def _coverage(dpids: Sequence[str]) -> str:
    others = [d for d in ALL_DPIDS if d not in dpids]
    note = f"Searched only {', '.join(dpids)} in NDL Search."
    if others:
        note += f" Not searched: {', '.join(others)}."
    return (
        note + " Other NDL Search providers (CiNii Research, public-library union catalogue, "
        "Digital Collections outside the open-data set) are outside this server's declared "
        f"scope. Records past the {RESULT_WINDOW}th of a result set cannot be fetched."
    )
