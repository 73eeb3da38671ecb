"""Scholarly identifiers normalised so that equality is identity: DOI, PMID, PMCID, arXiv id.

Every provider hands its identifiers through these functions before they reach a
:class:`~readingroom.literature.models.LiteratureRecord`, and fusion compares the results
directly. The forms:

* DOI — lower case, no ``doi:`` / ``https://doi.org/`` wrapper, percent-decoded
  (``10.1093/mind/lix.236.433``). DOI names are case-insensitive; Semantic Scholar sends upper
  case, OpenAlex the URL form, Europe PMC lower case.
* PMID — digits only (``29456894``); OpenAlex sends the PubMed URL.
* PMCID — ``PMC`` and digits (``PMC5815332``); OpenAlex and Semantic Scholar send the digits
  alone, Europe PMC URLs use ``pmc`` in lower case.
* arXiv — versionless id (``2104.12255``, ``astro-ph/0601001``) and, apart, the version
  (``v1``). arXiv's DataCite DOI ``10.48550/arXiv.<id>`` names the same paper.

Every function returns ``None`` for a value that is not an identifier of its kind, never an
empty string.
"""

from __future__ import annotations

import html
import re
import unicodedata
from typing import NamedTuple
from urllib.parse import unquote

__all__ = [
    "ARXIV_DOI_PREFIX",
    "ArxivId",
    "arxiv_abs_url",
    "arxiv_from_doi",
    "arxiv_pdf_url",
    "doi_url",
    "find_doi",
    "normalize_arxiv",
    "normalize_doi",
    "normalize_pmcid",
    "normalize_pmid",
    "normalize_title",
    "pmc_url",
    "pubmed_url",
]

ARXIV_DOI_PREFIX = "10.48550/arxiv."
"""arXiv's DataCite DOIs (normalised, lower case): ``10.48550/arxiv.<versionless id>``."""

_DOI_WRAPPER = re.compile(
    r"^(?:doi:\s*|(?:https?://)?(?:dx\.)?doi\.org/|info:doi/|urn:doi:)", re.IGNORECASE
)
_DOI_SHAPE = re.compile(r"^10\.\d{4,9}/\S+$")
_DOI_IN_TEXT = re.compile(r"\b10\.\d{4,9}/[^\s\"'<>]+", re.IGNORECASE)
_TRAILING_PUNCT = ".,;:)]}"

_PMID_WRAPPER = re.compile(
    r"^(?:pmid:?\s*|(?:https?://)?(?:www\.)?(?:pubmed\.ncbi\.nlm\.nih\.gov|"
    r"ncbi\.nlm\.nih\.gov/pubmed)/)",
    re.IGNORECASE,
)
_PMCID = re.compile(r"^(?:pmc)?(\d{1,10})$", re.IGNORECASE)

_ARXIV_WRAPPER = re.compile(
    r"^(?:arxiv:\s*|(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/)", re.IGNORECASE
)
_ARXIV_NEW = re.compile(r"^(\d{4}\.\d{4,5})(v\d+)?$", re.IGNORECASE)
_ARXIV_OLD = re.compile(r"^([a-z]+(?:-[a-z]+)*(?:\.[a-z]{2})?/\d{7})(v\d+)?$", re.IGNORECASE)

_TAG = re.compile(r"<[^>]*>")
_NOT_WORD = re.compile(r"[\W_]+", re.UNICODE)


class ArxivId(NamedTuple):
    """An arXiv identifier split into its versionless id and its version (``v2``) if given."""

    id: str
    version: str | None = None


def normalize_doi(value: str | None, *, from_text: bool = False) -> str | None:
    """The DOI in ``value`` in its normal form, or None when it is not a DOI.

    Args:
        value: a DOI as a provider gives it (bare, ``doi:``, a doi.org URL, percent-encoded).
        from_text: the value was cut out of running text, so trailing ``.,;:)]}`` are
            punctuation, not part of the DOI.
    """
    if value is None:
        return None
    text = value.strip()
    text = _DOI_WRAPPER.sub("", text, count=1).strip()
    text = unquote(text)
    if from_text:
        text = text.rstrip(_TRAILING_PUNCT)
    text = text.lower()
    return text if _DOI_SHAPE.fullmatch(text) else None


