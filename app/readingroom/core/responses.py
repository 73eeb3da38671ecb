"""Builders every server uses for the parts of an envelope that are the same everywhere.

Credit on every response, a refusal before anything was sent, a failure after something was
sent (keeping what was asked, its diagnostics and the source's status), and the map from an
error code to what it says about the upstream. A server's provider table is data: a tuple of
:class:`Source`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .envelope import Envelope, QueryInfo, SourceInfo, SourceStatus
from .errors import Code, CoreError

__all__ = [
    "STATUS_BY_CODE",
    "Source",
    "credit",
    "failed_after_send",
    "refused",
    "status_for",
]


@dataclass(frozen=True)
class Source:
    """One upstream (or one provider within an upstream) and the credit its licence asks for."""

    id: str
    name: str
    licence: str
    url: str
    credit: str

    def info(self, status: SourceStatus) -> SourceInfo:
        """The envelope's ``sources`` entry for this source in this call."""
        return SourceInfo(id=self.id, name=self.name, licence=self.licence, url=self.url,
                          status=status, credit=self.credit)


STATUS_BY_CODE: Mapping[Code, SourceStatus] = {
    Code.RATE_LIMITED: SourceStatus.rate_limited,
    Code.INVALID_ARGUMENT: SourceStatus.skipped,
    Code.INVALID_INPUT: SourceStatus.skipped,
    Code.RESERVED_WORD_IN_QUERY: SourceStatus.skipped,
    Code.PROVIDER_NOT_PERMITTED: SourceStatus.skipped,
    Code.NOT_CONFIGURED: SourceStatus.not_configured,
}
"""What an error says about the source; every code not listed means ``error`` there."""


def status_for(code: Code) -> SourceStatus:
    """The source status an error code implies (``error`` unless :data:`STATUS_BY_CODE` says)."""
    return STATUS_BY_CODE.get(code, SourceStatus.error)


def credit(env: Envelope, sources: Iterable[Source], status: SourceStatus) -> Envelope:
    """Name ``sources`` with ``status`` and their credit lines on ``env`` (returned)."""
    chosen = list(sources)
    env.sources = [s.info(status) for s in chosen]
    env.attribution = list(dict.fromkeys(s.credit for s in chosen))
    return env


def refused(
    server: str,
    operation: str,
    err: CoreError,
    *,
    sources: Sequence[Source],
    query: QueryInfo | None = None,
    capabilities: Sequence[str] = (),
) -> Envelope:
    """The failure envelope of a call refused before anything was sent (sources ``skipped``)."""
    env = Envelope.failure(server, operation, err, query=query,
                           capabilities=list(capabilities) or None)
    return credit(env, sources, SourceStatus.skipped)


def failed_after_send(
    env: Envelope,
    err: CoreError,
    *,
    sources: Sequence[Source],
    query: QueryInfo | None = None,
) -> Envelope:
    """The failure of a call whose request went out: what was searched for and asked, the
    diagnostics so far, and each source's status as the error code implies.

    The receipt is deposited by the caller afterwards (a failed search is still a search).
    """
    failed = Envelope.failure(
        env.server, env.operation, err,
        searched_for=env.searched_for,
        query=query if query is not None else env.query,
        diagnostics=list(env.diagnostics),
        coverage_note=env.coverage_note,
    )
    return credit(failed, sources, status_for(err.code))
