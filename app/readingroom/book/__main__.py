"""``python -m readingroom.book``: the book-agent command line."""

import sys

from .cli import main

sys.exit(main())
