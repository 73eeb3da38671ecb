"""What the seven provider modules share: retry rules, query forms, bounded reading, the page rule.

HTTP behaviour (the seed's, inside the search budgets of :mod:`..budget`): 30 s per attempt, up
to three retries after the first attempt for 408, 429, 5xx and failed exchanges, ``Retry-After``
in seconds or as an HTTP-date, exponential backoff otherwise (:data:`MAX_RETRIES`,
:data:`RETRY_STATUSES`, :func:`backoff`). The retries themselves are run by
:class:`readingroom.literature.host_clients.ProviderHttp`, which knows the budget.

Reading is bounded by what was asked: :func:`load_json` and :func:`check_xml` refuse a body that
holds far more containers or elements than a page of the requested records could
(:data:`CONTAINERS_PER_RECORD`), before any object is built, and every parser reads at most the
records asked for. :func:`checked_page` is the rule every parser ends with: a page is ``empty``
only when the upstream *said* zero.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from ... import __version__
from ...core import bounds
from ...core.bounds import PerRecord
from ...core.errors import Code, CoreError
from ...core.http import UpstreamBodyError
from ..models import LiteratureRecord
from .base import Pacing, Page, ProviderSettings

__all__ = [
    "ACCEPT_JSON",
    "BACKOFF_FACTOR",
    "BASE_CONTAINERS",
    "CONTAINERS_PER_RECORD",
    "DEFAULT_BACKOFF",
    "MAX_BACKOFF",
    "MAX_RETRIES",
    "PAGE_MARKUP",
    "RETRY_STATUSES",
    "TIMEOUT",
    "USER_AGENT",
    "FixedPace",
    "as_dict",
    "as_list",
    "as_str",
    "as_year",
    "backoff",
    "check_xml",
    "checked_page",
    "count_value",
    "keywords",
    "list_field",
    "load_json",
    "setting",
    "unreadable",
]

TIMEOUT = 30.0
"""Seconds per attempt (connect, read, write and pool each); a provider's budget may cut it."""
MAX_RETRIES = 3
"""Retries after the first attempt (while they fit the provider's budget)."""
RETRY_STATUSES: frozenset[int] = frozenset({408, 429, 500, 502, 503, 504})
DEFAULT_BACKOFF = 2.0
"""Seconds to wait before the first retry the upstream gave no ``Retry-After`` for."""
BACKOFF_FACTOR = 2.0
"""Each further retry without ``Retry-After`` waits twice as long (2 s, 4 s, 8 s; capped)."""
MAX_BACKOFF = 30.0
"""The longest backoff of our own choosing (a ``Retry-After`` is never shortened: a wait that
does not fit the budget is not waited at all)."""
USER_AGENT = f"literature-search-mcp/{__version__} (readingroom)"
ACCEPT_JSON: Mapping[str, str] = {"Accept": "application/json"}

BASE_CONTAINERS = 20_000
CONTAINERS_PER_RECORD = 10_000
"""A page of N records may hold at most ``BASE_CONTAINERS + N × CONTAINERS_PER_RECORD`` JSON
containers (objects and arrays) or XML elements: a record with thousands of authors fits, a
body of millions of tiny containers (hundreds of MB once parsed) does not."""
PAGE_MARKUP = PerRecord(BASE_CONTAINERS, CONTAINERS_PER_RECORD)
"""That limit, as :mod:`readingroom.core.bounds` applies it."""

_PUBMED_TAG = re.compile(r"\[[^\]]*\]")
_FIELD_PREFIX = re.compile(r"(?<![\w/.])[A-Za-z_][A-Za-z_.]*:(?!//)")
_SYNTAX = re.compile(r"[*?\"()\[\]{}^~\\|&!+<>=]")
_OPERATORS = frozenset({"AND", "OR", "NOT", "ANDNOT"})

T = TypeVar("T")


def backoff(retry: int) -> float:
    """Seconds before retry number ``retry`` (1-based) when the upstream said nothing."""
    return min(DEFAULT_BACKOFF * BACKOFF_FACTOR ** (retry - 1), MAX_BACKOFF)


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
    and Boolean operators are removed; the words stay in order. Negated terms must be taken out
    first (:func:`readingroom.literature.query.split_negations`): here they would become words.

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


