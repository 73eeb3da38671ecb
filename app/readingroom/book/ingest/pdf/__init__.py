"""A PDF → one raw-text unit per page, with the outline mapped onto the pages (PyMuPDF).

In parts, like the EPUB reader:

- :mod:`.reader`: :func:`read_pdf`, page by page (the only part that imports PyMuPDF, inside
  the function), then what needs the whole book;
- :mod:`.layout`: page geometry, reading order and vertical Japanese columns (no PDF library);
- :mod:`.blocks`: a page's Markdown blocks, each tied to the raw span it renders;
- :mod:`.headings`: headings of a PDF without an outline, word spaces rebuilt;
- :mod:`.furniture`: running heads, folios and verse line numbers, told by position;
- :mod:`.contents`: printed contents pages;
- :mod:`.notes`: note markers and footnotes;
- :mod:`.tables`: ruled and aligned tables as Markdown tables.
"""

from __future__ import annotations

from .reader import IMAGE_ONLY_REMEDIATION, read_pdf

__all__ = ["IMAGE_ONLY_REMEDIATION", "read_pdf"]
