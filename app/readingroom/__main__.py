"""``python -m readingroom``: the admin CLI."""

import sys

from .cli import main

sys.exit(main())
