"""swiss-cultural-heritage-mcp: Swiss heritage collections behind one envelope.

SIKART artists (SIK-ISEA) and the Swiss National Museum's datasets through the opendata.swiss
CKAN API, the National Library's catalogue Helveticat (SRU and OAI-PMH, in
:mod:`.helveticat`), and the memory institutions Memobase and Dodis. ``SERVER`` is the whole of
what the rest of the suite knows about this server.

Standard library and ``core.declaration`` only: ``server_main`` reads this before fd 1 is
reserved. :mod:`.sources` holds the same variable names and defaults (a test keeps the two
equal).
"""

from __future__ import annotations

from ..core.declaration import ServerInfo, Setting

__all__ = ["CREDIT", "SERVER", "URL_SETTINGS"]

URL_SETTINGS: tuple[tuple[str, str, str], ...] = (
    ("CKAN_API_URL", "opendata.swiss CKAN action API (SIKART artists, SNM datasets)",
     "https://ckan.opendata.swiss/api/3/action"),
    ("HELVETICAT_SRU_URL", "Helveticat SRU endpoint (National Library catalogue search)",
     "https://helveticat.nb.admin.ch/view/sru/41SNL_51_INST"),
    ("HELVETICAT_OAI_URL", "Helveticat OAI-PMH endpoint (National Library collections)",
     "https://helveticat.nb.admin.ch/view/oai/41SNL_51_INST/request"),
    ("MEMOBASE_API_URL", "Memobase API (audiovisual heritage, JSON-LD/Hydra)",
     "https://api.memobase.ch"),
    ("DODIS_API_URL", "Dodis API (Diplomatic Documents of Switzerland, Solr)",
     "https://beta.dodis.ch/api"),
)
"""(variable, what it points at, default) for each upstream base URL."""

CREDIT = (
    "Data: SIKART (SIK-ISEA) and Swiss National Museum via opendata.swiss, Swiss National "
    "Library (Helveticat), Memobase, Dodis; each source's licence is in `sources`, each "
    "record's own licence on the record."
)

SERVER = ServerInfo(
    name="swiss-cultural-heritage-mcp",
    entry_point="readingroom.heritage.__main__:main",
    title="Swiss cultural heritage (SIKART, Swiss National Museum, National Library, "
    "Memobase, Dodis)",
    description="Search Swiss artists (SIKART), the Swiss National Museum's open datasets, the "
    "National Library's catalogue Helveticat, and the memory institutions Memobase and Dodis, "
    "each answer with its source's licence.",
    settings=tuple(
        Setting(name, f"{what} (HTTPS; its host joins the egress allow-list; tests and the "
                "self-test point it at a loopback fake)", default)
        for name, what, default in URL_SETTINGS
    ),
    credit=(CREDIT,),
    deadline_s=90.0,
    tool_prefix="heritage_",
    self_test="readingroom.heritage.selftest:run_self_test",
)
