"""The Markdown rendering of an envelope (``response_format: markdown``, the default).

Markdown is what most models read, so it tells the same truth as the JSON: every field that
changes what a reader concludes is in the text too — the error and its remedy, the counts
(an unknown total says "total unknown", never nothing), the match type and any loosening,
each source's status (and per-source error), the order, a page filter or client-side filters,
every diagnostic, how to continue or why paging stopped, each item's own licence, and the
source-and-licence footer. Each item carries its provenance tag (``[SIK-ISEA]``, ``[SNM]``,
``[NB]``, ``[Memobase]``, ``[Dodis]``) so the origin survives copying. The same envelope is
always in ``structuredContent``.
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
_SHOWN = ("life_dates", "canton", "vita", "date", "edition", "places", "publishers",
          "extent", "types", "languages", "series", "subjects", "ddc", "notes", "type",
          "description", "format", "status", "content", "reason", "rights_holder", "rights",
          "datestamp", "group", "metadata_prefix", "note", "withheld_fields")
_NAMES = ("creators", "contributors")


def _line(value: Any, limit: int = 280) -> str:
    if isinstance(value, list):
        value = "; ".join(_line(v, limit) for v in value if v not in (None, ""))
    elif isinstance(value, Mapping):
        value = ", ".join(f"{k} {_line(v, limit)}" for k, v in value.items()
                          if v not in (None, "", []))
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _name(person: Any) -> str:
    """``Name (dates; roles; GND id)`` of a Helveticat creator or contributor."""
    if not isinstance(person, Mapping):
        return _line(person, 120)
    extra = [_line(person[k], 60) for k in ("dates", "roles") if person.get(k)]
    if person.get("gnd"):
        extra.append(f"GND {_line(person['gnd'], 40)}")
    name = _line(person.get("name") or "?", 120)
    return f"{name} ({'; '.join(extra)})" if extra else name


def _licence(value: Any) -> str:
    if isinstance(value, Mapping):
        parts = [str(value[k]) for k in ("name", "url") if value.get(k)]
        return _line(" - ".join(parts), 160)
    return _line(value, 160)


def _item(item: Mapping[str, Any]) -> list[str]:
    source = item.get("source")
    if source is None and item.get("set_spec"):  # a Helveticat collection (ListSets)
        tag = "[NB]"
        title = _line(item.get("name") or item["set_spec"], 200)
        lines = [f"- {tag} **{title}** (set_spec `{item['set_spec']}`)"]
    else:
        tag = TAGS.get(str(source), f"[{source}]")
        title = _line(item.get("title") or item.get("name") or item.get("id") or "(untitled)",
                      200)
        lines = [f"- {tag} **{title}**" + (f" (id `{item['id']}`)" if item.get("id") else "")]
    for key in _NAMES:
        people = item.get(key)
        if isinstance(people, list) and people:
            lines.append(f"  - {key}: {'; '.join(_name(p) for p in people[:12])}"
                         + (f" (+{len(people) - 12} more)" if len(people) > 12 else ""))
    for key in _SHOWN:
        if item.get(key) not in (None, "", []):
            lines.append(f"  - {key.replace('_', ' ')}: {_line(item[key])}")
    identifiers = item.get("identifiers")
    if isinstance(identifiers, Mapping) and identifiers:
        lines.append(f"  - identifiers: {_line(identifiers)}")
    for res in item.get("resources") or []:
        if not isinstance(res, Mapping):
            continue
        ds = "DataStore" if res.get("datastore_active") else "no DataStore"
        lines.append(f"  - resource `{res.get('id')}` {res.get('format') or ''} ({ds}): "
                     f"{_line(res.get('name'), 120)}"
                     + (f"; licence {_licence(res['licence'])}" if res.get("licence") else ""))
    if item.get("permalink") or item.get("url"):
        lines.append(f"  - link: {item.get('permalink') or item.get('url')}")
    if item.get("licence"):
        lines.append(f"  - licence: {_licence(item['licence'])}"
                     + (f" (from the {item['licence_from']})" if item.get("licence_from")
                        else ""))
    if item.get("licence_item") and item.get("licence_item") != item.get("licence"):
        lines.append(f"  - object's usage rule: {_licence(item['licence_item'])}")
    return lines


def _counts(env: Envelope) -> list[str]:
    result = env.result
    if result is None:
        return []
    match: str = result.match_type or "n/a"
    if match == "fuzzy":
        match = "fuzzy - no exact hits; results of one loosened search, check their relevance"
    counted = (f"{result.returned} of {result.total} results" if result.total is not None
               else f"{result.returned} results (total unknown)")
    return [f"{counted} from position {result.start} (match: {match}).", ""]


def _per_source(meta: Mapping[str, Any]) -> list[str]:
    per_source = meta.get("per_source")
    if not isinstance(per_source, Mapping) or not per_source:
        return []
    out = ["Per source:"]
    for name, info in per_source.items():
        if not isinstance(info, Mapping):
            continue
        tag = TAGS.get(str(name), str(name))
        if info.get("error"):
            err = info["error"]
            out.append(f"- {tag} {info.get('status')}: {err.get('code')} - "
                       f"{_line(err.get('message'), 200)} (result unknown, not empty)")
            continue
        total = info.get("total")
        line = (f"- {tag} {info.get('status')}: {info.get('returned', 0)}"
                f"{f' of {total}' if total is not None else ' (total unknown)'}, "
                f"match {info.get('match_type')}")
        if info.get("removed_by_filters"):
            line += f", {info['removed_by_filters']} removed by the filters"
        if info.get("reason"):
            line += f" ({info['reason']})"
        out.append(line)
    return [*out, ""]


def _data_notes(data: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    if data.get("order"):
        out.append(f"Order: {data['order']}"
                   + (f" - {data['order_note']}" if data.get("order_note") else ""))
    loosened = data.get("loosened")
    if isinstance(loosened, Mapping):
        out.append(f"Loosened once: `{loosened.get('from')}` found nothing, so "
                   f"`{loosened.get('to')}` was searched ({loosened.get('why')}).")
    page_filter = data.get("page_filter")
    if isinstance(page_filter, Mapping) and page_filter.get("note"):
        out.append(f"Page filter, not a search: {page_filter['note']}")
    meta = data.get("meta")
    if isinstance(meta, Mapping) and meta.get("clientside_filters"):
        filters = ", ".join(f"{k}={v}" for k, v in meta["clientside_filters"].items())
        out.append(f"Client-side filters applied to the fetched page only: {filters}.")
    if data.get("collection_size") is not None:
        out.append(f"Collection size: {data['collection_size']}.")
    if data.get("paging_stopped"):
        out.append(f"Paging stopped: {data['paging_stopped']} (see the warning below).")
    return [*out, ""] if out else []


def render_markdown(env: Envelope) -> str:
    """Readable Markdown for ``env``, ending with the source-and-licence footer."""
    out = [f"## {env.operation}", ""]
    if env.error is not None:
        out += [f"**Error `{env.error.code}`:** {env.error.message}", ""]
        if env.error.remediation:
            out += [env.error.remediation, ""]
        shown = {k: v for k, v in env.error.details.items()
                 if isinstance(v, str | int | float | bool) and k not in ("query",)}
        if shown:
            out += ["Details: " + "; ".join(f"{k}: {_line(v, 160)}" for k, v in shown.items()),
                    ""]
    out += _counts(env)
    data = env.data or {}
    meta = data.get("meta") if isinstance(data.get("meta"), Mapping) else {}
    out += _per_source(meta or {})
    out += _data_notes(data)
    for item in env.items:
        out += _item(item)
    if env.items:
        out.append("")
    for d in env.diagnostics:
        out.append(f"> {d.level}: {d.message}" + (f" ({d.hint})" if d.hint else ""))
    if env.diagnostics:
        out.append("")
    result = env.result
    if result is not None and result.has_more:
        nxt = data.get("next_offset")
        cursor = data.get("next_cursor")
        how = (f"pass `cursor: {cursor}` (with the same words)" if cursor else
               f"pass `offset: {nxt}`" if nxt is not None else
               "use the single-source tools to page further")
        out += [f"More results are available: {how}.", ""]
    if env.coverage_note:
        out += [f"Coverage: {env.coverage_note}", ""]
    out += ["---", "**Sources & licences**"]
    for s in env.sources:
        out.append(f"- {TAGS.get(s.id, s.id)} {s.name}: {s.licence} ({s.status}) - {s.url}")
    out += [f"- {a}" for a in env.attribution]
    if env.receipt is not None:
        out.append(f"- receipt {env.receipt.query_hash[:12]}"
                   f"{' (in the ledger)' if env.receipt.deposited else ''}")
    return "\n".join(out) + "\n"
