"""The Agent Skills rules a Book Skill obeys, and :func:`validate_skill`, which checks them.

The rules are the open Agent Skills specification plus the stricter checks of Anthropic's
``quick_validate``. The frontmatter is read back with PyYAML's safe loader, as the hosts that
load a skill read it, except that a key given twice is refused rather than silently
overwritten (two readers could disagree about which value wins).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import unquote

import yaml

__all__ = [
    "ALLOWED_KEYS",
    "MAX_BODY_LINES",
    "MAX_COMPATIBILITY_CHARS",
    "MAX_DESCRIPTION_CHARS",
    "MAX_DESCRIPTION_WORDS",
    "MAX_NAME_CHARS",
    "RESERVED_WORDS",
    "FrontmatterError",
    "parse_frontmatter",
    "read_frontmatter",
    "split_skill_md",
    "validate_skill",
]

ALLOWED_KEYS = ("name", "description", "license", "allowed-tools", "metadata", "compatibility")
"""The only top-level frontmatter keys the portable rules accept."""
MAX_NAME_CHARS = 64
"""Longest ``name``."""
MAX_DESCRIPTION_CHARS = 1024
"""Longest ``description``, in characters."""
MAX_DESCRIPTION_WORDS = 60
"""Codex lists every skill's description in about 8,000 characters: keep each one short."""
MAX_COMPATIBILITY_CHARS = 500
"""Longest ``compatibility``."""
MAX_BODY_LINES = 500
"""The body must stay *under* this many lines."""
RESERVED_WORDS = ("anthropic", "claude")
"""Words a skill's name must not contain."""


# --------------------------------------------------------------------------- reading SKILL.md


