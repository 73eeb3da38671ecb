"""Helveticat, the Swiss National Library's catalogue (Ex Libris Alma), by two paths.

SRU (:mod:`.client`, :mod:`.query`) searches the whole catalogue server-side; OAI-PMH pages
through one collection (:mod:`.collections`). Records are read purely (:mod:`.marc` for MARC21,
:mod:`.dc` for Dublin Core) into one item shape (:mod:`.items`); :mod:`.service` answers with
envelopes and :mod:`.tools` declares the three tools.
"""

__all__: list[str] = []
