"""Reciprocal-rank fusion: the k=60 arithmetic, what each record says, stable tie-breaks."""

from __future__ import annotations

import pytest

from readingroom.book.search.fusion import RRF_K, rrf


def test_score_is_the_sum_of_reciprocal_ranks_with_k_60():
    fused = {f.rowid: f for f in rrf({"lexical": [5, 7], "semantic": [7, 9]})}
    assert RRF_K == 60
    assert fused[7].score == pytest.approx(1 / 62 + 1 / 61)
    assert fused[5].score == pytest.approx(1 / 61)
    assert fused[7].ranks == {"lexical": 2, "semantic": 1}
    assert fused[7].matched_by == ["lexical", "semantic"]
    assert fused[9].matched_by == ["semantic"]


def test_found_by_both_outranks_found_first_by_one():
    assert rrf({"lexical": [1, 2], "semantic": [3, 2]})[0].rowid == 2


def test_ties_break_on_best_rank_then_lexical_first():
    # 8 and 4 are both 1st in one list, 6 and 3 both 2nd: lexical's comes first each time,
    # whatever the rowids say.
    fused = rrf({"lexical": [8, 6], "semantic": [4, 3]})
    assert [f.rowid for f in fused] == [8, 4, 6, 3]
    # Equal sums from different rank pairs: the better best rank comes first.
    fused = rrf({"lexical": [1, 2, 3], "semantic": [3, 2, 1]})
    assert [f.rowid for f in fused] == [1, 3, 2]


def test_the_order_does_not_depend_on_input_iteration_details():
    a = rrf({"lexical": [3, 1, 2], "semantic": [2, 3]})
    b = rrf({"lexical": [3, 1, 2], "semantic": [2, 3]})
    assert [(f.rowid, f.score, f.ranks) for f in a] == [(f.rowid, f.score, f.ranks) for f in b]


def test_a_repeated_rowid_counts_at_its_best_place_and_k_is_checked():
    fused = rrf({"lexical": [4, 4, 5]})
    assert [(f.rowid, f.ranks) for f in fused] == [(4, {"lexical": 1}), (5, {"lexical": 3})]
    with pytest.raises(ValueError):
        rrf({"lexical": [1]}, k=0)
    assert rrf({}) == [] and rrf({"lexical": []}) == []
