"""A closed-world CQL builder for NDL Search SRU.

Only indexes from the specification's table 3-2 are used, each with the match kind NDL fixes
for it (table 3-3): the caller cannot choose partial or exact matching, so the envelope reports
what each index does. No raw CQL is accepted from the caller; every refusal happens here,
before anything is sent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..core.envelope import MatchKind, TermUse
from ..core.errors import Code, CoreError
from ..core.script import detect_script
from .sources import ALL_DPIDS, PROVIDERS

__all__ = [
    "FIELD_RULES",
    "RESERVED_WORD_RULES",
    "BuiltQuery",
    "FieldRule",
    "build_record_query",
    "build_search_query",
    "check_dpids",
    "find_reserved_word",
]


@dataclass(frozen=True)
class FieldRule:
    """How one tool argument maps onto an NDL index."""

    index: str
    match: MatchKind
    free_text: bool
    """Free-text fields are checked for reserved words and for Latin script."""


FIELD_RULES: dict[str, FieldRule] = {
    "title": FieldRule("title", MatchKind.partial, True),
    "creator": FieldRule("creator", MatchKind.partial, True),
    "publisher": FieldRule("publisher", MatchKind.partial, True),
    "subject": FieldRule("subject", MatchKind.partial, True),
    "anywhere": FieldRule("anywhere", MatchKind.partial, True),
    "ndc": FieldRule("ndc", MatchKind.prefix, False),
    "isbn": FieldRule("isbn", MatchKind.exact, False),
    "issn": FieldRule("issn", MatchKind.exact, False),
    "from_year": FieldRule("from", MatchKind.range, False),
    "to_year": FieldRule("until", MatchKind.range, False),
}
"""Tool argument → (NDL index, match kind). Order is the order of clauses in the CQL."""

TERM_FIELDS = ("title", "creator", "publisher", "subject", "anywhere", "ndc", "isbn", "issn")

# NDL refuses "and"/"or" as separate words inside a term, in any case ("illegal query syntax").
# Measured by the ckgerteis/ndl-mcp author on 2026-08-27 (japan-apis.md 1.5, version 3): a
# leading one is tolerated, an infix or trailing one is not; "not" is accepted; letters inside
# words (Thailand, Andorra) are fine. Kept as a table so new live evidence changes one row;
# tests/regressions/test_ndl_reserved_words.py holds the measured cases.
RESERVED_WORD_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("and", re.compile(r"(?<=\s)and(?=\s|$)", re.IGNORECASE)),
    ("or", re.compile(r"(?<=\s)or(?=\s|$)", re.IGNORECASE)),
)

# Several providers in one query. NDL refuses every parenthesised OR ("illegal query syntax").
# The specification (table 3-3) documents dpid as taking several values joined by OR with the
# "any" relation; that is the form used. See docs/ndl-mcp.md, "Several providers at once".
_MULTI_DPID_TEMPLATE = 'dpid any "{values}"'

_MAX_TERM_CHARS = 500
_NDC = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.\-/]*$")
_ISSN = re.compile(r"^(\d{4})-?(\d{3}[\dXx])$")
_JPNO = re.compile(r"^\d{8,9}$")
_BIB_ID = re.compile(r"^\d{1,12}$")
_SEARCH_ID = re.compile(r"^R\d{9}-I[0-9A-Za-z]{1,40}$")


@dataclass(frozen=True)
class BuiltQuery:
    """A CQL string and the terms it was built from, ready for ``searched_for``."""

    cql: str
    terms: list[TermUse]
    dpids: tuple[str, ...]

    @property
    def indexes(self) -> list[str]:
        """The indexes the query searched (an item's ``matched_in``)."""
        return list(dict.fromkeys(t.index for t in self.terms))


def find_reserved_word(term: str) -> str | None:
    """The reserved word NDL would reject in ``term``, or None when the term is safe."""
    for word, pattern in RESERVED_WORD_RULES:
        if pattern.search(term):
            return word
    return None


def check_dpids(dpids: Sequence[str]) -> tuple[str, ...]:
    """Refuse any dpid outside the five declared to the NDL (no request is ever sent for it)."""
    refused = [d for d in dpids if d not in PROVIDERS]
    if refused:
        raise CoreError(
            Code.PROVIDER_NOT_PERMITTED,
            f"Data provider(s) {', '.join(map(repr, refused))} are not among the sets this "
            "server declared to the National Diet Library; no request was sent.",
            details={"refused": refused, "permitted": list(ALL_DPIDS)},
            remediation="Use one of the permitted dpids, or omit `providers` to search all five.",
        )
    if not dpids:
        raise CoreError(
            Code.INVALID_INPUT,
            "No data provider to search.",
            details={"permitted": list(ALL_DPIDS)},
            remediation="Name at least one permitted dpid, or omit `providers`.",
        )
    return tuple(dict.fromkeys(dpids))


def _quote(field: str, value: str) -> str:
    if '"' in value or "\\" in value:
        raise CoreError(
            Code.INVALID_INPUT,
            f"The {field} term contains a double quote or backslash, which CQL would read as "
            "syntax.",
            details={"field": field},
            remediation="Remove the quotes; every term is already matched as a phrase of words.",
        )
    if any(ord(c) < 0x20 for c in value):
        raise CoreError(
            Code.INVALID_INPUT,
            f"The {field} term contains control characters.",
            details={"field": field},
            remediation="Send plain text.",
        )
    return f'"{value}"'


def _normalise(field: str, raw: str) -> str:
    value = " ".join(raw.split())  # also folds U+3000, which str.split treats as space
    if len(value) > _MAX_TERM_CHARS:
        raise CoreError(
            Code.INVALID_INPUT,
            f"The {field} term is longer than {_MAX_TERM_CHARS} characters.",
            details={"field": field, "limit": _MAX_TERM_CHARS},
            remediation="Search with fewer, more specific words.",
        )
    if field == "isbn":
        digits = re.sub(r"[\s-]", "", value).upper()
        if not re.fullmatch(r"\d{9}[\dX]|\d{13}", digits):
            raise CoreError(
                Code.INVALID_INPUT,
                "isbn must be an ISBN-10 or ISBN-13 (hyphens allowed).",
                details={"field": field},
                remediation="Give the 10 or 13 characters of the ISBN; NDL converts between them.",
            )
        return digits
    if field == "issn":
        m = _ISSN.fullmatch(value)
        if not m:
            raise CoreError(
                Code.INVALID_INPUT,
                "issn must look like 1234-5678 (the last character may be X).",
                details={"field": field},
                remediation="Give the 8 characters of the ISSN.",
            )
        return f"{m.group(1)}-{m.group(2).upper()}"
    if field == "ndc" and not _NDC.fullmatch(value):
        raise CoreError(
            Code.INVALID_INPUT,
            "ndc must be a classification notation such as 913.6 (matched as a prefix).",
            details={"field": field},
            remediation="Give the leading digits of an NDC (or NDLC) class, e.g. 913 or 210.6.",
        )
    return value


def build_search_query(
    fields: Mapping[str, object | None], dpids: Sequence[str]
) -> BuiltQuery:
    """Build the CQL for a field search restricted to ``dpids``.

    Args:
        fields: tool arguments keyed as in :data:`FIELD_RULES`; None or blank means unused.
        dpids: the providers to search (checked against the declared five).

    Raises:
        CoreError: INVALID_INPUT (nothing to search, bad identifier, bad year range),
            RESERVED_WORD_IN_QUERY, PROVIDER_NOT_PERMITTED.
    """
    dpids = check_dpids(dpids)
    clauses: list[str] = []
    terms: list[TermUse] = []
    for field, rule in FIELD_RULES.items():
        raw = fields.get(field)
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            continue
        if rule.match is MatchKind.range:
            continue
        value = _normalise(field, str(raw))
        if rule.free_text:
            word = find_reserved_word(value)
            if word is not None:
                raise CoreError(
                    Code.RESERVED_WORD_IN_QUERY,
                    f"The {field} term contains {word!r} as a separate word; NDL Search rejects "
                    "the whole query for it (in any letter case).",
                    details={"field": field, "word": word},
                    remediation=(
                        f"Drop {word!r} from the {field} term: words in one term are already "
                        "combined with AND. For alternatives, run one search per term."
                    ),
                )
        clauses.append(f"{rule.index}={_quote(field, value)}")
        terms.append(
            TermUse(
                field=field, term=value, index=rule.index, match=rule.match,
                script=detect_script(value),
            )
        )
    if not clauses:
        raise CoreError(
            Code.INVALID_INPUT,
            "Nothing to search: give at least one of " + ", ".join(TERM_FIELDS) + ".",
            details={"fields": list(TERM_FIELDS)},
            remediation="Add a term; a year range alone is not a search.",
        )
    years = _year_clauses(fields, terms)
    clauses.extend(years)
    clauses.append(_dpid_clause(dpids))
    return BuiltQuery(cql=" AND ".join(clauses), terms=terms, dpids=dpids)


def _year_clauses(fields: Mapping[str, object | None], terms: list[TermUse]) -> list[str]:
    start, end = fields.get("from_year"), fields.get("to_year")
    for name, year in (("from_year", start), ("to_year", end)):
        if year is not None and not (isinstance(year, int) and 1 <= year <= 9999):
            raise CoreError(
                Code.INVALID_INPUT,
                f"{name} must be a year between 1 and 9999.",
                details={"field": name},
                remediation="Give a four-digit year.",
            )
    if isinstance(start, int) and isinstance(end, int) and start > end:
        raise CoreError(
            Code.INVALID_INPUT,
            f"from_year {start} is after to_year {end}.",
            details={"from_year": start, "to_year": end},
            remediation="Swap the years, or drop one of them.",
        )
    clauses = []
    # NDL requires from and until in the same format; both are always YYYY here.
    for name, year in (("from_year", start), ("to_year", end)):
        if isinstance(year, int):
            rule = FIELD_RULES[name]
            text = f"{year:04d}"
            clauses.append(f'{rule.index}="{text}"')
            terms.append(
                TermUse(field=name, term=text, index=rule.index, match=rule.match,
                        script=detect_script(text))
            )
    return clauses


def _dpid_clause(dpids: Sequence[str]) -> str:
    if len(dpids) == 1:
        return f'dpid="{dpids[0]}"'
    return _MULTI_DPID_TEMPLATE.format(values=" ".join(dpids))


def build_record_query(
    *, jpno: str | None = None, ndl_bib_id: str | None = None, ndl_search_id: str | None = None
) -> list[tuple[BuiltQuery, str]]:
    """The exact-index queries that fetch one record, in the order to try them.

    ``jpno`` uses the exact ``jpno`` index. A bare NDL bibliographic id is turned into the NDL
    Search item token ``R<repository>-I<id>`` for the exact ``itemno`` index: first the NDL
    catalogue's repository (R100000002), then the periodicals index's (R000000004); real
    records show the token is built that way for NDL-created data. Every query is restricted to
    the five declared providers. Never free text.

    Returns:
        (query, the identifier kind) pairs; the caller tries them in order until one matches.
    """
    given = [(k, v) for k, v in (("jpno", jpno), ("ndl_bib_id", ndl_bib_id),
                                 ("ndl_search_id", ndl_search_id)) if v]
    if len(given) != 1:
        raise CoreError(
            Code.INVALID_INPUT,
            "Give exactly one of jpno, ndl_bib_id or ndl_search_id.",
            details={"given": [k for k, _ in given]},
            remediation="Pass the one identifier you have.",
        )
    kind, value = given[0][0], given[0][1].strip()
    restrict = _dpid_clause(ALL_DPIDS)
    if kind == "jpno":
        digits = value.upper().removeprefix("JP").strip()
        if not _JPNO.fullmatch(digits):
            raise CoreError(
                Code.INVALID_INPUT, "jpno must be the 8 or 9 digits of a JP number.",
                details={"field": "jpno"}, remediation="e.g. 71009951",
            )
        tokens = [("jpno", "jpno", digits)]
    elif kind == "ndl_bib_id":
        if not _BIB_ID.fullmatch(value):
            raise CoreError(
                Code.INVALID_INPUT, "ndl_bib_id must be the digits of an NDL bibliographic id.",
                details={"field": "ndl_bib_id"}, remediation="e.g. 000001185032",
            )
        tokens = [("ndl_bib_id", "itemno", f"R100000002-I{value}"),
                  ("ndl_bib_id", "itemno", f"R000000004-I{value}")]
    else:
        if not _SEARCH_ID.fullmatch(value):
            raise CoreError(
                Code.INVALID_INPUT,
                "ndl_search_id must be an NDL Search token like R100000002-I000001185032.",
                details={"field": "ndl_search_id"}, remediation="Copy it from an item's "
                "ndl_search_id.",
            )
        tokens = [("ndl_search_id", "itemno", value)]
    out = []
    for field, index, token in tokens:
        term = TermUse(field=field, term=token, index=index, match=MatchKind.exact,
                       script=detect_script(token))
        out.append((BuiltQuery(cql=f'{index}="{token}" AND {restrict}', terms=[term],
                               dpids=ALL_DPIDS), field))
    return out
