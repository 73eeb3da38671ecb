"""The embedded demo: a small book made from this project's own documentation.

``book-agent demo`` (and ``python run.py demo``) renders the project's docs into a PDF (with an
outline) and an EPUB, initialises both in the demo's own folder (one folder, emptied on every
run), searches them (Latin and Japanese), verifies a locator against the raw source text,
renders a page to PNG, reads an EPUB chapter, and names the files it made. No network, no user
data.
"""

from __future__ import annotations

import html
import io
import re
import shutil
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from ..core.envelope import Envelope
from ..core.errors import Code, CoreError

__all__ = ["DEMO_MARKER", "demo_folder", "make_demo_epub", "make_demo_pdf",
           "markdown_sections", "run_demo"]

DEMO_DOCS = ("architecture.md", "ndl-mcp.md")
DEMO_MARKER = ".book-agent-demo"
"""The file that marks a folder as the demo's own: only such a folder is emptied."""


def _demo_sources() -> list[tuple[str, str]]:
    """(name, Markdown) of the documents the demo book is made of."""
    folder = resources.files("readingroom.book").joinpath("demo_docs")
    return [(name, folder.joinpath(name).read_text(encoding="utf-8")) for name in DEMO_DOCS]


def _inline(text: str) -> str:
    text = html.escape(text)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    text = re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", text)
    return re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", text)


def markdown_sections(markdown: str) -> list[tuple[int, str, str]]:
    """Split Markdown into (level, heading, HTML body) sections (a small, sufficient subset)."""
    sections: list[tuple[int, str, list[str]]] = []
    body: list[str] = []
    para: list[str] = []
    in_code = False

    def flush() -> None:
        if para:
            body.append("<p>" + _inline(" ".join(para)) + "</p>")
            para.clear()

    for line in markdown.splitlines():
        if line.startswith("```"):
            flush()
            body.append("</pre>" if in_code else "<pre>")
            in_code = not in_code
            continue
        if in_code:
            body.append(html.escape(line))
            continue
        m = re.match(r"^(#{1,6})\s+(.*)$", line)
        if m:
            flush()
            body = []
            sections.append((len(m.group(1)), m.group(2).strip(), body))
            continue
        item = re.match(r"^\s*(?:[-*+]|\d+[.)])\s+(.*)$", line)
        if not line.strip():
            flush()
        elif item:
            flush()
            para.append("• " + item.group(1).strip())
        elif line.lstrip().startswith("|"):
            flush()
            body.append("<p>" + _inline(line.strip()) + "</p>")
        else:
            para.append(line.strip())
    flush()
    if not sections:
        sections.append((1, "Document", body))
    return [(lv, title, "\n".join(b)) for lv, title, b in sections]


def make_demo_pdf(path: Path) -> Path:
    """Render the demo documents into a PDF with an outline; each section starts a page."""
    import pymupdf

    toc: list[list] = []
    pages = 0
    out = pymupdf.open()
    for name, markdown in _demo_sources():
        for level, title, body in markdown_sections(markdown):
            part = io.BytesIO()  # in memory: the demo leaves no temporary file behind
            writer = pymupdf.DocumentWriter(part)
            story = pymupdf.Story(f"<h{min(level, 3)}>{_inline(title)}</h{min(level, 3)}>"
                                  f"{body}", user_css="body {font-size: 10pt;}")
            box = pymupdf.paper_rect("a5")
            more = 1
            while more:
                dev = writer.begin_page(box)
                more, _ = story.place(pymupdf.Rect(box.x0 + 36, box.y0 + 36, box.x1 - 36,
                                                   box.y1 - 36))
                story.draw(dev)
                writer.end_page()
            writer.close()
            with pymupdf.open("pdf", part.getvalue()) as section_pdf:
                toc.append([min(level, 3) if toc else 1, title, pages + 1])
                out.insert_pdf(section_pdf)
                pages += section_pdf.page_count
        del name
    out.set_toc(_monotonic_levels(toc))
    out.set_metadata({"title": "readingroom — the project's own documentation",
                      "author": "readingroom contributors"})
    out.save(path)
    out.close()
    return path


def _monotonic_levels(toc: list[list]) -> list[list]:
    """PDF outlines may not skip levels downwards; clamp each level to previous + 1."""
    fixed, prev = [], 0
    for level, title, page in toc:
        level = max(1, min(level, prev + 1))
        fixed.append([level, title, page])
        prev = level
    return fixed


def make_demo_epub(path: Path) -> Path:
    """The demo documents as an EPUB 3, one chapter per document (written with ebooklib)."""
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("readingroom-demo")
    book.set_title("readingroom — documentation (EPUB)")
    book.set_language("en")
    book.add_author("readingroom contributors")
    chapters = []
    for i, (name, markdown) in enumerate(_demo_sources(), start=1):
        sections = markdown_sections(markdown)
        body = "".join(f"<h{min(lv, 3)} id='s{n}'>{html.escape(t)}</h{min(lv, 3)}>{b}"
                       for n, (lv, t, b) in enumerate(sections))
        chapter = epub.EpubHtml(title=sections[0][1], file_name=f"chap_{i}.xhtml", lang="en")
        chapter.content = f"<html><body>{body}</body></html>"
        book.add_item(chapter)
        chapters.append(chapter)
        del name
    book.toc = chapters
    book.spine = ["nav", *chapters]
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    epub.write_epub(str(path), book)
    return path


