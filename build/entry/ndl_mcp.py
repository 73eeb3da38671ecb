"""Frozen entry point of ``ndl-mcp``."""

import multiprocessing
import sys

if __name__ == "__main__":
    # First: a spawned child of a frozen app must not start a second server on our stdin.
    multiprocessing.freeze_support()
    from readingroom.ndl.__main__ import main

    sys.exit(main())
