"""Helveticat's OAI-PMH sets and the metadata format each one is published in.

Measured by the original's author over all 68 sets and the five advertised formats (research
§4.1): in Alma a metadata format belongs to a publishing profile per set, so a set answers in
exactly one format. 66 sets deliver only ``marc21``; ``RFN`` only ``oai_dc``; ``RFN2`` only
``oai_qdc``; ``mods`` and ``etdms`` none. Asking a set for another format gets
``noRecordsMatch`` "No Publishing profile exists for given set and metadataPrefix", which reads
like an empty set and is not one. ``GetRecord`` answers only in ``marc21``, for every record.
"""

from __future__ import annotations

import re

__all__ = [
    "DEFAULT_PREFIX",
    "GET_RECORD_PREFIX",
    "PREFIX_BY_SET",
    "SET_NAME_TYPOS",
    "SET_SPEC_PATTERN",
    "prefix_for",
    "set_group",
]

DEFAULT_PREFIX = "marc21"
"""The format of every set not in :data:`PREFIX_BY_SET` (66 of the 68 measured)."""
PREFIX_BY_SET: dict[str, str] = {"RFN": "oai_dc", "RFN2": "oai_qdc"}
"""The two sets published in another format than ``marc21``."""
GET_RECORD_PREFIX = "marc21"
"""``GetRecord`` with ``oai_dc``, ``mods`` or ``oai_qdc`` answers idDoesNotExist for valid ids."""
SET_SPEC_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,99}$")
"""What an OAI setSpec may look like here (the 68 recorded specs all fit)."""
SET_NAME_TYPOS: dict[str, str] = {"xwas-ag": "xaws-ag"}
"""setNames that differ from their setSpec by an upstream typo (spec → name as sent)."""

_GROUPS: tuple[tuple[str, str], ...] = (
    ("xwas-", "web archive (e-Helvetica Web Archive Switzerland), by canton or collection"),
    ("xediss-", "electronic dissertations, by university"),
    ("helveticat", "the Helveticat catalogue"),
    ("swissbook", "swissbook export"),
    ("xrara", "rare books"),
    ("maps", "maps"),
    ("RFN", "RFN (published as Dublin Core)"),
)


def prefix_for(set_spec: str) -> str:
    """The ``metadataPrefix`` to ask ``set_spec`` for (``marc21`` but for ``RFN``/``RFN2``)."""
    return PREFIX_BY_SET.get(set_spec, DEFAULT_PREFIX)


def set_group(set_spec: str) -> str | None:
    """A short description of the family a set belongs to, where its name says it."""
    for prefix, description in _GROUPS:
        if set_spec.startswith(prefix):
            return description
    return None
