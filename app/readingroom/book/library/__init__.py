"""The scholar's library as the unit: folders, Zotero and calibre into book packages.

- :mod:`.sources`: candidates, folder scans, derived ids, the hash cache, SQLite snapshots,
  ``DATA/library/`` (sources for ``sync``, the add lock);
- :mod:`.zotero`, :mod:`.calibre`: read a reference manager's database (a private copy of it)
  into candidates with their metadata and CSL-JSON reference;
- :mod:`.batch`: ``add`` and ``sync`` — plan against the registry, build in worker
  processes, report;
- :mod:`.citation`: compact references, citation lines, CSL-JSON, BibTeX and RIS;
- :mod:`.manifest`: what a package records of its library, and the references it shows.
"""

__all__: list[str] = []
