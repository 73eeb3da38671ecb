"""Frozen entry point of ``book-agent``."""

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()
    from readingroom.book.cli import main

    sys.exit(main())
