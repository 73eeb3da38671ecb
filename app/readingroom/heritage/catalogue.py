"""Helveticat's three operations: arguments in, :class:`~readingroom.core.envelope.Envelope` out.

**Paths.** ``query`` without ``set_spec`` is an SRU full-text search of the whole catalogue
with a total; ``set_spec`` pages through one OAI-PMH collection, and ``query`` then filters
only the page fetched. Change dates (``from_date``/``until_date``) are OAI datestamps, valid
only with ``set_spec``. Guards refuse before any request.

**Order.** Alma returns SRU hits in ascending title order unless the query ends in ``sortBy``
(research §4.7; the recorded ``Sammlung`` page is punctuation-first alphabetical). Ex Libris'
SRU documentation names sortable indexes only through ``explain`` (``sort=true``) and documents
no relevance key; ``sortBy alma.rank/sort.descending`` is a third-party observation, not an
Ex Libris statement. So nothing is sorted: every SRU answer says it is in **title order, not
relevance** (``data.order``), and every OAI answer that it is in **repository order**.

**Envelope.** Items have one shape on both paths (:mod:`.marc`, :mod:`.dc`; see
:data:`ITEM_KEYS`). ``data`` carries what the result block has no field for: ``path``,
``order``, ``order_note``, ``next_cursor``, the OAI ``set_spec``/``metadata_prefix``, the
``page_filter`` note, and ``loosened`` for the fuzzy step.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import Any

from ..core import receipt, redaction, responses
from ..core.clock import Clock, SystemClock
from ..core.envelope import (
    Envelope,
    Level,
    QueryInfo,
    ResultInfo,
    SourceStatus,
    breadth_of,
)
from ..core.errors import Code, CoreError
from ..core.oaipmh import OaiErrorCode, OaiResponse
from .catalogue_oai import (
    describe_oai,
    is_no_profile,
    list_records_params,
    oai_error,
    oai_item,
    oai_searched_for,
    page_match,
)
from .catalogue_paging import (
    MAX_SEEN,
    OaiCursor,
    SruCursor,
    decode_cursor,
    encode_cursor,
    query_fingerprint,
    token_hash,
)
from .catalogue_sru import sru_damage, sru_failure, sru_item, sru_searched_for
from .catalogue_values import OAI_ID_PREFIX
from .cql import (
    LOOSENED_RELATION,
    PHRASE_RELATION,
    BuiltCql,
    build_cql,
    can_loosen,
)
from .guards import RESULT_WINDOW, check_search, normalise_identifier
from .oai_sets import (
    GET_RECORD_PREFIX,
    SET_NAME_TYPOS,
    prefix_for,
    set_group,
)
from .sources import HELVETICAT, HELVETICAT_ID
from .upstreams.helveticat import MAX_RECORDS, HelveticatClient, OaiExchange, SruExchange

__all__ = [
    "DEFAULT_SERVER_NAME",
    "ITEM_KEYS",
    "OAI_ORDER_NOTE",
    "SRU_ORDER",
    "SRU_ORDER_NOTE",
    "Catalogue",
]

log = logging.getLogger("readingroom.heritage.helveticat")

DEFAULT_SERVER_NAME = "swiss-cultural-heritage-mcp"
OAI_LIST_SETS_MAX_PAGES = 5
SRU_ORDER = "title"
SRU_ORDER_NOTE = (
    "Title order (ascending, punctuation first), not relevance: Alma's SRU default when no "
    "sortBy is sent, and Ex Libris documents no relevance sort key for SRU."
)
OAI_ORDER_NOTE = (
    "Repository order of the OAI-PMH collection (by the repository, not by relevance, title "
    "or date)."
)
ITEM_KEYS = (
    "id", "mms_id", "title", "creators", "contributors", "date", "dates", "places",
    "publishers", "edition", "extent", "types", "languages", "subjects", "ddc", "series",
    "notes", "coverage", "relations", "rights", "licence", "identifiers", "permalink",
    "links", "source", "path", "datestamp", "set_specs",
)
"""Every key an item may have; absent keys mean the record has no such value.