def demo_folder() -> Path:
    """Where the demo writes unless told otherwise: one folder in the user's cache, reused.

    ``~/.cache/readingroom/book-agent-demo`` on Linux, ``~/Library/Caches/readingroom/
    book-agent-demo`` on macOS, ``%LOCALAPPDATA%\\readingroom\\Cache\\book-agent-demo`` on
    Windows (the platform's user cache folder).
    """
    import platformdirs

    return platformdirs.user_cache_path("readingroom", appauthor=False) / "book-agent-demo"


def _fresh_folder(root: Path) -> None:
    """Empty ``root`` for a new run: only a folder the demo made (its marker inside) is removed."""
    from .paths import unusable

    if root.exists() or root.is_symlink():
        if not root.is_dir() or root.is_symlink():
            raise unusable(root, "The demo folder", "it is not a folder")
        if any(root.iterdir()) and not (root / DEMO_MARKER).is_file():
            raise unusable(root, "The demo folder", "it holds files the demo did not make "
                           "(choose an empty or new folder)")
        shutil.rmtree(root)
    root.mkdir(parents=True)
    (root / DEMO_MARKER).write_text("Made by `book-agent demo`; replaced on every run.\n",
                                    encoding="utf-8")


def run_demo(*, keep: Path | None = None, say: Callable[[str], None] = print) -> Envelope:
    """Run the demo end to end and return a report envelope; raises on any failed check.

    The demo writes into one folder, ``keep`` or :func:`demo_folder`, emptied at the start of
    every run (only a folder it made itself), so runs never pile up; the envelope names the
    folder and the files in it.
    """
    from .service import BookService, envelope_data

    root = Path(keep) if keep else demo_folder()
    _fresh_folder(root)
    sources = root / "sources"
    sources.mkdir()
    service = BookService(root / "data")
    checks: list[dict[str, object]] = []

    def check(name: str, ok: bool, detail: str) -> None:
        checks.append({"check": name, "ok": bool(ok), "detail": detail})
        say(f"  {'PASS' if ok else 'FAIL'}  {name}: {detail}")
        if not ok:
            raise CoreError(Code.INTERNAL_ERROR, f"demo check failed: {name}: {detail}",
                            remediation=f"Inspect the demo folder {root}.")

    say(f"book-agent demo in {root} (replaced on every run)")
    pdf = make_demo_pdf(sources / "readingroom-docs.pdf")
    epub_path = make_demo_epub(sources / "readingroom-docs.epub")
    for book_id, src in (("demo-pdf", pdf), ("demo-epub", epub_path)):
        env = service.init(src, book_id=book_id)
        d = env.data or {}
        check(f"init {book_id}", d.get("records", 0) > 0,
              f"{d['units']} units, {d['records']} records, version {d['version']}")

    hits = service.search("demo-pdf", "receipt ledger hash chain", top_k=3).items
    check("search (Latin)", bool(hits), f"top hit {hits[0]['record_id']} "
          f"{' > '.join(hits[0]['heading_path'])}" if hits else "no hit")
    jp = service.search("demo-pdf", "国会", top_k=3).items
    check("search (two-character Japanese)", bool(jp),
          f"top hit {jp[0]['record_id']}" if jp else "no hit")

    record = service.read_entry("demo-pdf", hits[0]["record_id"]).items[0]
    sentence = _a_sentence(record["text"])
    located = service.locate("demo-pdf", text=sentence)
    status = (located.data or {}).get("status")
    check("locate --text", status == "verified", f"{status}: «{sentence[:60]}»")
    locator = located.items[0]["locator"]
    read = service.read_source(locator)
    label = locator.get("page_label")
    check("read-source", envelope_data(read)["verified"],
          f"page index {locator['page_index']}" + (f" (p. {label})" if label else ""))

    env, png = service.render_page("demo-pdf", locator["page_index"])
    png_path = root / f"page-{locator['page_index']}.png"
    png_path.write_bytes(png)
    page = envelope_data(env)
    check("render-page", png.startswith(b"\x89PNG"), f"{page['width']}×"
          f"{page['height']} PNG, {len(png)} bytes → {png_path}")

    ehits = service.search("demo-epub", "undertakings", top_k=1).items
    check("search EPUB", bool(ehits), f"top hit {ehits[0]['record_id']}" if ehits else "none")
    eloc = service.locate("demo-epub", record_id=ehits[0]["record_id"]).items[0]["locator"]
    check("EPUB locator", eloc["kind"] == "epub_chapter", f"chapter {eloc.get('href')}")

    skill = envelope_data(service.skill_file("demo-pdf", "SKILL.md"))
    check("Book Skill", skill["text"].startswith("---"), f"skill {skill['skill_name']}")
    pkg = service.registry.get("demo-pdf")
    files = {"the PDF made from the docs": str(pdf), "the EPUB made from the docs":
             str(epub_path), "the page rendered to PNG": str(png_path),
             "the PDF's Markdown view": str(pkg.file("book.md")),
             "the PDF's Book Skill": str(pkg.skill_dir() / "SKILL.md"),
             "the data folder (both packages)": str(root / "data")}
    return Envelope(server="book-agent", operation="book_demo", items=checks,
                    data={"folder": str(root), "data_dir": str(root / "data"),
                          "png": str(png_path), "files": files,
                          "ok": all(c["ok"] for c in checks)})


def _a_sentence(text: str) -> str:
    """A distinctive stretch of text from a record, to locate again."""
    words = " ".join(text.split()).split(" ")
    longest = max((" ".join(words[i:i + 12]) for i in range(0, max(len(words) - 12, 1), 6)),
                  key=len)
    return longest
