"""NDL refuses 'and'/'or' as separate words in a term, in any case; 'not' is fine.

Evidence (japan-apis.md 0 and 1.5): measured by the ckgerteis/ndl-mcp author on 2026-08-27,
correcting the seed's case-sensitive rule. The table below is the measured cases; when live
evidence changes, change RESERVED_WORD_RULES and this table together.
"""

from __future__ import annotations

import pytest

from readingroom.core.errors import Code, CoreError
from readingroom.ndl.cql import build_search_query, find_reserved_word

MEASURED = [
    ("cats and dogs", "and"),   # refused, lower case (the seed said it would pass)
    ("War and Peace", "and"),   # the seed's own example: refused after all
    ("War AND Peace", "and"),
    ("war OR peace", "or"),
    ("cats and", "and"),        # trailing: refused
    ("and cats", None),         # leading: tolerated
    ("cats not dogs", None),    # NOT is not reserved
    ("War NOT Peace", None),
    ("Thailand", None),         # letters inside words are fine
    ("Andorra", None),
    ("notation", None),
    ("organic andy", None),     # the spec's 'andy/organic' claim was not reproduced
    ("夏目 and 漱石", "and"),
    ("夏目\u3000or\u3000漱石", "or"),  # ideographic spaces separate words too
]


@pytest.mark.parametrize("term,word", MEASURED)
def test_measured_cases(term, word):
    assert find_reserved_word(term) == word


@pytest.mark.parametrize("field", ["title", "creator", "publisher", "subject", "anywhere"])
def test_refused_before_sending_naming_the_field(field):
    with pytest.raises(CoreError) as e:
        build_search_query({field: "cats and dogs"}, ["iss-ndl-opac"])
    assert e.value.code is Code.RESERVED_WORD_IN_QUERY
    assert e.value.details == {"field": field, "word": "and"}