class FrontmatterError(ValueError):
    """SKILL.md has no frontmatter fences, or its frontmatter is not a YAML mapping."""


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a mapping that gives one key twice."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: list[object] = []
        for key_node, _value in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping", node.start_mark,
                    f"found duplicate key {key!r}", key_node.start_mark)
            seen.append(key)
        return super().construct_mapping(node, deep=deep)


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """A one-line account of a YAML error: the problem and its line, never the document."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or type(exc).__name__
    if mark is not None:
        return f"line {mark.line + 2}: {problem}"  # +2: the opening fence, 1-based lines
    return str(problem)


def parse_frontmatter(lines: list[str]) -> dict[str, object]:
    """Read the YAML of a frontmatter (the lines between the ``---`` fences).

    An empty frontmatter reads as an empty mapping.

    Raises:
        FrontmatterError: the text is not YAML, gives a key twice, or is not a mapping.
    """
    try:
        data = yaml.load("\n".join(lines), Loader=_StrictLoader)
    except yaml.YAMLError as exc:
        raise FrontmatterError(_yaml_problem(exc)) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontmatterError(f"the frontmatter is {_type_name(data)}, not a mapping of keys")
    return data


def split_skill_md(text: str) -> tuple[list[str], list[str], int]:
    """``(frontmatter lines, body lines, body's first line number)`` of a SKILL.md text.

    Raises:
        FrontmatterError: the text does not start with a ``---`` line or never closes it.
    """
    lines = text.replace("\r\n", "\n").split("\n")
    if not lines or lines[0].rstrip() != "---":
        raise FrontmatterError("line 1: SKILL.md must start with a '---' line")
    for end in range(1, len(lines)):
        if lines[end].rstrip() == "---":
            body = lines[end + 1:]
            if body and body[-1] == "":
                body = body[:-1]
            return lines[1:end], body, end + 2
    raise FrontmatterError("line 1: the frontmatter has no closing '---' line")


def read_frontmatter(folder: Path) -> dict[str, object] | None:
    """The frontmatter of ``folder/SKILL.md``, or None when it cannot be read."""
    try:
        text = (Path(folder) / "SKILL.md").read_text(encoding="utf-8")
        return parse_frontmatter(split_skill_md(text)[0])
    except (OSError, UnicodeDecodeError, ValueError):
        return None


# --------------------------------------------------------------------------- validating


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, datetime.date):
        return "a date"
    return type(value).__name__


def _check_name(name: object, folder: Path) -> list[str]:
    if not isinstance(name, str):
        return [f"name: must be a string (YAML reads {_type_name(name)})"]
    problems = []
    if not 1 <= len(name) <= MAX_NAME_CHARS:
        problems.append(f"name: must be 1-{MAX_NAME_CHARS} characters (is {len(name)})")
    if not re.fullmatch(r"[a-z0-9-]+", name):
        problems.append("name: only lowercase ASCII letters, digits and hyphens are allowed")
    if name.startswith("-") or name.endswith("-"):
        problems.append("name: must not start or end with a hyphen")
    if "--" in name:
        problems.append("name: must not contain two hyphens in a row")
    if name != folder.name:
        problems.append(f"name: must equal the folder name {folder.name!r} (is {name!r})")
    for word in RESERVED_WORDS:
        if word in name.lower():
            problems.append(f"name: must not contain the reserved word {word!r}")
    return problems


def _check_description(description: object) -> list[str]:
    if not isinstance(description, str):
        return [f"description: must be a string (YAML reads {_type_name(description)})"]
    problems = []
    if not description.strip():
        problems.append("description: must not be empty")
    if len(description) > MAX_DESCRIPTION_CHARS:
        problems.append(f"description: must be at most {MAX_DESCRIPTION_CHARS} characters "
                        f"(is {len(description)})")
    words = len(description.split())
    if words > MAX_DESCRIPTION_WORDS:
        problems.append(f"description: must be at most {MAX_DESCRIPTION_WORDS} words "
                        f"(is {words})")
    if "<" in description or ">" in description:
        problems.append("description: must not contain '<' or '>' (no XML tags)")
    return problems


def _check_optional(frontmatter: Mapping[str, object]) -> list[str]:
    problems = []
    if "compatibility" in frontmatter:
        value = frontmatter["compatibility"]
        if not isinstance(value, str):
            problems.append(f"compatibility: must be a string (YAML reads {_type_name(value)})")
        elif not 1 <= len(value) <= MAX_COMPATIBILITY_CHARS:
            problems.append(f"compatibility: must be 1-{MAX_COMPATIBILITY_CHARS} characters "
                            f"(is {len(value)})")
    if "license" in frontmatter:
        value = frontmatter["license"]
        if not isinstance(value, str) or not value.strip():
            problems.append("license: must be a non-empty string")
    if "allowed-tools" in frontmatter:
        value = frontmatter["allowed-tools"]
        if not (isinstance(value, str) or (
            isinstance(value, list) and all(isinstance(v, str) for v in value)
        )):
            problems.append("allowed-tools: must be a string or a list of strings")
    if "metadata" in frontmatter:
        value = frontmatter["metadata"]
        if not isinstance(value, dict):
            problems.append(f"metadata: must be a map of strings (YAML reads "
                            f"{_type_name(value)})")
        else:
            for key, item in value.items():
                if not isinstance(item, str):
                    problems.append(f"metadata: value of {key!r} must be a string (YAML reads "
                                    f"{_type_name(item)}; quote it)")
    return problems


_LINK_TARGET = re.compile(
    r"\[(?:[^\[\]]|\[[^\[\]]*\])*\]"  # [text], one level of nested brackets
    r"\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")  # (target "title")
_REF_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(\S+)")
_HTML_REF = re.compile(r"""<[A-Za-z][^>]*?\b(?:href|src)\s*=\s*["']([^"']+)["']""",
                       re.IGNORECASE)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def _outside_code(line: str) -> str:
    """``line`` with backslash escapes and code spans blanked out (same length)."""
    out: list[str] = []
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\" and i + 1 < len(line):
            out.append("  ")
            i += 2
        elif ch == "`":
            run = len(line[i:]) - len(line[i:].lstrip("`"))
            close = re.compile(rf"(?<!`)`{{{run}}}(?!`)").search(line, i + run)
            end = close.end() if close else i + run  # an unmatched run is literal text
            out.append(" " * (end - i))
            i = end
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _link_targets(body: list[str]) -> list[str]:
    """Link, image, reference and HTML targets in Markdown, outside code."""
    targets: list[str] = []
    fence: str | None = None
    for line in body:
        stripped = line.lstrip()
        marker = re.match(r"^(`{3,}|~{3,})", stripped)
        if fence is not None:
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                fence = None
            continue
        if marker:
            fence = marker.group(1)
            continue
        text = _outside_code(line)
        targets += [m.group(1).strip("<>") for m in _LINK_TARGET.finditer(text)]
        targets += [m.group(1) for m in _REF_DEF.finditer(text)]
        targets += [m.group(1) for m in _HTML_REF.finditer(text)]
    return targets


def _check_link(target: str, folder: Path) -> str | None:
    path = unquote(target.split("#", 1)[0].split("?", 1)[0])
    if not path:
        return None  # an anchor in this file
    if re.match(r"^[A-Za-z]:[\\/]", path) or path.startswith(("/", "\\")):
        return f"link: {target!r} is an absolute path; use a path relative to the skill"
    if _SCHEME.match(path):
        return None  # a URL, not a file of the skill
    parts = [p for p in re.split(r"[\\/]", path) if p not in ("", ".")]
    if ".." in parts:
        return f"link: {target!r} leaves the skill folder ('..')"
    if len(parts) > 2:
        return f"link: {target!r} is more than one level below the skill folder"
    resolved = folder.joinpath(*parts)
    if not resolved.is_file():
        return f"link: {target!r} points at no file in the skill"
    if not resolved.resolve().is_relative_to(folder.resolve()):
        return f"link: {target!r} resolves outside the skill folder"
    return None


def validate_skill(folder: Path) -> list[str]:
    """Every Agent Skills rule the skill in ``folder`` breaks; empty when it is valid.

    Rules: ``SKILL.md`` exists and is UTF-8; its frontmatter parses and has only the keys
    ``name, description, license, allowed-tools, metadata, compatibility``; ``name`` is 1-64
    of ``a-z0-9-`` with no leading, trailing or double hyphen, equals the folder name and holds
    neither "claude" nor "anthropic"; ``description`` is 1-1024 characters, at most 60 words,
    without ``<`` or ``>``; ``compatibility`` is 1-500 characters; ``metadata`` maps strings to
    strings; the body is under 500 lines; every relative link points at an existing file at
    most one level below the skill, never through ``..``.
    """
    folder = Path(folder)
    skill_md = folder / "SKILL.md"
    if not skill_md.is_file():
        return [f"SKILL.md: missing in {folder}"]
    try:
        text = skill_md.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [f"SKILL.md: cannot be read as UTF-8 ({exc})"]
    try:
        head, body, _ = split_skill_md(text)
        frontmatter = parse_frontmatter(head)
    except FrontmatterError as exc:
        return [f"frontmatter: not valid YAML or not readable ({exc})"]
    problems = []
    for key in frontmatter:
        if key not in ALLOWED_KEYS:
            problems.append(f"frontmatter: key {key!r} is not allowed (allowed: "
                            f"{', '.join(ALLOWED_KEYS)})")
    if "name" in frontmatter:
        problems += _check_name(frontmatter["name"], folder)
    else:
        problems.append("name: missing")
    if "description" in frontmatter:
        problems += _check_description(frontmatter["description"])
    else:
        problems.append("description: missing")
    problems += _check_optional(frontmatter)
    if len(body) >= MAX_BODY_LINES:
        problems.append(f"body: must be under {MAX_BODY_LINES} lines (is {len(body)})")
    for target in _link_targets(body):
        problem = _check_link(target, folder)
        if problem and problem not in problems:
            problems.append(problem)
    return problems