``id`` is the OAI identifier ``heritage_get_publication`` takes; ``creators`` and
``contributors`` are lists of ``{name, dates?, gnd?, roles?}``; ``identifiers`` maps
``isbn``/``issn``/``doi``/``system_numbers``/``other`` to lists; ``licence`` is
``{name, url}`` when the record's own rights statement names one; ``datestamp`` is the
catalogue change date (OAI path only), never a publication year."""



class Catalogue:
    """The NB's catalogue over :class:`HelveticatClient`, answering with envelopes and receipts.

    Args:
        client: the upstream client.
        server: the server name the envelopes carry.
        env: where the receipt ledger setting is read (default ``os.environ``).
        clock: stamps the receipts.
    """

    def __init__(
        self,
        client: HelveticatClient,
        *,
        server: str = DEFAULT_SERVER_NAME,
        env: Mapping[str, str] | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.client = client
        self.server = server
        self._env = env
        self.clock = clock or SystemClock()

    # ------------------------------------------------------------------ search
    async def search(
        self,
        *,
        query: str | None = None,
        set_spec: str | None = None,
        from_date: str | None = None,
        until_date: str | None = None,
        index: str = "all_for_ui",
        limit: int = 10,
        cursor: str | None = None,
        arguments: Mapping[str, Any] | None = None,
        operation: str = "heritage_search_helveticat",
    ) -> Envelope:
        """Search the catalogue (SRU) or page through a collection (OAI-PMH).

        Every refusal happens before a request: dates without a set, neither query nor set,
        an index outside the closed list, a malformed date or cursor, a cursor of another
        query. Failures after sending are failure envelopes with a receipt.
        """
        query_input = dict(arguments or {})
        query = " ".join(query.split()) if query else None
        set_spec = set_spec.strip() if set_spec else None
        try:
            parsed = decode_cursor(cursor) if cursor else None
            check_search(query, set_spec, from_date, until_date, index, parsed)
        except CoreError as err:
            return self._refused(operation, err, query_input)
        env = Envelope(server=self.server, operation=operation)
        count = min(limit, MAX_RECORDS)
        if limit > MAX_RECORDS:
            env.diagnose(
                Level.warning, Code.COUNT_CAPPED,
                f"limit {limit} asked; at most {MAX_RECORDS} records are returned per call "
                "(Alma's SRU ceiling, kept for collections too).",
                hint="Continue with data.next_cursor for more.", field="limit",
            )
        if set_spec is not None or isinstance(parsed, OaiCursor):
            oai_cursor = parsed if isinstance(parsed, OaiCursor) else None
            return await self._browse(env, query_input, query, set_spec, from_date,
                                      until_date, count, oai_cursor)
        assert query is not None
        sru_cursor = parsed if isinstance(parsed, SruCursor) else None
        return await self._search_sru(env, query_input, query, index, count, sru_cursor)

    # ------------------------------------------------------------------ SRU path
    async def _search_sru(
        self, env: Envelope, query_input: dict[str, Any], term: str, index: str, count: int,
        cursor: SruCursor | None,
    ) -> Envelope:
        start = cursor.start if cursor else 1
        relation = cursor.relation if cursor else PHRASE_RELATION
        built = build_cql(index, term, relation)
        env.searched_for = sru_searched_for(built)
        env.query = QueryInfo(input=query_input, normalized=built.cql,
                              endpoint=self.client.sru_url)
        try:
            exchange = await self.client.search_retrieve(built.cql, start=start, count=count)
            failure = sru_failure(exchange.response) or sru_damage(exchange.response, start)
            if failure is not None:
                return await self._sru_failed(env, failure, built, start, count)
            loosened: dict[str, Any] | None = None
            if (cursor is None and exchange.response.number_of_records == 0
                    and not exchange.response.records and can_loosen(index, term)):
                exact = built
                built = build_cql(index, term, LOOSENED_RELATION)
                loosened = {"from": exact.cql, "to": built.cql,
                            "why": "the phrase found 0 records; every word anywhere instead"}
                env.searched_for = sru_searched_for(built)
                env.query = QueryInfo(input=query_input, normalized=built.cql,
                                      endpoint=self.client.sru_url)
                exchange = await self.client.search_retrieve(built.cql, start=1, count=count)
                failure = (sru_failure(exchange.response)
                           or sru_damage(exchange.response, 1))
                if failure is not None:
                    return await self._sru_failed(env, failure, built, start, count)
        except CoreError as err:
            return await self._sru_failed(env, err, built, start, count)
        return await self._sru_answer(env, built, exchange, start, count, loosened)

    async def _sru_answer(
        self, env: Envelope, built: BuiltCql, exchange: SruExchange, start: int, count: int,
        loosened: dict[str, Any] | None,
    ) -> Envelope:
        resp = exchange.response
        assert env.query is not None
        env.query.params = dict(redaction.redact(exchange.params))
        # An upstream that sends more than was asked is cut to what was asked: `limit: 1`
        # returns at most one record, and the next page starts after the last one kept.
        page = resp.records[:count]
        if len(resp.records) > count:
            env.diagnose(Level.info, Code.COUNT_CAPPED,
                         f"Helveticat sent {len(resp.records)} records for {count} asked; the "
                         f"first {count} are returned and the next page starts after them.")
        items: list[dict[str, Any]] = []
        unreadable: list[str] = []
        for rec in page:
            item = sru_item(rec)
            if isinstance(item, str):
                unreadable.append(item)
                env.diagnose(Level.warning, Code.RECORD_UNREADABLE,
                             f"Record at position {rec.position} could not be read: {item}",
                             hint="It is counted in total but not in items.")
                continue
            items.append(item)
        if page and not items:
            err = CoreError(
                Code.API_ERROR,
                f"Helveticat sent {len(page)} records and none could be read "
                f"({unreadable[0]}). This is not an empty result.",
                details={"reason": "every_record_unreadable", "records": len(page)},
                remediation="Try again later; report it if it persists.",
            )
            return await self._sru_failed(env, err, built, start, count)
        for d in resp.diagnostics:
            env.diagnose(Level.warning, Code.UPSTREAM_DIAGNOSTIC,
                         d.message or d.uri or "an upstream diagnostic without a message",
                         hint=d.details)
        total = resp.number_of_records
        delivered = start - 1 + len(resp.records)
        if total is None:
            env.diagnose(Level.warning, Code.UPSTREAM_DIAGNOSTIC,
                         "Helveticat's answer has no numberOfRecords: the total is unknown "
                         "(not zero); has_more follows the records delivered.")
        elif total < delivered:
            env.diagnose(Level.warning, Code.UPSTREAM_DIAGNOSTIC,
                         f"Helveticat claims {total} records but delivered up to position "
                         f"{delivered}: the total is unknown.")
            total = None
        more = (len(resp.records) > count
                or (total is not None and start - 1 + len(page) < total)
                or (total is None and (resp.next_record_position or 0) > start))
        # Computed from what was kept, never taken from the upstream: a cursor never points at
        # a page already served.
        next_pos = start + len(page) if more and page else None
        has_more = next_pos is not None and next_pos <= RESULT_WINDOW
        fuzzy = built.relation == LOOSENED_RELATION
        env.items = items
        env.result = ResultInfo(
            total=total, returned=len(items), start=start, has_more=has_more,
            next_start=next_pos if has_more else None, breadth=breadth_of(total),
            match_type="none" if total == 0 else ("fuzzy" if fuzzy else "exact"),
        )
        if total is not None and total > 0 and not page:
            env.diagnose(Level.info, Code.UPSTREAM_DIAGNOSTIC,
                         f"Position {start} is past the last of the {total} records: this "
                         "page is empty, the search is not.")
        data: dict[str, Any] = {"path": "sru", "order": SRU_ORDER, "order_note": SRU_ORDER_NOTE}
        if has_more and next_pos is not None:
            data["next_cursor"] = encode_cursor(SruCursor(
                start=next_pos, relation=built.relation,
                fingerprint=query_fingerprint(built.index, built.term)))
        if loosened is not None:
            data["loosened"] = loosened
        env.data = data
        if fuzzy and total != 0:
            env.diagnose(
                Level.info, Code.UPSTREAM_DIAGNOSTIC,
                f"No record holds the phrase; these {total if total is not None else ''} "
                "hold every word somewhere (match_type fuzzy). Check each for relevance.",
                hint="A quoted phrase in another index (title, subjects) may be more precise.",
            )
        if total == 0:
            env.diagnose(
                Level.info, Code.ZERO_RESULT,
                "Helveticat found no record for this search"
                + (" (the phrase, then every word)." if loosened else "."),
                hint="Try another index or a shorter term.",
            )
        if total is not None and total > RESULT_WINDOW:
            env.diagnose(
                Level.info, Code.RESULT_WINDOW_CAPPED,
                f"{total} records match; Alma's SRU serves only the first {RESULT_WINDOW}.",
                hint="Narrow the query (another index, more words) to reach the rest.",
            )
        env.coverage_note = (
            "The whole Helveticat catalogue, searched server-side over SRU. " + SRU_ORDER_NOTE
        )
        status = SourceStatus.empty if total == 0 else SourceStatus.ok
        responses.credit(env, [HELVETICAT], status)
        await self._deposit(env, built.cql, exchange.params, self.client.sru_url,
                            outcome=str(status))
        return env

    async def _sru_failed(
        self, env: Envelope, err: CoreError, built: BuiltCql, start: int, count: int
    ) -> Envelope:
        params = self.client.sru_params(built.cql, start=start, count=count)
        query = QueryInfo(input=env.query.input if env.query else {}, normalized=built.cql,
                          params=dict(redaction.redact(params)), endpoint=self.client.sru_url)
        failed = responses.failed_after_send(env, err, sources=[HELVETICAT], query=query)
        await self._deposit(failed, built.cql, params, self.client.sru_url,
                            outcome=str(err.code))
        return failed

    # ------------------------------------------------------------------ OAI path
    async def _browse(
        self, env: Envelope, query_input: dict[str, Any], term: str | None,
        set_spec: str | None, from_date: str | None, until_date: str | None, count: int,
        cursor: OaiCursor | None,
    ) -> Envelope:
        if cursor is not None:
            page = cursor
        else:
            assert set_spec is not None
            page = OaiCursor(set_spec=set_spec, prefix=prefix_for(set_spec), skip=0,
                             from_date=from_date, until_date=until_date)
        params = list_records_params(page)
        described = describe_oai(params)
        env.searched_for = oai_searched_for(term, page.set_spec)
        env.query = QueryInfo(input=query_input, normalized=described,
                              params=dict(redaction.redact(params)), endpoint=self.client.oai_url)
        try:
            exchange = await self.client.oai(params)
        except CoreError as err:
            return await self._oai_failed(env, err, described, params)
        resp = exchange.response
        if resp.errors:
            return await self._oai_errors(env, resp, page, term, described, exchange)
        return await self._browse_answer(env, exchange, page, term, count, described)

    async def _browse_answer(
        self, env: Envelope, exchange: OaiExchange, page: OaiCursor, term: str | None,
        count: int, described: str,
    ) -> Envelope:
        resp = exchange.response
        records = resp.records
        token = resp.resumption_token
        if not records and page.token is None and not resp.has_more:
            # An empty list is OAI-PMH's noRecordsMatch error, never a ListRecords without
            # records: this answer is damaged, not an empty collection.
            err = CoreError(
                Code.API_ERROR,
                f"Helveticat answered ListRecords for {page.set_spec!r} with no record, no "
                "resumption token and no noRecordsMatch. This is not an empty collection.",
                details={"reason": "list_without_records"},
                remediation="Try again later; the result is unknown.",
            )
            return await self._oai_failed(env, err, described, exchange.params)
        items: list[dict[str, Any]] = []
        consumed = page.skip
        deleted = unreadable = 0
        for position in range(page.skip, len(records)):
            if len(items) >= count:
                break
            consumed = position + 1
            rec = records[position]
            if rec.header.deleted:
                deleted += 1
                continue
            item = oai_item(rec) if rec.metadata is not None else None
            if item is None:
                unreadable += 1
                env.diagnose(Level.warning, Code.RECORD_UNREADABLE,
                             f"Record {rec.header.identifier} has no metadata in MARC21 or "
                             "Dublin Core (and is not marked deleted): it could not be read.",
                             hint="It is skipped; the rest of the page is valid.")
                continue
            if term and not page_match(item, term):
                continue
            items.append(item)
        readable = consumed - page.skip - deleted - unreadable
        if unreadable and not readable:
            err = CoreError(
                Code.API_ERROR,
                f"None of the {unreadable} records Helveticat sent for {page.set_spec!r} could "
                "be read. This is not an empty collection.",
                details={"reason": "every_record_unreadable", "records": unreadable},
                remediation="Try again later; report it if it persists.",
            )
            return await self._oai_failed(env, err, described, exchange.params)
        next_page: OaiCursor | None = None
        loop: str | None = None
        if consumed < len(records):
            next_page = dataclasses.replace(page, skip=consumed)
        elif token is not None and token.value is not None:
            followed = (*page.seen, token_hash(page.token)) if page.token else page.seen
            if token.value == page.token or token_hash(token.value) in followed:
                loop = token.value
            else:
                next_page = OaiCursor(set_spec=page.set_spec, prefix=page.prefix, skip=0,
                                      token=token.value, from_date=page.from_date,
                                      until_date=page.until_date,
                                      seen=tuple(followed[-MAX_SEEN:]))
        if loop is not None:
            env.diagnose(
                Level.warning, Code.UPSTREAM_DIAGNOSTIC,
                "Helveticat's resumptionToken points back to a page already served (the same "
                "token again): paging stops here so no page is given twice. The collection may "
                "hold more records than were listed.",
                hint="Start the collection again later, or narrow it with from_date/until_date.",
            )
        size = token.complete_list_size if token is not None else None
        if size is None and next_page is None and page.token is None and loop is None:
            size = len(records)  # one page, no token: the whole list is on it
        total = None if term else size
        env.items = items
        match_type: Any = None
        if not term:
            match_type = "exact" if items else None
        env.result = ResultInfo(
            total=total, returned=len(items), start=page.skip + 1,
            has_more=next_page is not None, breadth=breadth_of(total), match_type=match_type,
        )
        data: dict[str, Any] = {
            "path": "oai", "set_spec": page.set_spec, "metadata_prefix": page.prefix,
            "order": "repository", "order_note": OAI_ORDER_NOTE,
            "page": {"records_on_page": len(records), "read_from": page.skip + 1,
                     "read_to": consumed, "deleted_skipped": deleted},
        }
        if size is not None:
            data["collection_size"] = size
        if next_page is not None:
            data["next_cursor"] = encode_cursor(next_page)
        if loop is not None:
            data["paging_stopped"] = "repeated_resumption_token"
        if term:
            data["page_filter"] = {
                "query": term,
                "note": (
                    f"query filtered only the {consumed - page.skip} records read from this "
                    f"page of {page.set_spec!r} (every word in title, names, subjects, notes "
                    "or series); the collection itself was not searched. total is unknown."
                ),
            }
        env.data = data
        window = ""
        if page.from_date or page.until_date:
            window = (f" changed between {page.from_date or 'the start'} and "
                      f"{page.until_date or 'now'} (catalogue change dates, not publication "
                      "years)")
        env.coverage_note = (
            f"One page of the OAI-PMH collection {page.set_spec!r}{window}, in "
            f"{page.prefix}. " + OAI_ORDER_NOTE
            + (" query filtered this page only." if term else "")
        )
        status = SourceStatus.ok if items or next_page else SourceStatus.empty
        responses.credit(env, [HELVETICAT], status)
        await self._deposit(env, described, exchange.params, self.client.oai_url,
                            outcome=str(status))
        return env

    async def _oai_errors(
        self, env: Envelope, resp: OaiResponse, page: OaiCursor, term: str | None,
        described: str, exchange: OaiExchange,
    ) -> Envelope:
        first = resp.errors[0]
        if first.known is OaiErrorCode.NO_RECORDS_MATCH and not is_no_profile(first):
            env.items = []
            env.result = ResultInfo(total=0, returned=0, start=page.skip + 1, has_more=False,
                                    breadth=breadth_of(0), match_type="none")
            env.data = {"path": "oai", "set_spec": page.set_spec,
                        "metadata_prefix": page.prefix, "order": "repository",
                        "order_note": OAI_ORDER_NOTE, "collection_size": 0}
            env.diagnose(
                Level.info, Code.ZERO_RESULT,
                f"The collection {page.set_spec!r} has no record in this change-date window "
                "(OAI noRecordsMatch)." if page.from_date or page.until_date else
                f"The collection {page.set_spec!r} lists no record (OAI noRecordsMatch).",
                hint="Widen or drop from_date/until_date (they are change dates).",
            )
            env.coverage_note = f"The OAI-PMH collection {page.set_spec!r}: empty."
            responses.credit(env, [HELVETICAT], SourceStatus.empty)
            await self._deposit(env, described, exchange.params, self.client.oai_url,
                                outcome="empty")
            return env
        err = oai_error(first, resp.errors, page)
        return await self._oai_failed(env, err, described, exchange.params)

    async def _oai_failed(
        self, env: Envelope, err: CoreError, described: str, params: Mapping[str, str]
    ) -> Envelope:
        failed = responses.failed_after_send(env, err, sources=[HELVETICAT])
        await self._deposit(failed, described, params, self.client.oai_url,
                            outcome=str(err.code))
        return failed

    # ------------------------------------------------------------------ GetRecord
    async def get_publication(
        self, identifier: str, *, arguments: Mapping[str, Any] | None = None,
        operation: str = "heritage_get_publication",
    ) -> Envelope:
        """Fetch one record by OAI identifier or MMS id, always as MARC21.

        Not found (``idDoesNotExist``, or a deleted record) is a ``NOT_FOUND`` failure
        envelope, never a plain string or an empty list.
        """
        query_input = dict(arguments or {})
        oai_id = normalise_identifier(identifier)
        if oai_id is None:
            err = CoreError(
                Code.INVALID_INPUT,
                "identifier is neither a Helveticat OAI identifier "
                f"({OAI_ID_PREFIX}<MMS id>) nor an MMS id. Nothing was sent.",
                details={"field": "identifier"},
                remediation="Pass an item's id from heritage_search_helveticat.",
            )
            return self._refused(operation, err, query_input)
        params = {"verb": "GetRecord", "identifier": oai_id, "metadataPrefix": GET_RECORD_PREFIX}
        described = describe_oai(params)
        env = Envelope(server=self.server, operation=operation,
                       query=QueryInfo(input=query_input, normalized=described,
                                       params=dict(params), endpoint=self.client.oai_url))
        try:
            exchange = await self.client.oai(params)
        except CoreError as sent_err:
            return await self._oai_failed(env, sent_err, described, params)
        resp = exchange.response
        record = resp.records[0] if resp.records else None
        not_found = (
            any(e.known is OaiErrorCode.ID_DOES_NOT_EXIST for e in resp.errors)
            or (record is not None and record.header.deleted)
        )
        if not_found:
            reason = "deleted" if record is not None else "idDoesNotExist"
            err = CoreError(
                Code.NOT_FOUND,
                f"Helveticat has no record {oai_id}"
                + (" (it was deleted)." if reason == "deleted" else "."),
                details={"identifier": oai_id, "reason": reason},
                remediation="Check the id; search again with heritage_search_helveticat.",
            )
            failed = responses.failed_after_send(env, err, sources=[HELVETICAT])
            responses.credit(failed, [HELVETICAT], SourceStatus.empty)
            await self._deposit(failed, described, params, self.client.oai_url,
                                outcome=str(err.code))
            return failed
        if resp.errors or record is None:
            err = (oai_error(resp.errors[0], resp.errors, None) if resp.errors else CoreError(
                Code.API_ERROR, "Helveticat answered GetRecord without a record.",
                remediation="Try again later; the result is unknown."))
            return await self._oai_failed(env, err, described, params)
        answered = record.header.identifier
        if answered is not None and answered != oai_id:
            err = CoreError(Code.API_ERROR,
                            f"Helveticat answered GetRecord {oai_id} with another record "
                            f"({answered[:80]}).",
                            details={"reason": "identifier_mismatch"},
                            remediation="Try again later; the result is unknown.")
            return await self._oai_failed(env, err, described, params)
        item = oai_item(record) if record.metadata is not None else None
        if item is None:
            err = CoreError(Code.API_ERROR,
                            "Helveticat's record has no metadata in MARC21 (and is not marked "
                            "deleted): it could not be read. This is not 'not found'.",
                            details={"reason": "record_unreadable"},
                            remediation="Try again later; report it if it persists.")
            return await self._oai_failed(env, err, described, params)
        env.items = [item]
        env.result = ResultInfo(total=1, returned=1, start=1, has_more=False,
                                breadth=breadth_of(1), match_type="exact")
        env.data = {"path": "oai", "metadata_prefix": GET_RECORD_PREFIX}
        responses.credit(env, [HELVETICAT], SourceStatus.ok)
        await self._deposit(env, described, params, self.client.oai_url, outcome="ok")
        return env

    # ------------------------------------------------------------------ ListSets
    async def list_collections(
        self, *, arguments: Mapping[str, Any] | None = None,
        operation: str = "heritage_list_nb_collections",
    ) -> Envelope:
        """List the OAI-PMH sets, each with the metadata format it is published in."""
        query_input = dict(arguments or {})
        params: dict[str, str] = {"verb": "ListSets"}
        env = Envelope(server=self.server, operation=operation,
                       query=QueryInfo(input=query_input, normalized="verb=ListSets",
                                       params=dict(params), endpoint=self.client.oai_url))
        items: list[dict[str, Any]] = []
        by_spec: dict[str, dict[str, Any]] = {}
        tokens: set[str] = set()
        pages = repeated = unnamed = 0
        while True:
            pages += 1
            try:
                exchange = await self.client.oai(params)
            except CoreError as err:
                return await self._oai_failed(env, err, "verb=ListSets", params)
            resp = exchange.response
            if resp.errors:
                return await self._oai_failed(env, oai_error(resp.errors[0], resp.errors, None),
                                              "verb=ListSets", params)
            for s in resp.sets:
                if not s.spec:
                    unnamed += 1
                    continue
                if s.spec in by_spec:
                    repeated += 1
                    continue
                entry: dict[str, Any] = {"set_spec": s.spec, "name": s.name or s.spec,
                                         "metadata_prefix": prefix_for(s.spec)}
                group = set_group(s.spec)
                if group:
                    entry["group"] = group
                if SET_NAME_TYPOS.get(s.spec) == s.name:
                    entry["note"] = "the upstream setName has a typo; use set_spec"
                by_spec[s.spec] = entry
                items.append(entry)
            token = resp.resumption_token
            if token is None or token.value is None:
                break
            if token.value in tokens or token.value == params.get("resumptionToken"):
                env.diagnose(Level.warning, Code.UPSTREAM_DIAGNOSTIC,
                             f"Helveticat's ListSets resumptionToken repeated after {pages} "
                             "pages (it points back to a page already read): listing stopped "
                             "there. Sets after it, if any, are not listed.")
                break
            tokens.add(token.value)
            if pages >= OAI_LIST_SETS_MAX_PAGES:
                env.diagnose(Level.warning, Code.RESULT_WINDOW_CAPPED,
                             f"Only the first {pages} pages of sets were read.")
                break
            params = {"verb": "ListSets", "resumptionToken": token.value}
        if repeated:
            env.diagnose(Level.warning, Code.UPSTREAM_DIAGNOSTIC,
                         f"Helveticat listed {repeated} sets more than once; each is shown once.")
        if unnamed:
            env.diagnose(Level.warning, Code.RECORD_UNREADABLE,
                         f"{unnamed} sets without a setSpec were left out.")
        if not items:
            # A repository without sets answers noSetHierarchy; a ListSets with none in it is
            # a damaged answer, not an empty catalogue.
            no_sets = CoreError(
                Code.API_ERROR,
                "Helveticat answered ListSets with no usable set. This is not an empty list of "
                "collections.",
                details={"reason": "list_without_sets", "unnamed": unnamed},
                remediation="Try again later; the result is unknown.",
            )
            return await self._oai_failed(env, no_sets, "verb=ListSets", params)
        env.items = items
        env.result = ResultInfo(total=len(items), returned=len(items), start=1,
                                has_more=False, breadth=breadth_of(len(items)),
                                match_type="exact")
        env.data = {"path": "oai", "order": "repository", "order_note": OAI_ORDER_NOTE,
                    "note": "metadata_prefix is the only format each set is published in; "
                    "set_spec goes to heritage_search_helveticat."}
        responses.credit(env, [HELVETICAT], SourceStatus.ok)
        await self._deposit(env, "verb=ListSets", {"verb": "ListSets"}, self.client.oai_url,
                            outcome="ok")
        return env

    # ------------------------------------------------------------------ helpers
    def _refused(self, operation: str, err: CoreError, query_input: dict[str, Any]) -> Envelope:
        return responses.refused(
            self.server, operation, err, sources=[HELVETICAT],
            query=QueryInfo(input=query_input),
        )

    async def _deposit(
        self, env: Envelope, query: str, params: Mapping[str, str], endpoint: str, *,
        outcome: str,
    ) -> None:
        await receipt.deposit(
            env, query=query, params=params, providers=[HELVETICAT_ID], endpoint=endpoint,
            outcome=outcome, result_ids=[str(i["id"]) for i in env.items if i.get("id")],
            clock=self.clock, environ=self._env,
        )

