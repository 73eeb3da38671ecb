"""One module per literature provider: a pure ``parse()`` and a paced client behind
:class:`~readingroom.literature.providers.base.Provider`."""

from __future__ import annotations

__all__: list[str] = []
