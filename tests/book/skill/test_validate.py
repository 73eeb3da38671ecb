"""The Agent Skills rules: reading the frontmatter back, and every rule the validator checks."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from readingroom.book.skill.build import build_skill
from readingroom.book.skill.validate import (
    FrontmatterError,
    parse_frontmatter,
    split_skill_md,
    validate_skill,
)

from .books import GOOD_FRONT, fm, german_pdf_book, japanese_epub_book, make_skill

# --------------------------------------------------------------------------- the YAML reader


def test_the_reader_is_pyyaml_safe_load(tmp_path: Path) -> None:
    for make in (german_pdf_book, japanese_epub_book):
        folder = build_skill(make(), tmp_path)
        head, _, _ = split_skill_md((folder / "SKILL.md").read_text("utf-8"))
        assert yaml.safe_load("\n".join(head)) == parse_frontmatter(head)


def test_the_reader_reads_the_yaml_a_frontmatter_uses() -> None:
    text = """\
name: my-skill   # a comment
description: >
  Folded text
  on two lines.
license: 'It''s MIT'
allowed-tools: [Read, Grep]
compatibility: |-
  Line one
  line two
metadata:
  a: "x\\u00e9\\"y"
  b: 12
  c: 2024-01-01
  d: yes
  e: "12"