def find_doi(text: str | None) -> str | None:
    """The first DOI found anywhere in ``text`` (normalised), or None."""
    if not text:
        return None
    match = _DOI_IN_TEXT.search(text)
    return normalize_doi(match.group(0), from_text=True) if match else None


def doi_url(doi: str) -> str:
    """The resolver URL of a normalised DOI."""
    return f"https://doi.org/{doi}"


def normalize_pmid(value: str | int | None) -> str | None:
    """The PMID in ``value`` as digits (``PMID: 123``, PubMed URLs accepted), or None."""
    if value is None:
        return None
    text = _PMID_WRAPPER.sub("", str(value).strip(), count=1).strip().rstrip("/")
    if not text.isascii() or not text.isdigit() or int(text) == 0:
        return None
    return str(int(text))


def pubmed_url(pmid: str) -> str:
    """The PubMed page of a PMID."""
    return f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/"


def normalize_pmcid(value: str | int | None) -> str | None:
    """The PMCID in ``value`` as ``PMC`` + digits, or None.

    Accepts ``PMC123``, ``pmc123``, bare digits and URLs whose last path segment is one of
    those (OpenAlex's ``…/pmc/articles/5815332``, Europe PMC's ``…/articles/pmc5815332``).
    """
    if value is None:
        return None
    text = str(value).strip().rstrip("/")
    if "/" in text:
        text = text.rsplit("/", 1)[1]
    match = _PMCID.fullmatch(text)
    if not match or not match.group(1).isascii() or int(match.group(1)) == 0:
        return None
    return f"PMC{int(match.group(1))}"


def pmc_url(pmcid: str) -> str:
    """The PubMed Central page of a PMCID."""
    return f"https://pmc.ncbi.nlm.nih.gov/articles/{pmcid}/"


def normalize_arxiv(value: str | None) -> ArxivId | None:
    """The arXiv id in ``value`` (``arXiv:``, abs/pdf URLs, ``.pdf`` accepted), or None.

    New-style ids (``2104.12255v1``) and old-style ids (``astro-ph/0601001``,
    ``math.GT/0309136``) are recognised; the archive part of an old-style id is lower-cased
    except for its subject class (``math.GT``), as arXiv writes it.
    """
    if value is None:
        return None
    text = _ARXIV_WRAPPER.sub("", value.strip(), count=1).strip().rstrip("/")
    if text.lower().endswith(".pdf"):
        text = text[:-4]
    match = _ARXIV_NEW.fullmatch(text)
    if match:
        return ArxivId(match.group(1), _version(match.group(2)))
    match = _ARXIV_OLD.fullmatch(text)
    if match:
        archive, _, number = match.group(1).partition("/")
        name, dot, subject = archive.partition(".")
        archive = name.lower() + (dot + subject.upper() if dot else "")
        return ArxivId(f"{archive}/{number}", _version(match.group(2)))
    return None


def _version(raw: str | None) -> str | None:
    return raw.lower() if raw else None


def arxiv_from_doi(doi: str | None) -> str | None:
    """The versionless arXiv id named by arXiv's DataCite DOI (``10.48550/arxiv.…``), or None."""
    normal = normalize_doi(doi)
    if normal is None or not normal.startswith(ARXIV_DOI_PREFIX):
        return None
    found = normalize_arxiv(normal[len(ARXIV_DOI_PREFIX):])
    return found.id if found else None


def arxiv_abs_url(arxiv_id: str, version: str | None = None) -> str:
    """The abstract page of an arXiv id."""
    return f"https://arxiv.org/abs/{arxiv_id}{version or ''}"


def arxiv_pdf_url(arxiv_id: str, version: str | None = None) -> str:
    """The PDF of an arXiv id."""
    return f"https://arxiv.org/pdf/{arxiv_id}{version or ''}"


def normalize_title(value: str | None) -> str | None:
    """A title reduced for comparison: NFKC, tags and entities gone, casefolded, no punctuation.

    ``"A &quot;<i>Blood Relationship&quot;</i> Between …."`` and ``"A “Blood Relationship”
    between …"`` compare equal. None when nothing word-like is left.
    """
    if value is None:
        return None
    text = html.unescape(_TAG.sub(" ", value))
    text = unicodedata.normalize("NFKC", text).casefold()
    text = " ".join(_NOT_WORD.sub(" ", text).split())
    return text or None
