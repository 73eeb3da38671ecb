"""Pure clean-ups of catalogue values shared by the MARC21 and the Dublin Core readers.

What they undo was measured on real records (research §4.6 and the recorded samples):

* Helveticat's Dublin Core puts every name in ``dc:contributor`` with its authority noise:
  ``"Curiger, Bice 1948- (DE-588)124237002 gnd edt"``. :func:`parse_name` splits that into the
  name, life dates, the GND id and the MARC relator codes.
* ``dc:date`` repeats itself (``1963.`` and ``1963``, ``[1994]`` and ``1994``, ``cop. 2001``
  and ``2001``): :func:`dedupe_dates`.
* ``dc:subject`` mixes DDC numbers (``370``) with subject words: :func:`split_subjects`.
* ``dc:identifier`` mixes ``(Sz)…`` system numbers, ISBNs and ``alma:…/bibs/<mms>``:
  :func:`classify_identifiers`.
* e-rara and e-manuscripta state ``dc:rights`` ``PDM 1.0`` per item: :func:`licence_of` names
  the licence a rights statement stands for, when it is one it knows.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = [
    "OAI_ID_PREFIX",
    "RELATOR_CODES",
    "classify_identifiers",
    "dedupe",
    "dedupe_dates",
    "is_isbn",
    "licence_of",
    "oai_identifier",
    "parse_name",
    "split_subjects",
]

OAI_ID_PREFIX = "oai:helveticat.nb.admin.ch:"
"""The OAI identifier of a Helveticat record is this prefix plus its MMS id (MARC 001)."""

RELATOR_CODES = frozenset({
    "abr", "acp", "act", "adi", "adp", "aft", "anl", "anm", "ann", "ant", "app", "aqt", "arc",
    "ard", "arr", "art", "asg", "asn", "ato", "att", "auc", "aud", "aui", "aus", "aut", "bdd",
    "bjd", "bkd", "bkp", "blw", "bnd", "bpd", "brd", "brl", "bsl", "cas", "ccp", "chr", "cli",
    "cll", "clr", "clt", "cmm", "cmp", "cmt", "cnd", "cng", "cns", "coe", "col", "com", "con",
    "cor", "cos", "cot", "cou", "cov", "cpc", "cpe", "cph", "cpl", "cpt", "cre", "crp", "crr",
    "crt", "csl", "csp", "cst", "ctb", "cte", "ctg", "ctr", "cts", "ctt", "cur", "cwt", "dbp",
    "dfd", "dfe", "dft", "dgg", "dgs", "dis", "dln", "dnc", "dnr", "dpc", "dpt", "drm", "drt",
    "dsr", "dst", "dtc", "dte", "dtm", "dto", "dub", "edc", "edm", "edt", "egr", "elg", "elt",
    "eng", "enj", "etr", "evp", "exp", "fac", "fds", "fld", "flm", "fmd", "fmk", "fmo", "fmp",
    "fnd", "fpy", "frg", "gis", "his", "hnr", "hst", "ill", "ilu", "ins", "inv", "isb", "itr",
    "ive", "ivr", "jud", "jug", "lbr", "lbt", "ldr", "led", "lee", "lel", "len", "let", "lgd",
    "lie", "lil", "lit", "lsa", "lse", "lso", "ltg", "lyr", "mcp", "mdc", "med", "mfp", "mfr",
    "mod", "mon", "mrb", "mrk", "msd", "mte", "mtk", "mus", "nrt", "opn", "org", "orm", "osp",
    "oth", "own", "pan", "pat", "pbd", "pbl", "pdr", "pfr", "pht", "plt", "pma", "pmn", "pop",
    "ppm", "ppt", "pra", "prc", "prd", "prf", "prg", "prm", "prn", "pro", "prp", "prs", "prt",
    "prv", "pta", "pte", "ptf", "pth", "ptt", "pup", "rbr", "rcd", "rce", "rcp", "rdd", "red",
    "ren", "res", "rev", "rpc", "rps", "rpt", "rpy", "rse", "rsg", "rsp", "rsr", "rst", "rth",
    "rtm", "sad", "sce", "scl", "scr", "sds", "sec", "sgd", "sgn", "sht", "sll", "sng", "spk",
    "spn", "spy", "srv", "std", "stg", "stl", "stm", "stn", "str", "tcd", "tch", "ths", "tld",
    "tlp", "trc", "trl", "tyd", "tyg", "uvp", "vac", "vdg", "voc", "wac", "wal", "wam", "wat",
    "wdc", "wde", "win", "wit", "wpr", "wst",
})
"""The MARC relator codes (id.loc.gov/vocabulary/relators): only these are cut off a name."""

_AUTHORITY = re.compile(r"\s*\((?:DE-588|DE-101|DE-603|RERO|IdRef|viaf|orcid)[^)]*\)\s*(\S+)?",
                        re.IGNORECASE)
_GND = re.compile(r"\(DE-588\)\s*([0-9X-]+)", re.IGNORECASE)
_LIFE_DATES = re.compile(r"[\s,]+(\d{3,4}\??-(?:\d{3,4}\??)?|\d{3,4}\??)$")
_DATE_PREFIX = re.compile(r"^(?:cop\.|copyright|©|c|ca\.|P)\s*(?=\d)", re.IGNORECASE)
_DDC = re.compile(r"^\d{3}(?:\.\d+)?$")
_ALMA_BIB = re.compile(r"^alma:[^/]+/bibs/(\d+)$")
_SYSTEM = re.compile(r"^\((?:Sz|swissbib|NEBIS|RERO|IDS\w*|OCoLC|DE-\d+)\)|^system:",
                     re.IGNORECASE)
_ISBN_CHARS = re.compile(r"[\s-]")
_ISSN = re.compile(r"^\d{4}-\d{3}[\dX]$", re.IGNORECASE)
_DOI = re.compile(r"^(?:doi:|https?://(?:dx\.)?doi\.org/)(10\.\S+)$", re.IGNORECASE)

_LICENCES: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"^\s*(?:PDM\s*1\.0|Public Domain Mark(?: 1\.0)?)\s*$", re.IGNORECASE),
     "Public Domain Mark 1.0", "https://creativecommons.org/publicdomain/mark/1.0/"),
    (re.compile(r"^\s*CC0(?:\s*1\.0)?\s*$", re.IGNORECASE),
     "CC0 1.0", "https://creativecommons.org/publicdomain/zero/1.0/"),
    (re.compile(r"creativecommons\.org/publicdomain/mark/1\.0", re.IGNORECASE),
     "Public Domain Mark 1.0", "https://creativecommons.org/publicdomain/mark/1.0/"),
    (re.compile(r"creativecommons\.org/publicdomain/zero/1\.0", re.IGNORECASE),
     "CC0 1.0", "https://creativecommons.org/publicdomain/zero/1.0/"),
    (re.compile(r"rightsstatements\.org/vocab/InC/1\.0", re.IGNORECASE),
     "In Copyright", "http://rightsstatements.org/vocab/InC/1.0/"),
    (re.compile(r"rightsstatements\.org/vocab/NoC-NC/1\.0", re.IGNORECASE),
     "No Copyright - Non-Commercial Use Only", "http://rightsstatements.org/vocab/NoC-NC/1.0/"),
)
_CC = re.compile(r"^\s*CC[ -](BY(?:[ -](?:NC|SA|ND)){0,2})(?:\s+(\d\.\d))?\s*$", re.IGNORECASE)


def dedupe(values: Iterable[str | None]) -> list[str]:
    """Stripped, non-empty values in first-seen order, each once."""
    seen: dict[str, None] = {}
    for value in values:
        text = (value or "").strip()
        if text:
            seen.setdefault(text, None)
    return list(seen)


def parse_name(raw: str) -> dict[str, Any] | None:
    """A name heading without its authority noise: name, life dates, GND id, relator codes.

    ``"Curiger, Bice 1948- (DE-588)124237002 gnd edt"`` gives ``{"name": "Curiger, Bice",
    "dates": "1948-", "gnd": "124237002", "roles": ["edt"]}``; ``"Die Freie Schule aut"``
    gives ``{"name": "Die Freie Schule", "roles": ["aut"]}``. Only codes of
    :data:`RELATOR_CODES` are taken off the end, so a name ending in a short word stays whole.
    Returns None for a blank value.
    """
    text = " ".join(raw.split())
    if not text:
        return None
    gnd_match = _GND.search(text)
    tail = ""
    cut = _AUTHORITY.search(text)
    if cut is not None:
        tail = text[cut.start():]
        text = text[: cut.start()]
    words = text.split(" ")
    roles: list[str] = []
    tail_words = tail.split()
    for word in tail_words:
        if word in RELATOR_CODES:
            roles.append(word)
    while len(words) > 1 and words[-1] in RELATOR_CODES:
        roles.insert(0, words.pop())
    text = " ".join(words).strip().rstrip(",").strip()
    dates = None
    life = _LIFE_DATES.search(text)
    if life is not None and "," in text[: life.start()]:
        dates = life.group(1)
        text = text[: life.start()].rstrip(", ").strip()
    if not text:
        return None
    name: dict[str, Any] = {"name": text}
    if dates:
        name["dates"] = dates
    if gnd_match is not None:
        name["gnd"] = gnd_match.group(1)
    if roles:
        name["roles"] = dedupe(roles)
    return name


def _normal_date(value: str) -> str:
    text = value.strip().rstrip(".").strip()
    if text.startswith("[") and text.endswith("]") and text.count("[") == 1:
        text = text[1:-1].strip()
    return _DATE_PREFIX.sub("", text).strip()


def dedupe_dates(values: Iterable[str | None]) -> list[str]:
    """Dates with Helveticat's repetitions collapsed: ``["1963.", "1963"]`` → ``["1963"]``.

    Trailing full stops, a bracket pair round the whole value and a copyright prefix
    (``cop. 2001``) are dropped before comparing; what remains is returned, first-seen order.
    """
    return dedupe(_normal_date(v) for v in values if v)


def split_subjects(values: Iterable[str | None]) -> tuple[list[str], list[str]]:
    """``(subjects, ddc)``: Dewey numbers such as ``370`` apart from subject words, deduped."""
    subjects: list[str] = []
    ddc: list[str] = []
    for value in dedupe(values):
        (ddc if _DDC.match(value) else subjects).append(value)
    return subjects, ddc


def is_isbn(value: str) -> bool:
    """True for a well-formed ISBN-10 or ISBN-13 (check digit verified)."""
    digits = _ISBN_CHARS.sub("", value).upper()
    if len(digits) == 10 and digits[:9].isdigit() and (digits[9].isdigit() or digits[9] == "X"):
        total = sum((10 - i) * (10 if c == "X" else int(c)) for i, c in enumerate(digits))
        return total % 11 == 0
    if len(digits) == 13 and digits.isdigit():
        total = sum((1 if i % 2 == 0 else 3) * int(c) for i, c in enumerate(digits))
        return total % 10 == 0
    return False


def classify_identifiers(values: Iterable[str | None]) -> dict[str, Any]:
    """Identifiers sorted by kind: ``mms_id``, ``isbn``, ``issn``, ``doi``, ``system_numbers``,
    ``urls``, ``other`` (only kinds present are returned)."""
    out: dict[str, list[str]] = {}
    for value in dedupe(values):
        alma = _ALMA_BIB.match(value)
        doi = _DOI.match(value)
        if alma is not None:
            kind, value = "mms_id", alma.group(1)
        elif doi is not None:
            kind, value = "doi", doi.group(1)
        elif _SYSTEM.match(value):
            kind = "system_numbers"
        elif value.lower().startswith(("http://", "https://")):
            kind = "urls"
        elif is_isbn(value):
            kind = "isbn"
        elif _ISSN.match(value):
            kind = "issn"
        else:
            kind = "other"
        bucket = out.setdefault(kind, [])
        if value not in bucket:
            bucket.append(value)
    found: dict[str, Any] = dict(out)
    if "mms_id" in out:
        found["mms_id"] = out["mms_id"][0]
    return found


def oai_identifier(mms_id: str) -> str:
    """The OAI identifier ``heritage_get_publication`` takes for a Helveticat MMS id."""
    return f"{OAI_ID_PREFIX}{mms_id}"


def licence_of(rights: Iterable[str]) -> dict[str, str] | None:
    """The licence a record's own rights statement names (``{"name", "url"}``), if known.

    ``PDM 1.0`` (e-rara, e-manuscripta) is the Public Domain Mark; CC licences and
    rightsstatements.org URIs are read too. A statement it does not know gives None: the
    statement itself still travels on the item as ``rights``.
    """
    for statement in rights:
        for pattern, name, url in _LICENCES:
            if pattern.search(statement):
                return {"name": name, "url": url}
        cc = _CC.match(statement)
        if cc is not None:
            kind = cc.group(1).upper().replace(" ", "-")
            version = cc.group(2) or "4.0"
            slug = kind.lower().removeprefix("by").strip("-")
            path = "by" + (f"-{slug}" if slug else "")
            return {"name": f"CC {kind} {version}",
                    "url": f"https://creativecommons.org/licenses/{path}/{version}/"}
    return None