"""
    data = parse_frontmatter(text.split("\n"))
    assert data["name"] == "my-skill"
    assert data["description"] == "Folded text on two lines.\n"
    assert data["license"] == "It's MIT"
    assert data["allowed-tools"] == ["Read", "Grep"]
    assert data["compatibility"] == "Line one\nline two"
    meta = data["metadata"]
    assert isinstance(meta, dict)
    assert meta["a"] == 'xé"y' and meta["e"] == "12"
    assert not isinstance(meta["b"], str) and not isinstance(meta["c"], str)
    assert meta["d"] is True


@pytest.mark.parametrize("bad", [
    "description: Use when: asked",
    'description: "unterminated',
    "name: a\nname: b",
    "metadata:\n  a: x\n  a: y",
    'description: "bad \\q escape"',
    "- a list\n- not a mapping",
    "just a string",
])
def test_the_reader_refuses_what_is_not_a_yaml_mapping(bad: str) -> None:
    with pytest.raises(FrontmatterError):
        parse_frontmatter(bad.split("\n"))


@pytest.mark.parametrize(("text", "expected"), [
    # Valid YAML that the hand-written reader used to refuse: now read as every host reads it.
    ("  name: indented", {"name": "indented"}),
    ("name: [a, [b]]", {"name": ["a", ["b"]]}),
    ("description: &anchor x", {"description": "x"}),
    ("metadata:\n  a:\n    b: c", {"metadata": {"a": {"b": "c"}}}),
    ("", {}),
])
def test_the_reader_reads_valid_yaml_as_pyyaml_does(text: str, expected: dict) -> None:
    assert parse_frontmatter(text.split("\n")) == expected


def test_a_nested_metadata_value_breaks_the_rules(tmp_path: Path) -> None:
    text = GOOD_FRONT.replace('  book-agent-book-id: "my-book"\n',
                              '  book-agent-book-id:\n    deep: "my-book"\n')
    problems = validate_skill(make_skill(tmp_path, text + "\n# My book\n"))
    assert any(p.startswith("metadata: value of 'book-agent-book-id' must be a string")
               for p in problems)


def test_a_frontmatter_that_is_not_a_mapping_breaks_the_rules(tmp_path: Path) -> None:
    problems = validate_skill(make_skill(tmp_path, "---\n- a\n- b\n---\n# x\n"))
    assert len(problems) == 1 and problems[0].startswith("frontmatter: not valid YAML")


# --------------------------------------------------------------------------- the validator


def test_a_hand_made_good_skill_is_valid(tmp_path: Path) -> None:
    body = ("\n# My book\n\nSee [contents](references/contents.md#top), [site](https://x.org), "
            "[here](#usage), `[code](../not-a-link)` and \\[escaped](../no).\n"
            "```\n[fenced](../../no)\n```\n")
    assert validate_skill(make_skill(tmp_path, GOOD_FRONT + body)) == []



@pytest.mark.parametrize(("text", "name", "expected"), [
    (fm(description='"d"'), "my-book", "name: missing"),
    (fm(name='"my-book"'), "my-book", "description: missing"),
    (fm(name='"my-book"', description='"d"', author='"me"'), "my-book",
     "frontmatter: key 'author' is not allowed"),
    (fm(name='"' + "a" * 65 + '"', description='"d"'), "a" * 65, "name: must be 1-64"),
    (fm(name='""', description='"d"'), "my-book", "name: must be 1-64"),
    (fm(name='"My_Book"', description='"d"'), "My_Book", "name: only lowercase"),
    (fm(name='"-my-book"', description='"d"'), "-my-book", "must not start or end"),
    (fm(name='"my-book-"', description='"d"'), "my-book-", "must not start or end"),
    (fm(name='"my--book"', description='"d"'), "my--book", "two hyphens"),
    (fm(name='"other"', description='"d"'), "my-book", "must equal the folder name"),
    (fm(name='"claude-book"', description='"d"'), "claude-book", "reserved word 'claude'"),
    (fm(name='"anthropic-book"', description='"d"'), "anthropic-book",
     "reserved word 'anthropic'"),
    (fm(name="2024", description='"d"'), "2024", "name: must be a string"),
    (fm(name='"my-book"', description='""'), "my-book", "description: must not be empty"),
    (fm(name='"my-book"', description='"' + "x" * 1025 + '"'), "my-book",
     "at most 1024 characters"),
    (fm(name='"my-book"', description='"' + "word " * 61 + '"'), "my-book", "at most 60 words"),
    (fm(name='"my-book"', description='"Use for <b>books</b>"'), "my-book", "'<' or '>'"),
    (fm(name='"my-book"', description='"d"', compatibility='"' + "c" * 501 + '"'), "my-book",
     "compatibility: must be 1-500"),
    (fm(name='"my-book"', description='"d"', license='""'), "my-book", "license: must be"),
    (fm(name='"my-book"', description='"d"', metadata="\n  version: 3"), "my-book",
     "metadata: value of 'version' must be a string"),
    (fm(name='"my-book"', description='"d"', metadata='"flat"'), "my-book",
     "metadata: must be a map"),
    (fm(name='"my-book"', description="Use when: asked"), "my-book", "frontmatter: not valid"),
    ("# no frontmatter\n", "my-book", "frontmatter: not valid"),
    ('---\nname: "my-book"\n', "my-book", "no closing '---'"),
])
def test_every_frontmatter_rule_fails_on_a_bad_skill(
    tmp_path: Path, text: str, name: str, expected: str,
) -> None:
    problems = validate_skill(make_skill(tmp_path, text, name=name))
    assert any(expected in p for p in problems), problems


def test_missing_skill_md_fails(tmp_path: Path) -> None:
    (tmp_path / "my-book").mkdir()
    assert validate_skill(tmp_path / "my-book")[0].startswith("SKILL.md: missing")


def test_non_utf8_skill_md_fails(tmp_path: Path) -> None:
    folder = make_skill(tmp_path, GOOD_FRONT)
    (folder / "SKILL.md").write_bytes(GOOD_FRONT.encode("utf-8") + b"\xff\xfe")
    assert validate_skill(folder)[0].startswith("SKILL.md: cannot be read as UTF-8")


def test_body_of_500_lines_fails_and_499_passes(tmp_path: Path) -> None:
    ok = make_skill(tmp_path / "a", GOOD_FRONT + "line\n" * 499)
    bad = make_skill(tmp_path / "b", GOOD_FRONT + "line\n" * 500)
    assert validate_skill(ok) == []
    assert any(p.startswith("body: must be under 500 lines") for p in validate_skill(bad))


@pytest.mark.parametrize(("link", "expected"), [
    ("references/missing.md", "points at no file"),
    ("../outside.md", "leaves the skill folder"),
    ("references/../../x.md", "leaves the skill folder"),
    ("references/deep/x.md", "more than one level below"),
    ("/etc/passwd", "absolute path"),
    ("C:/Windows/x.md", "absolute path"),
])
def test_bad_relative_links_fail(tmp_path: Path, link: str, expected: str) -> None:
    files = ("references/contents.md", "references/deep/x.md")
    folder = make_skill(tmp_path, GOOD_FRONT + f"\nSee [it]({link}).\n", files=files)
    assert any(expected in p for p in validate_skill(folder)), validate_skill(folder)


def test_reference_style_and_html_links_are_checked_too(tmp_path: Path) -> None:
    body = '\n[ref]: ../x.md\n<img src="references/nope.png">\n'
    problems = validate_skill(make_skill(tmp_path, GOOD_FRONT + body))
    assert any("'../x.md'" in p for p in problems)
    assert any("'references/nope.png'" in p for p in problems)
