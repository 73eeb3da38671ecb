"""The Helveticat source entry: who to credit and under which terms the metadata comes."""

from __future__ import annotations

from ...core.responses import Source

__all__ = ["HELVETICAT", "SOURCE_ID"]

SOURCE_ID = "helveticat"

HELVETICAT = Source(
    id=SOURCE_ID,
    name="Swiss National Library (NB) - Helveticat",
    # The NB's own terms of use were not checked (research §4.11); the records carry their
    # own rights where they have any (MARC 506/540, dc:rights), and those travel on the item.
    licence="Metadata open, per record (NB terms of use not verified)",
    url="https://helveticat.nb.admin.ch",
    credit="Swiss National Library (NB), Helveticat catalogue",
)
"""The one source of the three Helveticat tools."""
