"""The upstream of jstage-mcp: the J-STAGE WebAPI's article search (``service=3``,
:mod:`.articles`) and volume list (``service=2``, :mod:`.issues`), one paced client for both
(:mod:`.courtesy`), the Atom feed and its status codes (:mod:`.feed`)."""

__all__: list[str] = []
