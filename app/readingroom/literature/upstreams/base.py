"""The interface every literature provider module implements, and what a provider answers.

A provider module exports ``PROVIDER``, an object satisfying :class:`Provider`. It owns its
upstream's request building, its courtesy pace (:meth:`Provider.pacing`: constants of the
module, never lowered by configuration) and a pure ``parse(payload) -> Page`` tested on the
real samples. The service gives every host one paced client shared by all the providers that
reach it (:mod:`readingroom.literature.host_clients`), fans the chosen providers out under their
budgets and never sees an upstream format.

A :class:`Page` is one provider's answer to one request: its records in rank order, the count
the upstream reported, and how many records it held that could not be read. ``parse`` never
returns an empty page for an answer that did not say "zero": a container of the wrong type, a
count above zero with nothing delivered, or a page whose every record is unreadable raises
``API_ERROR`` instead (:func:`.common.checked_page`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

import httpx

from ...core.responses import Source
from ..models import LiteratureRecord, Note, SearchRequest

__all__ = [
    "Fetcher",
    "Pacing",
    "Page",
    "Provider",
    "ProviderInfo",
    "ProviderSettings",
]


@dataclass(frozen=True)
class ProviderInfo:
    """What ``literature_sources`` says about a provider, and how the envelope credits it."""

    id: str
    """One of :data:`readingroom.literature.models.PROVIDER_ORDER`."""
    source: Source
    """Name, licence of its metadata, URL and the credit line."""
    url_setting: str
    """The environment variable that overrides its base URL (``PUBMED_EUTILS_URL`` …)."""
    default_url: str
    limitations: tuple[str, ...] = ()
    """Plain sentences for the model: what this provider cannot do (no keyword search, no
    abstracts, only the first 10,000 hits …)."""
    optional_settings: tuple[str, ...] = ()
    """Optional variables it reads (``NCBI_API_KEY`` …): secrets from env, then keyring."""
    native_syntax: bool = False
    """True when rich query syntax passes through unchanged; False: a sanitised keyword form."""
    upstream: str | None = None
    """The provider id of the index this provider really queries, when it is another's (the
    ``biorxiv`` provider searches Europe PMC's preprint index: ``"europepmc"``); None when it
    is its own. Fusion counts one vote per upstream for a merged record."""
    exclusion: str = ""
    """How a negated term (``NOT term``, ``-term``) reaches it, for ``literature_sources``."""


@dataclass(frozen=True)
class ProviderSettings:
    """What a provider's requests are built from: its base URL and the optional values set.

    Values of secrets are carried here only in memory; they are never logged, never put in
    an envelope, a receipt or the history.
    """

    base_url: str
    values: Mapping[str, str]


@dataclass(frozen=True)
class Pacing:
    """A provider's courtesy rules at its host (the host keeps the strictest of its providers).

    Attributes:
        min_interval: seconds between requests: from the end of one exchange to the next start
            when ``serial``, between request starts otherwise.
        serial: one request at a time at the host.
        concurrency: requests in flight at once at the host when not serial.
    """

    min_interval: float
    serial: bool
    concurrency: int = 3

    @property
    def in_flight(self) -> int:
        """Requests in flight at once: 1 when serial, else :attr:`concurrency`."""
        return 1 if self.serial else self.concurrency

    def merged(self, other: Pacing) -> Pacing:
        """The stricter of two paces, for a host that two providers reach."""
        return Pacing(max(self.min_interval, other.min_interval), self.serial or other.serial,
                      min(self.concurrency, other.concurrency))


@dataclass(frozen=True)
class Page:
    """One provider's answer to one request.

    Attributes:
        records: its readable records in rank order (``rank`` is the rank at the provider,
            counted from its first record, not from this page).
        total: how many records the upstream says match (None: it did not say).
        unreadable: records on the page that could not be read (counted, not shown).
        notes: remarks for the envelope's diagnostics.
    """

    records: tuple[LiteratureRecord, ...]
    total: int | None = None
    unreadable: int = 0
    notes: tuple[Note, ...] = ()

    def with_notes(self, *notes: Note) -> Page:
        """This page with ``notes`` added."""
        return replace(self, notes=(*self.notes, *notes))

    def after(self, offset: int) -> Page:
        """The records past the first ``offset`` ranks, ranked from ``offset + 1`` on."""
        kept = [r for r in self.records if r.rank > offset]
        return replace(self, records=tuple(kept))

    def ranked_from(self, offset: int) -> Page:
        """The records re-ranked as ranks ``offset + 1`` … (a page fetched at an offset)."""
        return replace(self, records=tuple(replace(r, rank=offset + i)
                                           for i, r in enumerate(self.records, start=1)))


class Fetcher(Protocol):
    """What a provider sends its requests through (paced, budgeted, retried)."""

    async def get(self, url: str, params: Mapping[str, str] | None = None, *,
                  headers: Mapping[str, Any] | None = None) -> httpx.Response:
        """GET ``url``; the 2xx response, or a typed ``CoreError``."""
        ...


class Provider(Protocol):
    """A literature provider as the service uses it."""

    info: ProviderInfo

    def pacing(self, settings: ProviderSettings) -> Pacing:
        """Its courtesy rules (constants of the module; the settings choose among them)."""
        ...

    def headers(self, settings: ProviderSettings) -> Mapping[str, str] | None:
        """Headers every request of this provider carries (an API key), or None."""
        ...

    async def search(self, http: Fetcher, settings: ProviderSettings, request: SearchRequest,
                     *, offset: int = 0) -> Page:
        """Ask the upstream for ``request.limit`` records after ``offset`` of them.

        Raises:
            readingroom.core.errors.CoreError: RATE_LIMITED, TRANSPORT_ERROR, API_ERROR… —
                the service turns each into that provider's status.
        """
        ...
