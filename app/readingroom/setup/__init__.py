"""``readingroom setup`` and ``readingroom self-test``: what the installer runs, driven by the
catalogue (nothing here names a server)."""

__all__: list[str] = []
