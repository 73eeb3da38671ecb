"""``book-agent add`` of a folder of generated books, against one ``init`` per book.

A folder of ``--books`` generated books (default 200; PDF and EPUB alternately, 20–300 pages
each, drawn at random; an EPUB "page" is ~1,800 characters of a chapter) is added with
``book-agent add --jobs 2`` (the command, as a user runs it). Figures, in one run:

1. total time of that ``add`` ÷ the sum of the times of ``book-agent init FILE`` run once per
   book (what a user had to do before) — target ≤ 0.7 with ``--jobs 2`` on 2 cores;
2. peak RSS of the whole ``add`` process tree (the command and its build workers, summed,
   sampled every 0.2 s from /proc) — target ≤ 600 MB;
3. a second ``add`` of the unchanged folder — target ≤ 2 s.

    python bench/book_add.py [--books 200] [--min-pages 20] [--max-pages 300] [--jobs 2]

Linux only (the RSS sampler reads /proc). Exits non-zero when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

os.environ.setdefault("PYMUPDF_MESSAGE", "fd:2")
CLI = [sys.executable, "-m", "readingroom.book"]
WORDS = ("lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit", "sed",
         "do", "eiusmod", "tempor", "incididunt", "ut", "labore", "et", "dolore", "magna",
         "aliqua", "topology", "manifold", "homotopy", "sheaf", "cohomology", "group", "ring",
         "field", "module", "vector", "space", "basis", "dimension", "kernel", "image")


def _text(rng: random.Random, chars: int) -> str:
    out, size = [], 0
    while size < chars:
        word = rng.choice(WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


def make_pdf(path: Path, pages: int, rng: random.Random) -> None:
    import pymupdf

    doc = pymupdf.open()
    for n in range(pages):
        page = doc.new_page(width=595, height=842)
        page.insert_textbox(pymupdf.Rect(60, 60, 535, 782), f"Page {n + 1}. " +
                            _text(rng, 1800), fontsize=10, fontname="helv")
    doc.set_toc([[1, f"Part {k + 1}", 1 + k * 20] for k in range(0, pages // 20)])
    doc.save(str(path))
    doc.close()


def make_epub(path: Path, pages: int, rng: random.Random, title: str) -> None:
    chapters = max(1, pages // 10)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        z.writestr("META-INF/container.xml", '<?xml version="1.0"?><container version="1.0" '
                   'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
                   '<rootfile full-path="OEBPS/content.opf" media-type="application/'
                   'oebps-package+xml"/></rootfiles></container>')
        items, spine, nav = [], [], []
        for c in range(chapters):
            body = "".join(f"<p>{_text(rng, 1800)}</p>" for _ in range(10))
            z.writestr(f"OEBPS/c{c}.xhtml", '<?xml version="1.0" encoding="utf-8"?><html '
                       f'xmlns="http://www.w3.org/1999/xhtml"><head><title>Chapter {c + 1}'
                       f'</title></head><body><h1>Chapter {c + 1}</h1>{body}</body></html>')
            items.append(f'<item id="c{c}" href="c{c}.xhtml" '
                         'media-type="application/xhtml+xml"/>')
            spine.append(f'<itemref idref="c{c}"/>')
            nav.append(f'<li><a href="c{c}.xhtml">Chapter {c + 1}</a></li>')
        z.writestr("OEBPS/nav.xhtml", '<?xml version="1.0" encoding="utf-8"?><html xmlns='
                   '"http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">'
                   '<head><title>Contents</title></head><body><nav epub:type="toc"><ol>'
                   + "".join(nav) + "</ol></nav></body></html>")
        z.writestr("OEBPS/content.opf", '<?xml version="1.0" encoding="utf-8"?><package '
                   'xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">'
                   '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier '
                   f'id="id">bench-{title}</dc:identifier><dc:title>{title}</dc:title>'
                   '<dc:language>en</dc:language></metadata><manifest><item id="nav" '
                   'href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
                   + "".join(items) + "</manifest><spine>" + "".join(spine) +
                   "</spine></package>")


def tree_rss(root: int) -> int:
    """Resident bytes of ``root`` and all its descendants (Linux /proc)."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            parents[int(entry)] = int(fields[1])
            rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    total, stack = 0, [root]
    seen = set()
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        total += rss.get(pid, 0)
        stack += [p for p, parent in parents.items() if parent == pid]
    return total


def run_sampled(argv: list[str]) -> tuple[float, int, subprocess.CompletedProcess]:
    """(wall seconds, peak tree RSS bytes, result)."""
    began = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    peak = 0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, tree_rss(proc.pid))
            stop.wait(0.2)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    out, _ = proc.communicate()
    stop.set()
    thread.join()
    wall = time.perf_counter() - began
    return wall, peak, subprocess.CompletedProcess(argv, proc.returncode, out, "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--books", type=int, default=200)
    parser.add_argument("--min-pages", type=int, default=20)
    parser.add_argument("--max-pages", type=int, default=300)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "books"
        folder.mkdir()
        began = time.perf_counter()
        pages_total = 0
        for n in range(args.books):
            pages = rng.randint(args.min_pages, args.max_pages)
            pages_total += pages
            if n % 2:
                make_epub(folder / f"book-{n:03d}.epub", pages, rng, f"Book {n}")
            else:
                make_pdf(folder / f"book-{n:03d}.pdf", pages, rng)
        print(f"generated {args.books} books, {pages_total:,} pages, in "
              f"{time.perf_counter() - began:.0f} s")
        single = 0.0
        for n, path in enumerate(sorted(folder.iterdir())):
            data = Path(tmp) / f"single-{n}"
            t0 = time.perf_counter()
            subprocess.run([*CLI, "--data-dir", str(data), "init", str(path)], check=True,
                           capture_output=True)
            single += time.perf_counter() - t0
        print(f"sum of {args.books} single `book-agent init` runs: {single:.1f} s")
        data = Path(tmp) / "data"
        argv = [*CLI, "--data-dir", str(data), "--json", "add", str(folder), "--jobs",
                str(args.jobs)]
        total, peak, done = run_sampled(argv)
        assert done.returncode == 0, done.stdout[-2000:]
        second, _peak2, again = run_sampled(argv)
        import json

        counts = json.loads(again.stdout)["data"]["counts"]
        assert counts["unchanged"] == args.books, counts
        ratio = total / single
        print(f"add --jobs {args.jobs}: {total:.1f} s; ÷ sum of single inits = {ratio:.2f} "
              "(target ≤ 0.7)")
        print(f"peak RSS of the add process tree: {peak / 2**20:.0f} MiB (target ≤ 600 MB)")
        print(f"second add of the unchanged folder: {second:.2f} s (target ≤ 2 s)")
        ok = ratio <= 0.7 and peak <= 600e6 and second <= 2.0
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
