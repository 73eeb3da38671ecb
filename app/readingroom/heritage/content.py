"""The two resources and two prompts, brought up to date with what the tools do now.

The original's ``heritage://nb/collections`` still said "Dublin Core (oai_dc)" and "no
full-text search" after 0.6.0; this text describes the two Helveticat paths as they are.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..core.mcpkit import PromptSpec, ResourceSpec
from .sources import SIKART, SIKART_RESOURCE_ID

__all__ = ["PROMPTS", "RESOURCES", "nb_collections", "research_artist", "sikart_overview",
           "teaching_resources"]


def sikart_overview() -> str:
    """``heritage://sik-isea/overview``."""
    return (
        "# SIKART artists (SIK-ISEA) on opendata.swiss\n\n"
        "The SIKART Lexikon's list of about 17,000 artists connected with Switzerland, published "
        "by the Swiss Institute for Art Research (SIK-ISEA) as a CKAN DataStore resource "
        f"(`{SIKART_RESOURCE_ID}`) on opendata.swiss.\n\n"
        "- Search: `heritage_search_artists` (CKAN full-text `q`; terms are AND-ed; after zero "
        "hits one retry with the longest word, marked `match_type: fuzzy`).\n"
        "- Detail: `heritage_get_artist` with the HAUPTNR (SIKART id).\n"
        "- Fields: HAUPTNR, NAME, VORNAME, LEBENSDATEN, GEBURTSORT/-KANTON, STERBEORT, "
        "VITAZEILE, GND, HLS_ID, SIKART_LINK, NUTZUNGSLIZENZ.\n"
        f"- Licence: every row states its own in NUTZUNGSLIZENZ; the recorded rows say "
        f"CC-BY-NC-SA (attribution, non-commercial, share-alike), not CC BY. Source: "
        f"{SIKART.url}\n"
        "- The dataset has no period or technique fields; filter by words or by region "
        "(birth/death place or canton) instead.\n"
    )


def nb_collections() -> str:
    """``heritage://nb/collections``."""
    return (
        "# Swiss National Library (Helveticat): two paths\n\n"
        "- **Search** (`heritage_search_helveticat` with `query`, no `set_spec`): SRU "
        "full-text search over the whole catalogue, with a total and a cursor to continue; "
        "zero hits → one loosened retry (`all` words instead of the phrase), `match_type: "
        "fuzzy`. At most 50 records a page.\n"
        "- **Collections** (`set_spec` from `heritage_list_nb_collections`, optionally with "
        "`from_date`/`until_date`): OAI-PMH `ListRecords` of one set, paged by a cursor "
        "(resumption token). A `query` then filters only the fetched page. Dates are "
        "**catalogue change dates**, not publication years, and only valid with `set_spec`.\n"
        "- Metadata format per set: MARC21 for all sets but `RFN` (oai_dc) and `RFN2` "
        "(oai_qdc); single records (`heritage_get_publication`) always in MARC21, by the "
        "OAI identifier `oai:helveticat.nb.admin.ch:<MMS id>` that both paths return.\n"
        "- 68 sets: `xwas-*` (web archive by canton and special holdings), `xediss-*` "
        "(e-dissertations), `helveticat`, `swissbook`, `xrara`, `maps`, `xdigicoll` and more.\n"
        "- Licence: metadata open, per record; the NB's own terms of use were not verified.\n"
    )


def research_artist(args: Mapping[str, str]) -> str:
    """The ``heritage_research_artist`` prompt."""
    name = args.get("artist_name", "")
    context = args.get("context") or "a general overview"
    return (
        f"Research the artist {name} for {context}.\n"
        f"1. heritage_search_artists with query \"{name}\" (response_format json); pick the "
        "right person by life dates.\n"
        "2. heritage_get_artist with that HAUPTNR for the full entry and its licence.\n"
        f"3. heritage_cross_search with query \"{name}\" for museum datasets and National "
        "Library publications.\n"
        "4. heritage_get_publication for the most relevant publications.\n"
        "Cite each fact with its source tag ([SIK-ISEA], [SNM], [NB]) and respect each "
        "record's licence (SIKART: CC BY-NC-SA)."
    )


def teaching_resources(args: Mapping[str, str]) -> str:
    """The ``heritage_find_educational_resources`` prompt."""
    topic = args.get("topic", "")
    level = args.get("school_level") or "Sekundarstufe I"
    return (
        f"Find Swiss heritage material on \"{topic}\" for teaching at {level} (Lehrplan 21).\n"
        f"1. heritage_cross_search with query \"{topic}\".\n"
        f"2. heritage_search_memory with query \"{topic}\" for photographs, film and sound "
        "(Memobase) and documents (Dodis).\n"
        f"3. heritage_search_helveticat with query \"{topic}\" for books.\n"
        "Suggest how each item fits the level, and state each item's licence: classroom use "
        "of Memobase objects depends on the object's usage rule (e.g. InC-EDU)."
    )


RESOURCES = (
    ResourceSpec("heritage://sik-isea/overview", "sik-isea-overview",
                 "SIKART artists on opendata.swiss",
                 "What the SIKART artist data holds, how to search it, and its licence.",
                 sikart_overview),
    ResourceSpec("heritage://nb/collections", "nb-collections",
                 "Swiss National Library: search and collections",
                 "Helveticat's two paths (SRU search, OAI-PMH collections), dates, formats.",
                 nb_collections),
)

PROMPTS = (
    PromptSpec("heritage_research_artist", "Research a Swiss artist",
               "Chain artist search, artist detail, cross-search and publications.",
               (("artist_name", "The artist's name", True),
                ("context", "What the research is for", False)),
               research_artist),
    PromptSpec("heritage_find_educational_resources", "Find heritage material for teaching",
               "Search the heritage sources for material on a topic for a school level.",
               (("topic", "The topic", True),
                ("school_level", "e.g. Primarstufe, Sekundarstufe I, Sekundarstufe II",
                 False)),
               teaching_resources),
)
