"""Ingest and search on real and synthetic books, as ratios measured in one run.

1. ``init`` of the 117-page fixture textbook against plain PyMuPDF ``get_text()`` over the same
   file (target: init ≤ 8× the plain extraction).
2. A synthetic 1,000-page mixed Latin/Japanese PDF made here: ``init`` time and peak RSS of the
   process doing it (target ≤ 400 MB).
3. On that book, in process: queries per second for mixed Latin and two-character Japanese
   queries drawn like the book's words (target ≥ 1,000 q/s), and the recall of planted phrases
   in the top 10 (target 100%), against a naive scan baseline over the same records.

    python bench/book_ingest.py [--samples ../shared/fixtures] [--pages 1000]

Exits non-zero when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("PYMUPDF_MESSAGE", "fd:2")

ROOT = Path(__file__).resolve().parent.parent


def best_of(n: int, run) -> tuple[float, float]:
    """(best, median) seconds of ``run`` over ``n`` rounds."""
    times = []
    for _ in range(n):
        began = time.perf_counter()
        run()
        times.append(time.perf_counter() - began)
    return min(times), statistics.median(times)


def textbook_ratio(path: Path, rounds: int) -> tuple[float, float, float]:
    """(init seconds, plain get_text seconds, ratio), best rounds."""
    import pymupdf

    from readingroom.book.service import BookService

    def plain() -> None:
        with pymupdf.open(path) as doc:
            for page in doc:
                page.get_text()

    def init() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            BookService(tmp).init(path, book_id="textbook")

    plain_best, _ = best_of(rounds, plain)
    init_best, _ = best_of(rounds, init)
    return init_best, plain_best, init_best / plain_best


def make_synthetic_pdf(path: Path, pages: int, seed: int = 11):
    """A mixed Latin/Japanese PDF (the same text model as bench/book_search.py: Zipf-drawn
    words from a 1,500-word Latin and a 400-word Japanese vocabulary); returns the planted
    phrases with their page indexes, and the two vocabularies."""
    import pymupdf

    from book_search import _japanese_vocab, _latin_vocab, _page_text

    rng = random.Random(seed)
    latin, japanese = _latin_vocab(rng), _japanese_vocab(rng)
    planted: list[tuple[str, int]] = []
    doc = pymupdf.open()
    toc = []
    for i in range(pages):
        page = doc.new_page(width=595, height=842)
        text = _page_text(rng, latin, japanese)
        if i % 20 == 7:
            phrase = f"planted phrase number {i} zeta"
            planted.append((phrase, i))
            text = text[:400] + f" {phrase}. " + text[400:]
        if i % 20 == 13:
            phrase = f"秘密{i}番の鍵"
            planted.append((phrase, i))
            text = text[:600] + phrase + "。" + text[600:]
        if page.insert_textbox(pymupdf.Rect(36, 36, 559, 806), text, fontsize=8,
                               fontname="japan") < 0:
            raise RuntimeError(f"page {i}: text does not fit")
        if i % 10 == 0:
            toc.append([1, f"Section {i // 10 + 1}", i + 1])
    doc.set_toc(toc)
    doc.save(path, garbage=3, deflate=True)
    doc.close()
    return planted, latin, japanese


def init_in_child(path: Path, data: Path) -> tuple[float, float]:
    """(seconds, peak RSS MiB) of ``init`` in a fresh process."""
    script = (
        "import json, resource, sys, time\n"
        "from readingroom.book.service import BookService\n"
        "t = time.perf_counter()\n"
        f"BookService({str(data)!r}).init({str(path)!r}, book_id='big')\n"
        "s = time.perf_counter() - t\n"
        "rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "scale = 1 if sys.platform == 'darwin' else 1024\n"
        "print(json.dumps([s, rss * scale / 2**20]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True, timeout=900)
    seconds, rss = json.loads(done.stdout)
    return seconds, rss


def search_figures(data: Path, planted: list[tuple[str, int]], vocab: tuple[list[str],
                   list[str]], seconds: float):
    """q/s of the index vs a naive scan on the same records, and planted recall in top 10."""
    from readingroom.book.service import BookService
    from readingroom.book.text import normalise

    service = BookService(data)
    loaded = service._load("big")
    index = loaded.index
    from book_search import _zipf_pick

    rng = random.Random(3)
    latin, japanese = vocab
    queries = [q for _ in range(100) for q in (_zipf_pick(rng, latin),
                                               _zipf_pick(rng, japanese))]
    folded = [normalise(r.text) for r in loaded.records]

    def scan(q: str) -> list[int]:
        needle = normalise(q)
        hits = sorted(((t.count(needle), i) for i, t in enumerate(folded) if needle in t),
                      reverse=True)
        return [i for _, i in hits[:10]]

    def rate(run) -> float:
        n, began = 0, time.perf_counter()
        while time.perf_counter() - began < seconds:
            run(queries[n % len(queries)])
            n += 1
        return n / (time.perf_counter() - began)

    index_qps = max(rate(lambda q: index.search(q, top_k=10)) for _ in range(3))
    scan_qps = max(rate(scan) for _ in range(2))
    found = 0
    for phrase, page in planted:
        hits = index.search(phrase, top_k=10).hits
        found += any(h.unit_start <= page <= h.unit_end for h in hits)
    return index_qps, scan_qps, found / len(planted), len(loaded.records)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", default=os.environ.get(
        "READINGROOM_SAMPLES", str(ROOT.parent / "shared" / "fixtures")))
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0, help="per search timing round")
    args = parser.parse_args()
    ok = True

    textbook = Path(args.samples) / "books" / "geotopo-textbook-outline.pdf"
    if textbook.is_file():
        init_s, plain_s, ratio = textbook_ratio(textbook, args.rounds)
        print(f"textbook (117 pages): init {init_s:.2f} s, plain get_text {plain_s:.2f} s, "
              f"ratio {ratio:.1f}x (target <= 8x)")
        ok &= ratio <= 8
    else:
        print(f"textbook: not found at {textbook} (set --samples); skipped")

    with tempfile.TemporaryDirectory() as tmp:
        pdf = Path(tmp) / "synthetic.pdf"
        began = time.perf_counter()
        planted, latin, japanese = make_synthetic_pdf(pdf, args.pages)
        print(f"synthetic book: {args.pages} pages, {pdf.stat().st_size / 2**20:.1f} MiB, "
              f"{len(planted)} planted phrases (made in {time.perf_counter() - began:.1f} s)")
        seconds, rss = init_in_child(pdf, Path(tmp) / "data")
        print(f"synthetic init: {seconds:.1f} s ({seconds / args.pages * 1000:.1f} ms/page), "
              f"peak RSS {rss:.0f} MiB (target <= 400 MB)")
        ok &= rss <= 400 * 1e6 / 2**20
        qps, scan_qps, recall, records = search_figures(Path(tmp) / "data", planted,
                                                        (latin, japanese), args.seconds)
        print(f"search on it ({records} records): {qps:.0f} q/s (target >= 1000); naive scan "
              f"{scan_qps:.0f} q/s; index / scan = {qps / scan_qps:.1f}x")
        print(f"planted-phrase recall in top 10: {recall:.0%} (target 100%)")
        ok &= qps >= 1000 and recall == 1.0
    print("all targets met" if ok else "A TARGET WAS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
