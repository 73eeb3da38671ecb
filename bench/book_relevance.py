"""Relevance of book search: MRR@10 and recall@10 on a small judged query set, per engine.

The set (``bench/relevance/books.json``) names, per book, queries and the record a reader
means, by a stable property of that record (a phrase its text contains, or its own heading),
never by a record id. Its books are the shared fixture books and two generated EPUBs (an
English and a Japanese book, each with an in-spine contents page listing its chapter titles).
Query classes: chapter titles (a contents page must not win), famous opening lines typed
unquoted, phrases, parts of hyphenated compounds, CJK, Hebrew and Arabic; and, harder (issue
21): linear-algebra's sections by their titles among many alike (``similar-sections``),
names a back-of-book index lists (``index-role``: the passage is meant), singular/plural
(``plural``) and ruby readings (``ruby``), on two more generated EPUBs.

Each book is ingested through the package's public path (``BookService.init``), so the whole
pipeline is measured; its index is then opened with each engine (``fts5`` and the Python BM25
fallback) and every query searched with the defaults (top 10).

- MRR@10: mean over queries of 1 / rank of the first relevant hit (0 when none is in the top 10);
- recall@10: share of queries with a relevant hit in the top 10 (one target per query).

    python bench/book_relevance.py [--samples ../shared/fixtures] [--baseline-tree DIR] [-v]

With ``--baseline-tree`` (a git worktree of the code before a change), the same set is also
run on that tree's code in a child process and both are printed, before and after (the
baseline always with its defaults). ``--include-contents`` searches with contents pages
included, to check that they do not win even then.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SET = Path(__file__).resolve().parent / "relevance" / "books.json"
ENGINES = ("fts5", "python")


def _fold(s: str) -> str:
    return " ".join(s.casefold().split())


def _english_contents(path: Path) -> Path:
    from tests.book.make_books import make_epub

    titles = ["The Match-Box", "The Lighthouse Keeper", "Stairs and Storms", "A Box of Letters"]
    contents = "<h1>Contents</h1>" + "".join(f"<p>{t}</p>" for t in titles)
    chapters = [
        ("Contents", contents),
        ("The Match-Box", "<h1>The Match-Box</h1><p>The girl kept one match-box in her apron. "
         "It was old and the striking side was worn. She counted what was left inside it, "
         "three, and went out into the cold street where nobody bought anything.</p>"),
        ("The Lighthouse Keeper", "<h1>The Lighthouse Keeper</h1><p>Every evening the keeper "
         "climbed the stairs to the lamp and trimmed the wick. Ships passed far out, and he "
         "wrote their names in a book that nobody read.</p>"),
        ("Stairs and Storms", "<h1>Stairs and Storms</h1><p>The storm climbed over the rocks. "
         "Stairs of foam ran up the beach; the keeper of the inn said the lighthouse would "
         "hold. Nobody climbed anything that night; the keeper stayed by the fire, and the "
         "stairs creaked. A keeper, a storm, the stairs: the whole village waited.</p>"),
        ("A Box of Letters", "<h1>A Box of Letters</h1><p>In a box under the bed lay the "
         "letters of a keeper who never came home. The box was tin; the letters spoke of a "
         "lighthouse, a match, a storm and the stairs.</p>"),
    ]
    return make_epub(path, chapters, title="Small Stories")


def _japanese_contents(path: Path) -> Path:
    from tests.book.make_books import make_epub

    titles = ["古い電燈", "港の朝", "山の手紙"]
    contents = "<h1>目次</h1>" + "".join(f"<p>{t}</p>" for t in titles)
    chapters = [
        ("目次", contents),
        ("古い電燈", "<h1>古い電燈</h1><p>夜になると、私は古い電燈の下で本を読んだ。"
         "電燈は少し暗かったが、頁の文字はよく見えた。窓の外では雨が降っていた。</p>"),
        ("港の朝", "<h1>港の朝</h1><p>朝早く港へ行くと、船が静かに出ていくところだった。"
         "海は穏やかで、鳥が鳴いていた。古い船も新しい船も、同じように朝の光を受けていた。</p>"),
        ("山の手紙", "<h1>山の手紙</h1><p>山の家から手紙が来た。港の話も電燈の話も書いてあった。"
         "本を読んだあと、私は返事を書いた。朝になって、静かに家を出た。</p>"),
    ]
    return make_epub(path, chapters, title="小さな話", language="ja")


_FILLER = ("The committee met in the long room above the harbour and read the letters aloud, "
           "one after another, until the lamps were lit and the tide had turned again. ")
_INDEX_NAMES = [
    ("Marguerite Okonkwo kept the harbour ledgers", "Okonkwo, Marguerite"),
    ("the tide tables were printed", "tide tables"),
    ("Eduard Vantongeren drew the first chart", "Vantongeren, Eduard"),
    ("the lighthouse lenses came from Paris", "lighthouse lenses"),
    ("a metatopic is a topic about topics", "metatopics"),
]


def _index_book(path: Path) -> Path:
    """Twelve chapters of prose, each naming one thing once, and a back-of-book index (EPUB
    Indexes vocabulary) that lists every name with links: the index is short and has every
    name, so BM25 likes it better than the chapters a reader means."""
    from tests.book.make_epub_classes import make_book

    chapters = []
    for n in range(12):
        named = _INDEX_NAMES[n % len(_INDEX_NAMES)][0] if n < len(_INDEX_NAMES) else ""
        body = (_FILLER * 6) + (f"In those years {named}, as the minutes say. " if named
                                else "") + _FILLER * 6
        chapters.append((f"ch{n + 1}", f"<h1>Chapter {n + 1}</h1><p id='p{n}'>{body}</p>"))
    entries = "".join(
        f'<li epub:type="index-entry"><span epub:type="index-term">{term}</span> '
        f'<a href="ch{n + 1}.xhtml#p{n}">{10 * n + 3}</a>, <a href="ch{n + 1}.xhtml">'
        f"{10 * n + 4}</a></li>" for n, (_text, term) in enumerate(_INDEX_NAMES))
    entries += "".join(f'<li epub:type="index-entry"><span epub:type="index-term">harbour '
                       f'ledgers {k}</span> <a href="ch{k}.xhtml">{k}</a></li>'
                       for k in range(1, 8))
    chapters.append(("index", f'<section epub:type="index"><h1>Index</h1><ul>{entries}</ul>'
                     "</section>"))
    return make_book(path, chapters)


def _ruby_book(path: Path) -> Path:
    from tests.book.make_epub_round2 import make_ruby_book

    return make_ruby_book(path)


_GENERATED = {"english-contents": _english_contents, "japanese-contents": _japanese_contents,
              "index-book": _index_book, "ruby-book": _ruby_book}


def _records(package: Path) -> dict[str, dict]:
    out = {}
    with (package / "records.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            out[rec["record_id"]] = rec
    return out


def _relevant(rec: dict, query: dict) -> bool:
    if "heading" in query:
        path = rec.get("heading_path") or [""]
        return _fold(query["heading"]) in _fold(path[-1])
    return _fold(query["text"]) in _fold(rec["text"])


def run(samples: Path, verbose: bool, include_contents: bool = False) -> dict:
    """Figures per engine, per class and per query: ``{"engines": {...}, "queries": [...]}``."""
    sys.path.insert(0, str(ROOT))
    from readingroom.book.search.index import BookIndex
    from readingroom.book.service import BookService

    spec = json.loads(SET.read_text(encoding="utf-8"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        service = BookService(Path(tmp) / "data")
        for n, book in enumerate(spec["books"]):
            if "fixture" in book:
                source = samples / "books" / book["fixture"]
                if not source.is_file():
                    print(f"skipped (not found): {source}", file=sys.stderr)
                    continue
                name = book["fixture"]
            else:
                name = book["generated"]
                source = _GENERATED[name](Path(tmp) / f"{name}.epub")
            env = service.init(source, book_id=f"b{n}")
            package = Path(env.data["package"])
            records = _records(package)
            for engine in ENGINES:
                with BookIndex.open(package / "index.sqlite", engine=engine) as index:
                    for query in book["queries"]:
                        extra = {"include_contents": True} if include_contents else {}
                        hits = index.search(query["q"], top_k=10, **extra).hits
                        rank = next((i for i, h in enumerate(hits, start=1)
                                     if _relevant(records[h.record_id], query)), 0)
                        first = hits[0].heading_path[-1:] if hits else []
                        rows.append({"book": name, "engine": engine, "q": query["q"],
                                     "class": query["class"], "rank": rank,
                                     "first": first[0] if first else None})
    engines = {}
    for engine in ENGINES:
        mine = [r for r in rows if r["engine"] == engine]
        classes = {}
        for cls in sorted({r["class"] for r in mine}):
            sub = [r for r in mine if r["class"] == cls]
            classes[cls] = _figures(sub)
        engines[engine] = {**_figures(mine), "classes": classes}
    if verbose:
        for r in rows:
            print(f"  {r['engine']:6} rank {r['rank'] or '-':>2}  {r['class']:12} {r['q']!r} "
                  f"(first hit: {r['first']!r})", file=sys.stderr)
    return {"engines": engines, "queries": rows}


def _figures(rows: list[dict]) -> dict:
    n = len(rows) or 1
    return {"queries": len(rows), "mrr10": sum(1 / r["rank"] for r in rows if r["rank"]) / n,
            "recall10": sum(1 for r in rows if r["rank"]) / n}


def _print(label: str, result: dict) -> None:
    for engine, fig in result["engines"].items():
        print(f"{label} {engine:6}: MRR@10 {fig['mrr10']:.3f}  recall@10 {fig['recall10']:.3f}  "
              f"({fig['queries']} queries)")
        for cls, sub in fig["classes"].items():
            print(f"    {cls:12} MRR@10 {sub['mrr10']:.3f}  recall@10 {sub['recall10']:.3f}  "
                  f"(n={sub['queries']})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", default=os.environ.get(
        "READINGROOM_SAMPLES", str(ROOT.parent / "shared" / "fixtures")))
    parser.add_argument("--baseline-tree", help="a worktree of the code to compare against")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON only")
    parser.add_argument("-v", "--verbose", action="store_true", help="every query's rank")
    parser.add_argument("--include-contents", action="store_true",
                        help="search with contents pages included (code that has the switch)")
    args = parser.parse_args()
    if args.baseline_tree:
        tree = Path(args.baseline_tree).resolve()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree / "app"), str(tree)])}
        cmd = [sys.executable, str(Path(__file__).resolve()), "--json", "--samples",
               args.samples] + (["-v"] if args.verbose else [])
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True,
                              cwd=tree)
        if args.verbose:
            print(f"before ({tree}):\n{done.stderr}", file=sys.stderr)
        _print("before", json.loads(done.stdout))
    result = run(Path(args.samples), args.verbose, args.include_contents)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        _print("after " if args.baseline_tree else "", result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
