"""Hand-made books for the Book Skill tests, and readers of a built skill."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from readingroom.book.skill.build import SkillBook, SkillEntry
from readingroom.book.skill.validate import parse_frontmatter, split_skill_md

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def german_pdf_book() -> SkillBook:
    """A PDF-like book: page labels i–iv then 1–20, a scanned cover, a split section."""
    records = [
        SkillEntry("r0001", ("Vorwort",), 1, 1, "ii", "ii", 1520),
        SkillEntry("r0002", ("Inhaltsverzeichnis",), 2, 3, "iii", "iv", 2210),
        SkillEntry("r0003", ("1 Grundlagen",), 4, 4, "1", "1", 800),
        SkillEntry("r0004", ("1 Grundlagen", "1.1 Mengen und Abbildungen"), 4, 6, "1", "3", 6400),
        SkillEntry("r0005", ("1 Grundlagen", "1.2 Metrische Räume"), 7, 9, "4", "6", 8000),
        SkillEntry("r0005-2", ("1 Grundlagen", "1.2 Metrische Räume"), 9, 10, "6", "7", 3100),
        SkillEntry("r0006", ("1 Grundlagen", "1.2 Metrische Räume", "1.2.1 Offene Mengen"),
                   10, 11, "7", "8", 2900),
        SkillEntry("r0007", ("2 Topologische Räume",), 12, 12, "9", "9", 500),
        SkillEntry("r0008", ("2 Topologische Räume", "2.1 Stetigkeit | Homöomorphismen"),
                   12, 15, "9", "12", 9100),
        SkillEntry("r0009", ("2 Topologische Räume", "2.2 *Kompaktheit* & [Zusammenhang]"),
                   16, 19, "13", "16", 7600),
        SkillEntry("r0010", ("Literatur",), 20, 21, "17", "18", 2400),
        SkillEntry("r0011", ("Index",), 22, 23, "19", "20", 3900),
    ]
    return SkillBook(
        book_id="geometrie-topologie",
        title="Einführung in die Geometrie und Topologie: Räume, Flächen & Knoten",
        authors=("Jürgen Müller", "Anna Schäfer"),
        language="de",
        format="pdf",
        package_version=3,
        source_name="Geometrie und Topologie (Müller, Schäfer).pdf",
        source_sha256="c0d7752ef72ae12af410f65ba6545c6c29abc9f98eca24309ddeb2d896043056",
        unit_count=24,
        unit_kind="pdf_page",
        records=records,
        capabilities={"text_layer_units": 23, "no_text_layer_units": [0], "renderable": True,
                      "epub_images": 0, "vertical_units": []},
        tool_version="0.1.0",
    )


def japanese_epub_book() -> SkillBook:
    """An EPUB-like book: Japanese title and headings, vertical chapters, a few images."""
    numerals = ["一", "二", "三", "四", "五", "六", "七", "八", "九", "十", "十一"]
    records = [
        SkillEntry("r0001", ("表紙",), 0, 0, None, None, 12),
        SkillEntry("r0002", ("はじめに",), 1, 1, None, None, 830),
    ]
    records += [
        SkillEntry(f"r{i + 3:04d}", ("吾輩は猫である", n), i + 2, i + 2, None, None,
                   20000 + 1000 * i)
        for i, n in enumerate(numerals)
    ]
    records += [
        SkillEntry("r0014", ("解説", "夏目漱石と『猫』"), 13, 13, None, None, 4200),
        SkillEntry("r0015", ("奥付",), 14, 14, None, None, 310),
    ]
    return SkillBook(
        book_id="wagahai-wa-neko",
        title="吾輩は猫である",
        authors=("夏目 漱石",),
        language="ja",
        format="epub",
        package_version=1,
        source_name="吾輩は猫である.epub",
        source_sha256="9f2c" * 16,
        unit_count=15,
        unit_kind="epub_chapter",
        records=records,
        capabilities={"text_layer_units": 15, "no_text_layer_units": [], "renderable": False,
                      "epub_images": 3, "vertical_units": list(range(2, 13))},
        tool_version="0.1.0",
    )


def big_book(n: int = 2000) -> SkillBook:
    """A long PDF-like book: 40 parts, each with chapters and sections."""
    records = []
    for i in range(n):
        part, chapter, section = i // 50 + 1, (i // 10) % 5 + 1, i % 10 + 1
        path = (f"Teil {part}", f"Kapitel {part}.{chapter}",
                f"Abschnitt {part}.{chapter}.{section}")
        records.append(SkillEntry(f"r{i + 1:04d}", path, i, i, str(i + 1), str(i + 1), 3000))
    return replace(german_pdf_book(), book_id="big-book", title="Ein sehr langes Buch",
                   records=records, unit_count=n)


def frontmatter(folder: Path) -> dict[str, object]:
    head, _, _ = split_skill_md((folder / "SKILL.md").read_text(encoding="utf-8"))
    return parse_frontmatter(head)


def body_lines(folder: Path) -> list[str]:
    return split_skill_md((folder / "SKILL.md").read_text(encoding="utf-8"))[1]


GOOD_FRONT = """\
---
name: "my-book"
description: "A book. Use when asked about it."
compatibility: "Needs book-agent."
metadata:
  book-agent-book-id: "my-book"
---
"""


def make_skill(root: Path, text: str, name: str = "my-book",
               files: tuple[str, ...] = ("references/contents.md",)) -> Path:
    """A hand-made skill folder: ``SKILL.md`` from ``text``, and stub ``files``."""
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(text, encoding="utf-8", newline="\n")
    for rel in files:
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text("x\n", encoding="utf-8")
    return folder


def fm(**fields: str) -> str:
    """A frontmatter block of ``fields`` (underscores in keys become hyphens)."""
    lines = ["---"] + [f"{k.replace('_', '-')}: {v}" for k, v in fields.items()] + ["---", ""]
    return "\n".join(lines)
