"""The upstream of ndl-mcp: NDL Search over SRU (:mod:`.ndl_search`)."""

__all__: list[str] = []