def unreadable(provider: str, what: str, detail: str = "") -> CoreError:
    """The error for a 2xx body that is not the provider's documented shape (API_ERROR)."""
    return CoreError(
        Code.API_ERROR,
        f"The {provider} answer was not the expected {what}{': ' + detail if detail else ''}.",
        details={"provider": provider},
        remediation="The upstream may be under maintenance or have changed its format; try "
        "again later. The result is unknown, not empty.",
    )


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (for optional fields only)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` when it is a JSON array, else an empty one (for optional fields only)."""
    return value if isinstance(value, list) else []


def list_field(container: Mapping[str, Any], name: str, provider: str,
               what: str) -> list[Any] | None:
    """``container[name]`` when it is a list; None when absent.

    Raises:
        CoreError: API_ERROR when it is present but not a list (``null`` included): a
            container of the wrong type is a malformed answer, never an empty one.
    """
    if name not in container:
        return None
    value = container[name]
    if not isinstance(value, list):
        kind = "null" if value is None else type(value).__name__
        raise unreadable(provider, what, f"its `{name}` is {kind}, not a list")
    return value


def count_value(value: Any) -> int | None:
    """A count the upstream reported: a non-negative int, or digits; None when unreadable."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


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


def checked_page(
    provider: str,
    records: Sequence[LiteratureRecord],
    *,
    total: int | None,
    unreadable_count: int = 0,
    offset: int = 0,
    said: str = "records match",
) -> Page:
    """The page, or API_ERROR when the answer did not deliver what it claimed.

    A page may be empty only when the upstream said so: a readable count of zero, or a count
    no larger than ``offset`` (a page past the end). No records with ``unreadable_count``
    above zero, with no readable count, or with a count above ``offset`` is an error.
    """
    if not records:
        if unreadable_count:
            raise unreadable(provider, "page of records",
                             f"it held {unreadable_count} and none could be read")
        if total is None:
            raise unreadable(provider, "answer",
                             "it held no record and no readable count; the result is unknown")
        if total > offset:
            raise CoreError(
                Code.API_ERROR,
                f"{provider} said {total} {said} but delivered none.",
                details={"provider": provider, "total": total, "offset": offset},
                remediation="The upstream did not deliver its records; try again later. The "
                "result is unknown, not empty.",
            )
    return Page(tuple(records), total=total, unreadable=unreadable_count)


def load_json(body: bytes, *, asked: int, provider: str) -> Any:
    """The body as JSON, refused before decoding when it holds far more than ``asked`` records.

    Raises:
        UpstreamBodyError: API_ERROR: too many containers for the page asked, not UTF-8, not
            JSON, or nested too deeply.
    """
    cap = PAGE_MARKUP.limit(asked)

    def too_many(containers: int) -> UpstreamBodyError:
        return UpstreamBodyError(
            f"The {provider} answer holds {containers} JSON containers, more than a page of "
            f"{asked} records could ({cap}); it was not read.",
            details={"provider": provider, "reason": "too_many_containers",
                     "containers": containers, "cap": cap},
        )

    def unreadable(reason: str) -> UpstreamBodyError:
        return UpstreamBodyError(f"The {provider} answer was {reason}.",
                                 details={"provider": provider, "reason": reason})

    return bounds.load_json(body, limit=cap, too_many=too_many, unreadable=unreadable)


def check_xml(body: bytes, *, asked: int, provider: str) -> None:
    """Refuse an XML body with far more elements than a page of ``asked`` records could hold.

    Raises:
        UpstreamBodyError: API_ERROR, before anything is parsed.
    """
    cap = PAGE_MARKUP.limit(asked)
    bounds.check_xml(body, limit=cap, too_many=lambda elements: UpstreamBodyError(
        f"The {provider} answer holds {elements} XML tags, more than a page of {asked} "
        f"records could ({cap}); it was not read.",
        details={"provider": provider, "reason": "too_many_elements",
                 "elements": elements, "cap": cap},
    ))


class FixedPace:
    """``pacing()`` and ``headers()`` of a provider whose pace does not depend on its settings.

    A provider class sets :attr:`min_interval` and :attr:`serial` (and overrides
    :meth:`headers` when a setting goes into a request header); Crossref and PubMed, whose
    pace depends on their settings, write their own ``pacing()``.
    """

    min_interval: float
    """Seconds kept between requests (see :class:`.base.Pacing`)."""
    serial: bool = False
    """One request at a time, the interval counted from the end of the previous exchange."""
    concurrency: int = 3
    """Requests in flight at once at the host when not serial."""

    def pacing(self, settings: ProviderSettings) -> Pacing:
        """The provider's fixed pace."""
        return Pacing(self.min_interval, self.serial, self.concurrency)

    def headers(self, settings: ProviderSettings) -> Mapping[str, str] | None:
        """Request headers from the provider's settings (none by default)."""
        return None
