"""Library-wide search (issue 20 §4): 300 generated books, one query across all of them.

The library: ``--books`` (300) generated Markdown books of ``--pages`` (300) pages each, about
1,500 characters a page (≈ 90,000 pages), registered through the ordinary ``BookService.init``
(Markdown, so no PDF is rendered: each page is a ``##`` section, a ``#`` chapter every ten
pages; every tenth book mixes Japanese sentences in). Words come from a shared Zipf-like
vocabulary (common and rare words, like real text) plus twenty topic words of the book's own
(a word common in one book and rare in the library). Then the library index is built once,
from the books' own index files, and timed.

Measured in one run, over MCP (a real ``book-agent mcp`` stdio subprocess serving every book;
request written to answer parsed), the same mixed queries (single words rare to common, a
book's topic word, two to four words, quoted phrases taken from the text, Japanese words and
phrases, chapter titles):

- **baseline**: ``book_search`` with ``book_id`` of one of those books (book-000), and
- **library**: ``book_search`` without ``book_id``, every book at once,

interleaved query by query (so both see the same load); p50 and p95 of each and their ratio,
the absolute library p95 (target <= 50 ms) and the server's peak RSS after every query
(target <= 500 MB). For information: the library search in process (the Core alone), the
first query of a fresh server, the time ``init`` of one more book adds to keep the index
current, and the alternative the library index replaces — searching each book's own index and
merging the lists (300 open indexes; per-book scores, which do not compare) — on a few
queries.

``--keep DIR`` keeps the generated library in DIR and reuses it when its parameters match
(generating it takes minutes). Linux reads peak RSS from /proc; elsewhere it says so. Exits
non-zero when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "app"), str(ROOT), str(Path(__file__).resolve().parent)]

from book_mcp import pct, peak_rss_mb, server_argv  # noqa: E402
from book_search import _japanese_vocab, _latin_vocab, _zipf_pick  # noqa: E402
from readingroom.core.rawstdio import RawStdioClient  # noqa: E402

TARGET_P95_MS = 50.0
TARGET_RSS_MB = 500.0
PAGE_CHARS = 1500
_KANA = "のにをはがでとへもやからまでより"
_ENDINGS = ["である。", "について考える。", "を読んだ。", "が始まった。"]


def _vocab() -> tuple[list[str], list[str]]:
    rng = random.Random(20)
    return _latin_vocab(rng, 8000), _japanese_vocab(rng, 600)


def book_id(n: int) -> str:
    """The id of generated book ``n``."""
    return f"book-{n:03d}"


def topic_words(n: int) -> list[str]:
    """Words of book ``n`` alone."""
    return [f"topic{n}x{i}" for i in range(20)]


def book_text(n: int, pages: int) -> str:
    """Generated book ``n``: front matter, ``pages`` sections of about PAGE_CHARS."""
    latin, japanese = _vocab()
    rng = random.Random(1000 + n)
    own = topic_words(n)
    mixed = n % 10 == 9
    out = ["---", f"title: Generated Book {n}", f"author: Writer {n % 37}", "---", ""]
    for p in range(pages):
        if p % 10 == 0:
            out += [f"# Chapter {p // 10 + 1} {' '.join(rng.choice(latin[:2000]) for _ in '12')}",
                    ""]
        else:
            out += [f"## Page {p + 1}", ""]
        size = 0
        while size < PAGE_CHARS:
            if mixed and rng.random() < 0.4:
                sentence = "".join(_zipf_pick(rng, japanese) + rng.choice(_KANA)
                                   for _ in range(rng.randint(3, 6))) + rng.choice(_ENDINGS)
            else:
                words = [rng.choice(own) if rng.random() < 0.04 else _zipf_pick(rng, latin)
                         for _ in range(rng.randint(6, 16))]
                sentence = " ".join(words).capitalize() + ". "
            out.append(sentence)
            size += len(sentence)
            if rng.random() < 0.2:
                out.append("\n\n")
        out += ["", ""]
    return "\n".join(out)


def _init_book(args: tuple[str, int, int]) -> float:
    from readingroom.book.service import BookService

    data, n, pages = args
    source = Path(data).parent / "sources" / f"{book_id(n)}.md"
    source.write_text(book_text(n, pages), encoding="utf-8")
    began = time.perf_counter()
    BookService(data).init(source, book_id=book_id(n))
    return time.perf_counter() - began


def prepare(folder: Path, books: int, pages: int, jobs: int) -> tuple[Path, bool]:
    """The data folder of the generated library (made unless one with these parameters is
    there); whether it was reused."""
    data = folder / "data"
    marker = folder / "library.json"
    wanted = {"books": books, "pages": pages, "page_chars": PAGE_CHARS, "version": 1}
    if marker.is_file() and json.loads(marker.read_text()) == wanted:
        return data, True
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "sources").mkdir(parents=True)
    began = time.perf_counter()
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        spent = list(pool.map(_init_book, [(str(data), n, pages) for n in range(books)]))
    print(f"generated and registered {books} books of {pages} pages in "
          f"{time.perf_counter() - began:.0f} s ({jobs} processes; init {pct(spent, 0.5):.2f} s "
          "median)")
    shutil.rmtree(folder / "sources")
    marker.write_text(json.dumps(wanted))
    return data, False


def queries(books: int, n: int, seed: int = 11) -> list[str]:
    """The mixed query set (see the module docstring)."""
    latin, japanese = _vocab()
    rng = random.Random(seed)
    out: list[str] = []
    for i in range(n):
        kind = i % 10
        if kind in (0, 1, 2):  # one word, rare to common
            out.append(latin[min(len(latin) - 1, int(len(latin) * rng.random() ** 2))])
        elif kind == 3:  # a word of one book
            out.append(rng.choice(topic_words(rng.randrange(books))))
        elif kind in (4, 5):  # two to four words, a common one among them
            words = [rng.choice(latin[:60])] + [_zipf_pick(rng, latin)
                                               for _ in range(rng.randint(1, 3))]
            rng.shuffle(words)
            out.append(" ".join(words))
        elif kind == 6:  # a quoted phrase from the text of some page
            text = book_text(rng.randrange(books), 1)
            words = [w for w in text.split("---")[-1].replace(".", " ").split()
                     if w.isascii() and w.isalpha()][4:]
            at = rng.randrange(max(1, len(words) - 3))
            out.append('"' + " ".join(words[at:at + rng.randint(2, 3)]) + '"')
        elif kind == 7:  # Japanese: a word, or a run (a phrase of bigrams)
            out.append(rng.choice(japanese) if rng.random() < 0.5 else
                       rng.choice(japanese) + rng.choice(_KANA) + rng.choice(japanese))
        elif kind == 8:
            out.append(f"Chapter {rng.randint(1, 30)}")
        else:
            topic = rng.choice(topic_words(rng.randrange(books)))
            out.append(f"{rng.choice(latin[200:4000])} {topic}")
    return out


def mcp_times(data: Path, qs: list[str], baseline_book: str
              ) -> tuple[list[float], list[float], float | None, float, dict]:
    """Interleaved round trips: (baseline ms, library ms, peak RSS MB, first query ms, an
    answer)."""
    base_ms: list[float] = []
    lib_ms: list[float] = []
    with RawStdioClient(server_argv(data)) as client:
        client.initialize(timeout=120)
        began = time.perf_counter()
        first = client.call_tool("book_search", {"query": qs[0]})
        first_ms = (time.perf_counter() - began) * 1000
        assert not first["isError"], first
        sample = first["structuredContent"]
        for q in qs[:20]:  # warm: the package, the index and its pages opened once
            client.call_tool("book_search", {"query": q})
            client.call_tool("book_search", {"query": q, "book_id": baseline_book})
        for q in qs:
            for args, into in (({"query": q, "book_id": baseline_book}, base_ms),
                               ({"query": q}, lib_ms)):
                began = time.perf_counter()
                result = client.call_tool("book_search", args)
                into.append((time.perf_counter() - began) * 1000)
                assert not result["isError"], result
                data_ = result["structuredContent"]["data"]
                if "book_id" not in args:
                    assert not data_["books_skipped"], data_["books_skipped"][:3]
        rss = peak_rss_mb(client.proc.pid)
        client.close()
    return base_ms, lib_ms, rss, first_ms, sample


def core_times(data: Path, qs: list[str]) -> list[float]:
    """Milliseconds per in-process library search (warm)."""
    from readingroom.book.service import BookService

    service = BookService(data)
    for q in qs[:20]:
        service.search_library(q, wait=0)
    times = []
    for q in qs:
        began = time.perf_counter()
        service.search_library(q, wait=0)
        times.append((time.perf_counter() - began) * 1000)
    return times


def per_book_merge(data: Path, qs: list[str]) -> tuple[float, list[float]]:
    """The alternative: every book's own index searched, the lists merged by score. Returns
    the seconds to open the indexes and the ms per query (warm)."""
    from readingroom.book.package import Registry
    from readingroom.book.search import BookIndex

    began = time.perf_counter()
    indexes = [(pkg.book_id, BookIndex.open(pkg.file("index.sqlite")))
               for pkg in Registry(data)]
    opened = time.perf_counter() - began
    times = []
    try:
        for q in qs:
            began = time.perf_counter()
            hits = [(h.score, b, h.record_id) for b, idx in indexes
                    for h in idx.search(q, top_k=10).hits]
            hits.sort(key=lambda h: -h[0])
            times.append((time.perf_counter() - began) * 1000)
    finally:
        for _b, idx in indexes:
            idx.close()
    return opened, times


def one_more_book(data: Path, pages: int, n: int) -> tuple[float, float]:
    """``init`` of one more book with the library index current: seconds of the whole init,
    seconds the index update took inside it (measured on its own after)."""
    from readingroom.book.search.library_index import LibraryIndex
    from readingroom.book.service import BookService

    service = BookService(data)
    source = data.parent / f"{book_id(n)}.md"
    source.write_text(book_text(n, pages), encoding="utf-8")
    began = time.perf_counter()
    service.init(source, book_id=book_id(n))
    total = time.perf_counter() - began
    service.remove(book_id(n))
    service.registry.listeners.clear()
    service.init(source, book_id=book_id(n))
    began = time.perf_counter()
    LibraryIndex(service.registry).update(only=[book_id(n)])
    update = time.perf_counter() - began
    BookService(data).remove(book_id(n))
    source.unlink()
    return total, update


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--books", type=int, default=300)
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--jobs", type=int, default=2, help="processes generating the books")
    parser.add_argument("--keep", type=Path, help="keep (and reuse) the library in this folder")
    parser.add_argument("--merge-queries", type=int, default=10,
                        help="queries for the per-book merge alternative")
    args = parser.parse_args()
    tmp = None
    if args.keep is None:
        tmp = tempfile.TemporaryDirectory()
        folder = Path(tmp.name)
    else:
        folder = args.keep
    try:
        return run(folder, args)
    finally:
        if tmp is not None:
            tmp.cleanup()


def run(folder: Path, args: argparse.Namespace) -> int:
    import sqlite3

    from readingroom.book.package import Registry
    from readingroom.book.search.library_index import LibraryIndex

    data, reused = prepare(folder, args.books, args.pages, args.jobs)
    index = LibraryIndex(Registry(data))
    if reused and index.exists():
        print(f"library reused from {folder} (index kept)")
    else:
        began = time.perf_counter()
        report = index.update()
        print(f"library index built from the books' own indexes in "
              f"{time.perf_counter() - began:.1f} s ({len(report.indexed)} books, "
              f"{report.merges} merges)")
    with sqlite3.connect(index.path) as conn:
        records = conn.execute("SELECT sum(records) FROM books").fetchone()[0]
        segments = conn.execute("SELECT count(*) FROM segments").fetchone()[0]
    size = sum(p.stat().st_size for p in index.path.parent.glob("search.sqlite*"))
    print(f"library: {args.books} books, {args.books * args.pages:,} pages, {records:,} "
          f"records; index {size / 2**20:.0f} MiB in {segments} segments")
    qs = queries(args.books, args.queries)
    base_ms, lib_ms, rss, first_ms, sample = mcp_times(data, qs, book_id(0))
    b50, b95, l50, l95 = (pct(base_ms, 0.5), pct(base_ms, 0.95), pct(lib_ms, 0.5),
                          pct(lib_ms, 0.95))
    ok = True
    print(f"book_search over MCP, {len(qs)} queries, interleaved:")
    print(f"  baseline, one book (book_id={book_id(0)}): p50 {b50:.2f} ms, p95 {b95:.2f} ms")
    print(f"  library, {args.books} books at once:   p50 {l50:.2f} ms, p95 {l95:.2f} ms "
          f"(target p95 <= {TARGET_P95_MS:g} ms)")
    print(f"  library / one book: p50 {l50 / b50:.2f}x, p95 {l95 / b95:.2f}x")
    ok &= l95 <= TARGET_P95_MS
    print("  server peak RSS after every query: " + (
        f"{rss:.0f} MB (target <= {TARGET_RSS_MB:g} MB)" if rss else "not measured (no /proc)"))
    ok &= rss is None or rss <= TARGET_RSS_MB
    books_hit = {h["book_id"] for h in sample["items"]}
    print(f"  first query of a fresh server: {first_ms:.0f} ms ({len(books_hit)} books in its "
          f"top {len(sample['items'])})")
    core = core_times(data, qs)
    print(f"library search in process (the Core alone): p50 {pct(core, 0.5):.2f} ms, p95 "
          f"{pct(core, 0.95):.2f} ms; MCP adds {l50 - pct(core, 0.5):.2f} ms at p50")
    total, update = one_more_book(data, args.pages, args.books)
    print(f"init of one more {args.pages}-page book: {total:.2f} s, of which keeping the "
          f"library index current {update:.2f} s")
    if args.merge_queries:
        opened, merge_ms = per_book_merge(data, qs[:args.merge_queries])
        print(f"alternative, each book's own index searched and merged ({args.books} indexes "
              f"opened in {opened:.1f} s): p50 {pct(merge_ms, 0.5):.0f} ms, p95 "
              f"{pct(merge_ms, 0.95):.0f} ms per query on {len(merge_ms)} queries "
              f"({pct(merge_ms, 0.5) / pct(core, 0.5):.0f}x the library index), and its "
              "scores do not compare across books")
    print("TARGETS MET" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
