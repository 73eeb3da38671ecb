"""The upstreams of swiss-cultural-heritage-mcp as data: one :class:`~core.responses.Source`
each, with the licence the source states at its level.

A record's own licence, where it carries one, is on the record (``licence`` of each item):
SIKART rows say ``CC-BY-NC-SA`` in ``NUTZUNGSLIZENZ``, SNM resources name the opendata.swiss
terms they are under, Memobase objects carry a rightsstatements.org or Creative Commons usage
rule. The source line here says where those per-record licences come from; it is never a
blanket claim over records that say otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..core.responses import Source
from . import URL_SETTINGS

__all__ = [
    "DODIS",
    "ENV_CKAN",
    "ENV_DODIS",
    "ENV_HELVETICAT_OAI",
    "ENV_HELVETICAT_SRU",
    "ENV_MEMOBASE",
    "HELVETICAT",
    "HELVETICAT_ID",
    "MEMOBASE",
    "NB",
    "SIKART",
    "SIKART_RESOURCE_ID",
    "SNM",
    "SNM_ORGANIZATION",
    "SOURCES",
    "Endpoints",
]

ENV_CKAN = "CKAN_API_URL"
ENV_HELVETICAT_SRU = "HELVETICAT_SRU_URL"
ENV_HELVETICAT_OAI = "HELVETICAT_OAI_URL"
ENV_MEMOBASE = "MEMOBASE_API_URL"
ENV_DODIS = "DODIS_API_URL"

SIKART_RESOURCE_ID = "ef3a9fd2-2fb3-49ee-bfba-75d58e40b2ea"
"""The CKAN DataStore resource of the SIKART artist list on opendata.swiss (about 17,000 rows)."""
SNM_ORGANIZATION = "schweizerisches-nationalmuseum-snm"
"""The SNM's organisation slug on opendata.swiss. Without ``-snm`` CKAN answers 0 datasets and no
error (the original's bug until 2026-08-15)."""

HELVETICAT_ID = "helveticat"

HELVETICAT = Source(
    id=HELVETICAT_ID,
    name="Swiss National Library (NB) - Helveticat",
    # The NB's own terms of use were not checked (research §4.11); the records carry their
    # own rights where they have any (MARC 506/540, dc:rights), and those travel on the item.
    licence="Metadata open, per record (NB terms of use not verified)",
    url="https://helveticat.nb.admin.ch",
    credit="Swiss National Library (NB), Helveticat catalogue",
)
SIKART = Source(
    id="sik_isea",
    name="SIKART Lexikon (SIK-ISEA) via opendata.swiss",
    licence="CC BY-NC-SA (each row's NUTZUNGSLIZENZ)",
    url="https://opendata.swiss/de/dataset/sikart-kunstlerinnen-und-kunstler",
    credit="SIKART Lexikon, Schweizerisches Institut für Kunstwissenschaft (SIK-ISEA), "
    "CC BY-NC-SA",
)
SNM = Source(
    id="snm",
    name="Schweizerisches Nationalmuseum (SNM) via opendata.swiss",
    licence="opendata.swiss terms of use, per resource (recorded: terms_by, source must be "
    "named)",
    url="https://opendata.swiss/de/organization/schweizerisches-nationalmuseum-snm",
    credit="Schweizerisches Nationalmuseum, via opendata.swiss",
)
NB = HELVETICAT
"""Helveticat's own source entry (id ``helveticat``; cross-search's ``nb``)."""
MEMOBASE = Source(
    id="memobase",
    name="Memobase (Memoriav)",
    licence="metadata open (Linked Open Data); digital objects per rights holder (each "
    "object's usage rule)",
    url="https://memobase.ch/",
    credit="Memobase, Memoriav",
)
DODIS = Source(
    id="dodis",
    name="Dodis (Diplomatic Documents of Switzerland)",
    licence="metadata open, citation required; documents per document",
    url="https://dodis.ch/",
    credit="Diplomatic Documents of Switzerland (Dodis), cite as dodis.ch/<id>",
)

SOURCES: Mapping[str, Source] = {s.id: s for s in (SIKART, SNM, NB, MEMOBASE, DODIS)}
"""Every source by id, in the order the docs list them."""

_DEFAULTS = {name: default for name, _what, default in URL_SETTINGS}


@dataclass(frozen=True)
class Endpoints:
    """The base URLs in use (defaults, or the environment's overrides)."""

    ckan: str
    helveticat_sru: str
    helveticat_oai: str
    memobase: str
    dodis: str

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Endpoints:
        """Each variable's value when set and not empty, else its default."""

        def pick(name: str) -> str:
            return (env.get(name) or _DEFAULTS[name]).rstrip("/")

        return cls(
            ckan=pick(ENV_CKAN),
            helveticat_sru=pick(ENV_HELVETICAT_SRU),
            helveticat_oai=pick(ENV_HELVETICAT_OAI),
            memobase=pick(ENV_MEMOBASE),
            dodis=pick(ENV_DODIS),
        )

    def all(self) -> tuple[str, ...]:
        """Every base URL, for the egress allow-list."""
        return (self.ckan, self.helveticat_sru, self.helveticat_oai, self.memobase, self.dodis)
