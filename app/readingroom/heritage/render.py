"""The Markdown rendering of an envelope (``response_format: markdown``).

The same envelope is always in ``structuredContent``; this is only its readable text: a
heading, the counts and the order, each item with its provenance tag (``[SIK-ISEA]``,
``[SNM]``, ``[NB]``, ``[Memobase]``, ``[Dodis]``) so the origin survives copying, the notes,
how to continue, and the source-and-licence footer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.envelope import Envelope

__all__ = ["TAGS", "render_markdown"]

TAGS: Mapping[str, str] = {
    "sik_isea": "[SIK-ISEA]", "snm": "[SNM]", "nb": "[NB]", "helveticat": "[NB]",
    "memobase": "[Memobase]", "dodis": "[Dodis]", "bundesarchiv": "[Bundesarchiv]",
    "landesmuseum": "[Landesmuseum]",
}
_SHOWN = ("life_dates", "canton", "vita", "creator", "date", "type", "description", "format",
          "status", "content", "reason", "rights_holder")


def _line(value: Any, limit: int = 280) -> str:
    if isinstance(value, list):
        value = "; ".join(str(v) for v in value if v not in (None, ""))
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _item(item: Mapping[str, Any]) -> list[str]:
    tag = TAGS.get(str(item.get("source")), f"[{item.get('source')}]")
    title = _line(item.get("title") or item.get("name") or item.get("id") or "(untitled)", 200)
    lines = [f"- {tag} **{title}**" + (f" (id `{item['id']}`)" if item.get("id") else "")]
    for key in _SHOWN:
        if item.get(key) not in (None, "", []):
            lines.append(f"  - {key.replace('_', ' ')}: {_line(item[key])}")
    for res in item.get("resources") or []:
        ds = "DataStore" if res.get("datastore_active") else "no DataStore"
        lines.append(f"  - resource `{res.get('id')}` {res.get('format') or ''} ({ds}): "
                     f"{_line(res.get('name'), 120)}")
    if item.get("permalink") or item.get("url"):
        lines.append(f"  - link: {item.get('permalink') or item.get('url')}")
    if item.get("licence"):
        lines.append(f"  - licence: {_line(item['licence'], 160)}")
    return lines


def render_markdown(env: Envelope) -> str:
    """Readable Markdown for ``env``, ending with the source-and-licence footer."""
    out = [f"## {env.operation}", ""]
    if env.error is not None:
        out += [f"**Error `{env.error.code}`:** {env.error.message}", ""]
        if env.error.remediation:
            out += [env.error.remediation, ""]
    result = env.result
    if result is not None:
        total = f" of {result.total}" if result.total is not None else ""
        out += [f"{result.returned}{total} results from position {result.start} "
                f"(match: {result.match_type or 'n/a'}).", ""]
    order = (env.data or {}).get("order")
    if order:
        out += [f"Order: {order}", ""]
    for item in env.items:
        out += _item(item)
    if env.items:
        out.append("")
    for d in env.diagnostics:
        out.append(f"> {d.level}: {d.message}" + (f" ({d.hint})" if d.hint else ""))
    if env.diagnostics:
        out.append("")
    data = env.data or {}
    if result is not None and result.has_more:
        nxt = data.get("next_offset")
        cursor = data.get("next_cursor")
        how = (f"pass `cursor: {cursor}`" if cursor else
               f"pass `offset: {nxt}`" if nxt is not None else "ask per source")
        out += [f"More results are available: {how}.", ""]
    out += ["---", "**Sources & licences**"]
    for s in env.sources:
        out.append(f"- {TAGS.get(s.id, s.id)} {s.name}: {s.licence} ({s.status}) - {s.url}")
    out += [f"- {a}" for a in env.attribution]
    if env.receipt is not None:
        out.append(f"- receipt {env.receipt.query_hash[:12]}"
                   f"{' (in the ledger)' if env.receipt.deposited else ''}")
    return "\n".join(out) + "\n"
