"""The suite's core: shared by every server, knows nothing of any one upstream."""

__all__: list[str] = []
