"""The suite's response builders: credit, refusal before sending, failure after sending."""

from __future__ import annotations

from readingroom.core import responses
from readingroom.core.envelope import Envelope, Level, QueryInfo, SearchedFor, SourceStatus
from readingroom.core.errors import Code, CoreError

A = responses.Source(id="a", name="Provider A", licence="CC0", url="https://a.invalid/",
                     credit="Data: Provider A (CC0).")
B = responses.Source(id="b", name="Provider B", licence="CC BY 4.0", url="https://b.invalid/",
                     credit="Data: Provider B (CC BY 4.0).")


def test_credit_names_every_source_once_with_its_status():
    env = responses.credit(Envelope(server="toy", operation="op"), [A, B, A], SourceStatus.ok)
    assert [s.id for s in env.sources] == ["a", "b", "a"]
    assert env.attribution == [A.credit, B.credit]
    assert {s.status for s in env.sources} == {"ok"}


def test_a_refusal_sent_nothing_so_every_source_was_skipped():
    err = CoreError(Code.PROVIDER_NOT_PERMITTED, "x is not declared")
    env = responses.refused("toy", "op", err, sources=[A], capabilities=["a", "b"],
                            query=QueryInfo(input={"providers": ["x"]}))
    assert env.error.code == "PROVIDER_NOT_PERMITTED"
    assert env.error.available_capabilities == ["a", "b"]
    assert [(s.id, s.status) for s in env.sources] == [("a", "skipped")]
    assert env.attribution == [A.credit] and env.query.input == {"providers": ["x"]}


def test_a_failure_after_sending_keeps_what_was_asked_and_says_what_the_code_means():
    asked = Envelope(server="toy", operation="op",
                     searched_for=SearchedFor(terms=[], script="none", matching="all"),
                     query=QueryInfo(input={"q": "x"}, normalized="q=x"))
    asked.diagnose(Level.warning, Code.SCRIPT_LATIN_QUERY, "romanised")
    limited = responses.failed_after_send(asked, CoreError(Code.RATE_LIMITED, "429"),
                                          sources=[A, B])
    assert limited.error.code == "RATE_LIMITED" and limited.result is None
    assert limited.searched_for == asked.searched_for and limited.query == asked.query
    assert [d.code for d in limited.diagnostics] == ["SCRIPT_LATIN_QUERY"]
    assert {s.status for s in limited.sources} == {"rate_limited"}
    broken = responses.failed_after_send(asked, CoreError(Code.TRANSPORT_ERROR, "reset"),
                                         sources=[A])
    assert broken.sources[0].status == "error"


def test_the_status_of_every_error_code_is_defined():
    for code in Code:
        if code.is_error:
            assert responses.status_for(code) in set(SourceStatus)
    assert responses.status_for(Code.INVALID_INPUT) is SourceStatus.skipped
