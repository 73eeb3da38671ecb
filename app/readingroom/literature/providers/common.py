"""What the seven provider modules share: retry rules, the client factory, query forms.

The HTTP behaviour the seed asks of every provider (30 s per attempt, three retries after the
first attempt for 408, 429 and 5xx, ``Retry-After`` in seconds or as an HTTP-date) is
:data:`RETRY_STATUSES` and :data:`MAX_RETRIES` handed to each client's
:class:`~readingroom.core.http.Politeness`; each provider adds its own pacing floor. The floors
are constants in the provider modules and nothing read from the environment can lower them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import httpx

from ... import __version__
from ...core.clock import Clock
from ...core.errors import Code, CoreError
from ...core.http import HttpClient, Politeness

__all__ = [
    "BACKOFF_FACTOR",
    "DEFAULT_BACKOFF",
    "MAX_BACKOFF",
    "MAX_RETRIES",
    "RETRY_STATUSES",
    "TIMEOUT",
    "USER_AGENT",
    "FixedPacing",
    "as_dict",
    "as_list",
    "as_str",
    "as_year",
    "build_client",
    "keywords",
    "politeness",
    "setting",
    "unreadable",
]

TIMEOUT = 30.0
"""Seconds per attempt (connect, read, write and pool each)."""
MAX_RETRIES = 3
"""Retries after the first attempt."""
RETRY_STATUSES: frozenset[int] = frozenset({408, 429, 500, 502, 503, 504})
DEFAULT_BACKOFF = 2.0
"""Seconds to wait before the first retry the upstream gave no ``Retry-After`` for."""
BACKOFF_FACTOR = 2.0
"""Each further retry without ``Retry-After`` waits twice as long (2 s, 4 s, 8 s; capped)."""
MAX_BACKOFF = 30.0
"""However long ``Retry-After`` asks for, a retry waits at most this long."""
USER_AGENT = f"literature-search-mcp/{__version__} (readingroom)"

_PUBMED_TAG = re.compile(r"\[[^\]]*\]")
_FIELD_PREFIX = re.compile(r"(?<![\w/.])[A-Za-z_][A-Za-z_.]*:(?!//)")
_SYNTAX = re.compile(r"[*?\"()\[\]{}^~\\|&!+<>=]")
_OPERATORS = frozenset({"AND", "OR", "NOT", "ANDNOT"})


def politeness(min_interval: float, *, serial: bool) -> Politeness:
    """The pacing floor of one provider with the seed's retry rules."""
    return Politeness(
        min_interval=min_interval,
        serial=serial,
        max_retries=MAX_RETRIES,
        default_backoff=DEFAULT_BACKOFF,
        max_backoff=MAX_BACKOFF,
        retry_statuses=RETRY_STATUSES,
        retry_bare_statuses=True,
        retry_transport_errors=True,
        backoff_factor=BACKOFF_FACTOR,
    )


def build_client(
    rules: Politeness,
    *,
    transport: object | None = None,
    clock: object | None = None,
    headers: Mapping[str, str] | None = None,
) -> HttpClient:
    """An :class:`HttpClient` with the provider's rules, the suite's user agent and timeout.

    Raises:
        TypeError: ``transport`` is not an httpx async transport.
    """
    if transport is not None and not isinstance(transport, httpx.AsyncBaseTransport):
        raise TypeError("transport must be an httpx.AsyncBaseTransport")
    chosen_clock: Clock | None = clock  # type: ignore[assignment]
    return HttpClient(
        politeness=rules,
        timeout=TIMEOUT,
        user_agent=USER_AGENT,
        transport=transport,
        clock=chosen_clock,
        headers=headers,
    )


def setting(values: Mapping[str, str], name: str) -> str | None:
    """An optional setting's value, trimmed; None when unset or blank."""
    value = values.get(name)
    if value is None:
        return None
    value = value.strip()
    return value or None


def keywords(query: str, *, hyphens: bool = True) -> str:
    """The sanitised keyword form of ``query`` for providers without a query language.

    Field tags (``[tiab]``), field prefixes (``TITLE:``, ``ti:``), wildcards, quotes, brackets
    and Boolean operators are removed; the words stay in order.

    Args:
        query: the user's query, possibly in PubMed, Europe PMC or arXiv syntax.
        hyphens: keep hyphens; False turns them into spaces (Semantic Scholar matches nothing
            for some hyphenated terms).

    Raises:
        CoreError: INVALID_INPUT when no word is left (the provider is skipped, not asked).
    """
    text = _PUBMED_TAG.sub(" ", query)
    text = _FIELD_PREFIX.sub(" ", text)
    text = _SYNTAX.sub(" ", text)
    if not hyphens:
        text = text.replace("-", " ")
    words = [w.strip(":'") for w in text.split()]
    words = [w for w in words if w and w not in _OPERATORS and w.strip("-")]
    if not words:
        raise CoreError(
            Code.INVALID_INPUT,
            "The query has no plain words this provider can search for.",
            remediation="Add plain keywords next to the fielded terms.",
        )
    return " ".join(words)


def unreadable(provider: str, what: str) -> CoreError:
    """The error for a 2xx body that is not the provider's documented shape (API_ERROR)."""
    return CoreError(
        Code.API_ERROR,
        f"The {provider} answer was not the expected {what}.",
        details={"provider": provider},
        remediation="The upstream may be under maintenance or have changed its format; try "
        "again later. The result is unknown, not empty.",
    )


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (defensive field access)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` when it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def as_str(value: Any) -> str | None:
    """``value`` trimmed when it is a non-blank string (or a number), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return value.strip() or None
    return None


def as_year(value: Any) -> int | None:
    """A plausible publication year from an int or the first four digits of a string."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        year = value
    elif isinstance(value, str):
        match = re.search(r"(?<!\d)(\d{4})(?!\d)", value)
        if not match:
            return None
        year = int(match.group(1))
    else:
        return None
    return year if 1000 <= year <= 2999 else None


class FixedPacing:
    """The ``client()`` of a provider whose pacing does not depend on its settings.

    A provider class sets :attr:`min_interval` and :attr:`serial` (and overrides
    :meth:`headers` when a setting goes into a request header); Crossref and PubMed, whose
    pacing depends on their settings, write their own ``client()``.
    """

    min_interval: float
    """Seconds kept between requests (see :class:`~readingroom.core.http.Politeness`)."""
    serial: bool = False
    """One request at a time, the interval counted from the end of the previous exchange."""

    def headers(self, values: Mapping[str, str]) -> Mapping[str, str] | None:
        """Request headers from the provider's settings (none by default)."""
        return None

    def client(self, settings: Any, *, transport: object | None = None,
               clock: object | None = None) -> HttpClient:
        """The provider's paced client: :func:`politeness` of its fixed floor."""
        return build_client(politeness(self.min_interval, serial=self.serial),
                            transport=transport, clock=clock,
                            headers=self.headers(settings.values))
