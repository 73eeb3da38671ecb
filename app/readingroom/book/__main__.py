"""``python -m readingroom.book``: the book-agent command line."""

import sys

from .commands.cli import main

if __name__ == "__main__":  # not when a spawned worker process (OCR) imports this module
    sys.exit(main())
