"""The OAI-PMH 2.0 reader: every real OAI sample, hand-written spec-shaped cases, error codes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from readingroom.core import oaipmh
from readingroom.core.errors import Code
from readingroom.core.oaipmh import (
    ERROR_OUTCOMES,
    OaiError,
    OaiErrorCode,
    OaiFormatError,
    OaiHeader,
    OaiOutcome,
    ResumptionToken,
    parse_oai,
)
from readingroom.core.xmlsafe import UnsafeXmlError, XmlParseError

from .samples import no_expectation, require_sample, rows_cover, sample_params

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
OAI_DC = "{http://www.openarchives.org/OAI/2.0/oai_dc/}dc"
MARC = "{http://www.loc.gov/MARC21/slim}record"
HELVETICAT = "https://nb-helveticat.alma.exlibrisgroup.com/view/oai/41SNL_51_INST/request"
ZENODO = "https://zenodo.org/oai2d"

# file -> what it really contains, read by hand from the file.
SAMPLES: dict[str, dict[str, Any]] = {
    "emanuscripta_oai_listrecords_oai_dc.xml": {
        "date": "2026-08-07T20:53:41Z",
        "request": (
            "https://www.e-manuscripta.ch/oai/", "ListRecords", {"metadataPrefix": "oai_dc"}
        ),
        "verb": "ListRecords",
        "records": [
            ("oai:www.e-manuscripta.ch:5999855", "2026-07-31T06:12:30Z",
             ("emanussnl", "document", "texte"), OAI_DC),
            ("oai:www.e-manuscripta.ch:5999881", "2026-07-29T09:27:34Z",
             ("emanussnl", "document", "texte"), OAI_DC),
        ],
        "token": ResumptionToken(
            "0x331fb561d2933bdf2c86db160d736e79-cursor_p_3D10_p_26metadataPrefix_p_3Doai_dc"
            "_p_26batch_size_p_3D11",
            complete_list_size=218630,
        ),
    },
    "erara_oai_listrecords_oai_dc.xml": {
        "date": "2026-08-07T20:53:33Z",
        "request": ("https://www.e-rara.ch/oai/", "ListRecords", {"metadataPrefix": "oai_dc"}),
        "verb": "ListRecords",
        "records": [
            ("oai:www.e-rara.ch:8923269", "2014-11-28T07:57:34Z",
             ("zut", "book", "collections", "wihibe", "privlib", "pbebircher"), OAI_DC),
            ("oai:www.e-rara.ch:196", "2009-12-15T10:20:30Z",
             ("zut", "book", "collections", "wihibe"), OAI_DC),
        ],
        "token": ResumptionToken(
            "0x24276941750c909ff0c4740972e1adf1-cursor_p_3D10_p_26metadataPrefix_p_3Doai_dc"
            "_p_26batch_size_p_3D11",
            complete_list_size=163709,
        ),
    },
    "erara_oai_listsets.xml": {
        "date": "2026-08-07T20:53:45Z",
        "request": ("https://www.e-rara.ch/oai/", "ListSets", {}),
        "verb": "ListSets",
        "sets": (
            10, ("frc_g", "BCU Fribourg (GLN)"), ("lg1", "Biblioteca Salita dei Frati, Lugano")
        ),
        "token": ResumptionToken("cursor_p_3D10_p_26batch_size_p_3D11"),
    },
    "helveticat_oai_getrecord_marc21.xml": {
        "date": "2026-09-20T13:12:30Z",
        "request": (
            HELVETICAT,
            "GetRecord",
            {
                "metadataPrefix": "marc21",
                "identifier": "oai:helveticat.nb.admin.ch:991016034239703976",
            },
        ),
        "verb": "GetRecord",
        "records": [
            ("oai:helveticat.nb.admin.ch:991016034239703976", "2025-08-21T14:39:56Z",
             ("helveticat", "helveticat4slsp"), MARC),
        ],
        "token": None,
    },
    "helveticat_oai_listsets_68sets.xml": {
        "date": "2026-08-15T17:24:21Z",
        "request": (HELVETICAT, "ListSets", {}),
        "verb": "ListSets",
        "sets": (68, ("helveticat4slsp", "helveticat4slsp"), ("xpop1", "xpop1")),
        "token": None,
    },
    "zenodo_oai_error_badArgument_metadataPrefix.xml": {
        "date": "2026-08-13T18:18:48Z",
        "request": (ZENODO, None, {}),
        "errors": [("badArgument", "metadataPrefix does not exist")],
    },
    "zenodo_oai_error_badResumptionToken_listrecords.xml": {
        "date": "2026-08-13T18:19:00Z",
        "request": (ZENODO, None, {}),
        "errors": [
            (
                "badResumptionToken",
                "The value of the resumptionToken argument is invalid or expired.",
            )
        ],
    },
    "zenodo_oai_error_idDoesNotExist_getrecord.xml": {
        "date": "2026-08-10T17:47:08Z",
        "request": (ZENODO, None, {}),
        "errors": [("idDoesNotExist", "No matching identifier")],
    },
    "zenodo_oai_error_noRecordsMatch_listrecords.xml": {
        "date": "2026-08-13T18:19:00Z",
        "request": (ZENODO, None, {}),
        "errors": [("noRecordsMatch", None)],
    },
}


def _fixture(name: str) -> oaipmh.OaiResponse:
    return parse_oai((FIXTURES / "oai" / name).read_bytes())


def test_all_is_honest() -> None:
    assert set(oaipmh.__all__) == {
        "ERROR_OUTCOMES",
        "OAI_NS",
        "VERBS",
        "Identify",
        "MetadataFormat",
        "OaiError",
        "OaiErrorCode",
        "OaiFormatError",
        "OaiHeader",
        "OaiOutcome",
        "OaiRecord",
        "OaiRequest",
        "OaiResponse",
        "OaiSet",
        "ResumptionToken",
        "parse_oai",
    }
    for name in oaipmh.__all__:
        assert getattr(oaipmh, name) is not None


# --- the error vocabulary ---------------------------------------------------------------------


def test_one_member_per_specification_error_code() -> None:
    assert {c.value for c in OaiErrorCode} == {
        "badArgument",
        "badResumptionToken",
        "badVerb",
        "cannotDisseminateFormat",
        "idDoesNotExist",
        "noRecordsMatch",
        "noMetadataFormats",
        "noSetHierarchy",
    }


def test_every_error_code_has_an_outcome() -> None:
    assert set(ERROR_OUTCOMES) == set(OaiErrorCode)
    by_outcome = {o: {c.value for c, v in ERROR_OUTCOMES.items() if v is o} for o in OaiOutcome}
    assert by_outcome == {
        OaiOutcome.EMPTY_RESULT: {"noRecordsMatch"},
        OaiOutcome.CALLER_MISTAKE: {
            "badArgument",
            "badResumptionToken",
            "cannotDisseminateFormat",
            "idDoesNotExist",
        },
        OaiOutcome.UPSTREAM_CANNOT_ANSWER: {"badVerb", "noMetadataFormats", "noSetHierarchy"},
    }


def test_every_error_code_is_documented_with_the_specification_text() -> None:
    for code in OaiErrorCode:
        assert code.__doc__ == code.meaning
        assert code.meaning.endswith(".") and len(code.meaning.split()) >= 6, code
    assert OaiErrorCode("badArgument") is OaiErrorCode.BAD_ARGUMENT
    assert OaiErrorCode.NO_SET_HIERARCHY.meaning == "The repository does not support sets."
    # Zenodo's real badResumptionToken message is the specification's sentence, word for word.
    assert OaiErrorCode.BAD_RESUMPTION_TOKEN.meaning == (
        "The value of the resumptionToken argument is invalid or expired."
    )


def test_an_unknown_code_is_kept_and_counts_as_upstream_cannot_answer() -> None:
    error = OaiError(code="undefinedError", message="x")
    assert error.known is None
    assert error.outcome is OaiOutcome.UPSTREAM_CANNOT_ANSWER


# --- every real OAI sample --------------------------------------------------------------------


@pytest.mark.parametrize("path", sample_params("heritage", "*_oai_*.xml"))
def test_every_real_sample_matches_its_row(path: Path | None) -> None:
    path = require_sample(path, "heritage")
    expected = SAMPLES.get(path.name)
    if expected is None:
        no_expectation(path, "SAMPLES")
    response = parse_oai(path.read_bytes())
    assert response.response_date == expected["date"]
    base_url, verb, arguments = expected["request"]
    assert response.request.base_url == base_url
    assert response.request.verb == verb
    assert response.request.arguments == arguments
    errors = expected.get("errors", [])
    assert [(e.code, e.message) for e in response.errors] == errors
    if errors:
        assert response.verb is None
        assert (response.sets, response.records, response.headers) == ((), (), ())
        assert response.resumption_token is None
        return
    assert response.verb == expected["verb"]
    assert response.resumption_token == expected["token"]
    assert response.has_more == (expected["token"] is not None)
    assert not response.is_empty_result and response.failures == ()
    records = expected.get("records", [])
    assert [
        (r.header.identifier, r.header.datestamp, r.header.set_specs, r.metadata.tag)
        for r in response.records
        if r.metadata is not None
    ] == records
    assert all(not r.header.deleted for r in response.records)
    assert len(response.records) == len(records)
    if "sets" in expected:
        count, first, last = expected["sets"]
        assert len(response.sets) == count
        assert (response.sets[0].spec, response.sets[0].name) == first
        assert (response.sets[-1].spec, response.sets[-1].name) == last
    else:
        assert response.sets == ()


def test_every_real_oai_sample_has_a_row(samples: Path) -> None:
    rows_cover({p.name: p for p in (samples / "heritage").glob("*_oai_*.xml")}, SAMPLES,
               "SAMPLES")


def test_helveticat_set_specs_are_unique_and_all_named(samples: Path) -> None:
    response = parse_oai((samples / "heritage" / "helveticat_oai_listsets_68sets.xml").read_bytes())
    specs = [s.spec for s in response.sets]
    assert len(set(specs)) == 68
    assert {"helveticat", "swissbook", "RFN", "RFN2", "maps"} <= set(specs)
    assert all(s.name for s in response.sets)


def test_helveticat_getrecord_metadata_is_the_marc_record(samples: Path) -> None:
    body = (samples / "heritage" / "helveticat_oai_getrecord_marc21.xml").read_bytes()
    [record] = parse_oai(body).records
    assert record.metadata is not None
    controls = record.metadata.findall("{http://www.loc.gov/MARC21/slim}controlfield")
    assert {c.get("tag"): c.text for c in controls}["001"] == "991016034239703976"


def test_erara_record_metadata_is_oai_dc(samples: Path) -> None:
    body = (samples / "heritage" / "erara_oai_listrecords_oai_dc.xml").read_bytes()
    second = parse_oai(body).records[1]
    assert second.metadata is not None
    title = second.metadata.findtext("{http://purl.org/dc/elements/1.1/}title") or ""
    assert title.startswith("Exemplars of Tudor architecture")


@pytest.mark.parametrize(
    ("name", "outcome"),
    [
        ("zenodo_oai_error_noRecordsMatch_listrecords.xml", OaiOutcome.EMPTY_RESULT),
        ("zenodo_oai_error_badArgument_metadataPrefix.xml", OaiOutcome.CALLER_MISTAKE),
        ("zenodo_oai_error_badResumptionToken_listrecords.xml", OaiOutcome.CALLER_MISTAKE),
        ("zenodo_oai_error_idDoesNotExist_getrecord.xml", OaiOutcome.CALLER_MISTAKE),
    ],
)
def test_real_error_samples_map_to_their_outcome(
    samples: Path, name: str, outcome: OaiOutcome
) -> None:
    response = parse_oai((samples / "heritage" / name).read_bytes())
    [error] = response.errors
    assert error.known is not None and error.outcome is outcome
    assert response.is_empty_result == (outcome is OaiOutcome.EMPTY_RESULT)
    assert response.failures == (() if outcome is OaiOutcome.EMPTY_RESULT else (error,))
    assert not response.has_more


# --- hand-written edge cases (tests/fixtures/oai, shaped after the specification) -------------


def test_identify() -> None:
    response = _fixture("identify.xml")
    assert response.verb == "Identify"
    identify = response.identify
    assert identify is not None
    assert identify.repository_name == "Reading Room Test Repository"
    assert identify.base_url == "https://oai.example.org/request"
    assert identify.protocol_version == "2.0"
    assert identify.admin_emails == ("one@example.org", "two@example.org")
    assert identify.earliest_datestamp == "1990-01-01T00:00:00Z"
    assert identify.deleted_record == "persistent"
    assert identify.granularity == "YYYY-MM-DDThh:mm:ssZ"
    assert identify.compressions == ("gzip",)
    [description] = identify.descriptions
    ns = "{http://www.openarchives.org/OAI/2.0/oai-identifier}"
    assert description.findtext(f"{ns}sampleIdentifier") == "oai:oai.example.org:12345678"


def test_list_metadata_formats() -> None:
    formats = _fixture("list_metadata_formats.xml").metadata_formats
    assert [(f.prefix, f.namespace) for f in formats] == [
        ("oai_dc", "http://www.openarchives.org/OAI/2.0/oai_dc/"),
        ("marc21", "http://www.loc.gov/MARC21/slim"),
    ]
    assert formats[1].schema == "http://www.loc.gov/standards/marcxml/schema/MARC21slim.xsd"


def test_list_identifiers_deleted_and_empty_token_ends_the_list() -> None:
    response = _fixture("list_identifiers_last_page_deleted.xml")
    assert response.request.arguments == {"resumptionToken": "page-2"}
    assert response.headers == (
        OaiHeader("oai:oai.example.org:3", "2025-12-31", ("books",), deleted=False),
        OaiHeader("oai:oai.example.org:4", "2026-01-01", (), deleted=True),
    )
    token = response.resumption_token
    assert token == ResumptionToken(None, complete_list_size=4, cursor=2)
    assert token is not None and token.list_complete
    assert not response.has_more


def test_list_records_deleted_record_about_and_token_attributes() -> None:
    response = _fixture("list_records_deleted_token_expiry.xml")
    assert response.request.arguments == {
        "metadataPrefix": "oai_dc",
        "set": "books",
        "from": "2025-01-01",
    }
    live, deleted = response.records
    assert live.metadata is not None and live.metadata.tag == OAI_DC
    assert [el.tag for el in live.about] == ["{http://www.openarchives.org/OAI/2.0/provenance}provenance"]
    assert deleted.header.deleted and deleted.metadata is None
    assert response.resumption_token == ResumptionToken(
        "page-2", complete_list_size=4, cursor=0, expiration_date="2026-01-03T03:04:05Z"
    )
    assert response.has_more and not response.resumption_token.list_complete


def test_several_errors_are_all_kept() -> None:
    response = _fixture("two_errors.xml")
    assert [(e.known, e.outcome) for e in response.errors] == [
        (OaiErrorCode.BAD_VERB, OaiOutcome.UPSTREAM_CANNOT_ANSWER),
        (OaiErrorCode.BAD_ARGUMENT, OaiOutcome.CALLER_MISTAKE),
    ]
    assert response.failures == response.errors
    assert not response.is_empty_result


# --- refused bodies ---------------------------------------------------------------------------


def test_no_verb_and_no_error_is_refused_not_an_empty_list() -> None:
    with pytest.raises(OaiFormatError) as info:
        parse_oai(
            b'<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">'
            b"<responseDate>2026-01-01T00:00:00Z</responseDate><request>https://x</request>"
            b"</OAI-PMH>"
        )
    assert info.value.details == {"reason": "no_payload"}
    assert info.value.code is Code.API_ERROR


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"<html xmlns='http://www.w3.org/1999/xhtml'><body>503</body></html>", "html"),
        (b"<searchRetrieveResponse xmlns='http://www.loc.gov/zing/srw/'/>", "not_oai"),
        (b"<OAI-PMH><ListSets/></OAI-PMH>", "not_oai"),  # OAI-PMH 2.0 has a namespace
    ],
)
def test_not_oai_is_a_typed_api_error(body: bytes, reason: str) -> None:
    with pytest.raises(OaiFormatError) as info:
        parse_oai(body)
    assert isinstance(info.value, XmlParseError)
    assert info.value.details == {"reason": reason}


def test_hostile_and_malformed_bodies_are_refused() -> None:
    with pytest.raises(UnsafeXmlError):
        parse_oai((FIXTURES / "ndl" / "xxe_external_entity.xml").read_bytes())
    with pytest.raises(XmlParseError) as info:
        parse_oai(b'<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><ListSets>')
    assert info.value.details["reason"] == "malformed"
