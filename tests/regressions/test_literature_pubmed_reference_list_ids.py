"""PubMed efetch: a ReferenceList holds the cited papers' ArticleIds; only the article's own
``PubmedData/ArticleIdList`` children name it (biopython pubmed7.xml has dozens of foreign
PMIDs)."""

from __future__ import annotations

from readingroom.literature.upstreams import pubmed

BODY = (
    b"<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>29963580</PMID><Article>"
    b"<Journal><Title>J</Title></Journal><ArticleTitle>T.</ArticleTitle></Article>"
    b"</MedlineCitation><PubmedData><ReferenceList><Reference><ArticleIdList>"
    b'<ArticleId IdType="pubmed">11111111</ArticleId><ArticleId IdType="doi">10.9/ref</ArticleId>'
    b'<ArticleId IdType="pmc">PMC1</ArticleId></ArticleIdList></Reference></ReferenceList>'
    b"</PubmedData></PubmedArticle></PubmedArticleSet>"
)  # hand-made, shaped after the real file


def test_reference_ids_are_never_the_articles() -> None:
    [record] = pubmed.parse(BODY).records
    assert record.pmid == "29963580"
    assert record.doi is None and record.pmcid is None
