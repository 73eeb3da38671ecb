"""The interface every literature provider module implements.

A provider module exports ``PROVIDER``, an object satisfying :class:`Provider`. It owns its
upstream's request building, its pacing (rate rules are properties of its
:class:`~readingroom.core.http.HttpClient`, never lowered by configuration) and a pure
``parse(payload) -> list[LiteratureRecord]`` tested on the real samples. The service fans the
chosen providers out under one deadline (:func:`readingroom.core.fanout.fan_out`) and never
sees an upstream format.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from ...core.http import HttpClient
from ...core.responses import Source
from ..models import LiteratureRecord, SearchRequest

__all__ = ["Provider", "ProviderInfo", "ProviderSettings"]


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


@dataclass(frozen=True)
class ProviderSettings:
    """What a provider's client is built from: its base URL and the optional values set.

    Values of secrets are carried here only in memory; they are never logged, never put in
    an envelope, a receipt or the history.
    """

    base_url: str
    values: Mapping[str, str]


class Provider(Protocol):
    """A literature provider as the service uses it."""

    info: ProviderInfo

    def client(self, settings: ProviderSettings, *, transport: object | None = None,
               clock: object | None = None) -> HttpClient:
        """The provider's paced HTTP client (one per process; rate rules built in)."""
        ...

    async def search(self, http: HttpClient, settings: ProviderSettings,
                     request: SearchRequest) -> list[LiteratureRecord]:
        """Ask the upstream and return its records in rank order (``[]`` for a real zero).

        Raises:
            readingroom.core.errors.CoreError: RATE_LIMITED, TRANSPORT_ERROR, API_ERROR… —
                the service turns each into that provider's status.
        """
        ...
