"""The upstream of cinii-mcp: CiNii Research's OpenSearch v2 (:mod:`.opensearch`) and its CRID
records (:mod:`.crid`), one paced client for both (:mod:`.courtesy`), JSON-LD reading
(:mod:`.jsonld`)."""

__all__: list[str] = []
