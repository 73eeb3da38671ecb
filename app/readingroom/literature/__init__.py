"""literature-search-mcp: seven scholarly providers searched at once, deduplicated and fused.

``SERVER`` (added with the server module) is what the rest of the suite knows about it. The
record model every provider produces is :mod:`.models`; the provider interface is
:mod:`.providers.base`.
"""

from __future__ import annotations

__all__: list[str] = []
