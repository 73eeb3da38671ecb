"""An EPUB 2/3 → one raw-text unit per spine item, with the contents mapped onto them.

A tolerant, hardened reader on :mod:`zipfile` and :func:`~readingroom.core.xmlsafe.parse_xml`
(ebooklib enforces no limits and fails on a missing manifest item), in parts:

- :mod:`.container`: the ZIP limits (at most 10,000 entries, 512 MiB uncompressed as declared
  and as actually inflated over all reads, no entry over 1 MiB inflating more than 200:1) and
  the path rules (absolute, drive-letter, backslash or ``..`` entry names, and two entries of
  one name, refuse the book; hrefs that climb out of the container are ignored); nothing is
  ever extracted to disk;
- :mod:`.document`: one XML document, through ``parse_xml`` after
  :func:`~readingroom.core.xmlsafe.strip_doctype` (a DOCTYPE with an internal subset refuses
  the book as UNSAFE_SOURCE); HTML named entities become character references; a content
  document that is not well-formed XML is read with lxml's HTML parser, with a warning; one
  nested past the parser's 256 levels refuses the book (the rest of it would be lost); bytes
  not valid in the document's encoding are counted and warned per document;
- :mod:`.package`: the OPF (metadata, manifest, spine), DRM in ``META-INF/encryption.xml``
  (ENCRYPTED_SOURCE), images through the manifest;
- :mod:`.navigation`: the nav document or the NCX, mapped onto the chapters (``<span>``
  headings kept at their first linked child), and the page list (``#fragment`` or EPUB CFI);
- :mod:`.text`: XHTML → raw text (ruby keeps its base text), anchors, vertical writing, and
  in the same pass the Markdown blocks with their raw spans, furniture spans (page-break
  markers, note references, verse line numbers), page marks, and whether the chapter reads as
  a contents page;
- :mod:`.markdown`: the Markdown of leaves and containers (lists, quotes, tables, stanzas,
  notes as footnotes);
- :mod:`.reader`: :func:`read_epub`, which puts them together; a file the spine lists again
  is read once (a warning counts the repeats).
"""

from __future__ import annotations

from .container import MAX_ENTRIES, MAX_ENTRY_RATIO, MAX_TOTAL_BYTES
from .reader import read_epub

__all__ = ["MAX_ENTRIES", "MAX_ENTRY_RATIO", "MAX_TOTAL_BYTES", "read_epub"]
