"""Frozen entry point of ``readingroom`` (the admin CLI)."""

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()
    from readingroom.cli import main

    sys.exit(main())
