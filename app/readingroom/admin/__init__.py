"""The ``readingroom`` admin command's pieces that are not core: command groups over core stores.

Each module adds one command group to the ``readingroom`` argument parser (``register``) and
runs it (``cmd_*``); the state it manages lives in :mod:`readingroom.core`.
"""

__all__: list[str] = []
