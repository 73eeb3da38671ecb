"""Search speed and planted-phrase recall of the book index on a synthetic 1,000-page book.

Generates a deterministic mixed Latin/Japanese book in memory as ``Record`` objects (about
1,300 characters per page, sections of a few pages, one record per page of a section), plants
50 phrases (25 Latin, 25 Japanese) at known records, builds the index and measures, in
process and in one thread:

- build time of the index;
- queries per second over a mixed query set (Latin words, two-character Japanese words,
  the planted phrases), target >= 1,000 q/s;
- recall of the planted phrases in the top 10, target 100%;
- for information (no target): the same Latin planted phrases typed unquoted (several words,
  so the phrase/proximity rerank of a 50-record pool runs): how many rank their record first,
  and their queries per second.

Baseline, same run, same queries: a naive linear scan that counts ``str.find`` hits of the
normalised query in every record's normalised text. Printed as "index q/s ÷ scan q/s".
Index and scan are timed in alternating rounds; the best round of each counts (as ``timeit``
advises: slower rounds measure other processes), the median is printed beside it.
The pure-Python BM25 fallback engine is measured too, for information (no target).
Exits non-zero when a target is missed.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from readingroom.book.model import Record
from readingroom.book.search import BookIndex, build_index
from readingroom.book.text import normalise

PAGES = 1000
PAGE_CHARS = 1300
PLANTED = 50
TARGET_QPS = 1000.0
TARGET_RECALL = 1.0

_SYLLABLES = ["ka", "to", "ri", "mo", "sa", "ne", "lu", "vi", "pe", "da", "gor", "tin", "mal",
              "ber", "qui", "sol", "ran", "ex", "al", "or", "en", "th", "st", "ch"]
_KANJI = ("電燈交流東京時間学校先生文学歴史経済政治社会自然科学技術言語世界日本国家家族友人"
          "生活仕事問題意味理由方法結果原因目的関係状態感情記憶物語作品表現音楽絵画写真映画")
_KANA = "のにをはがでとへもやからまでより"
_ENDINGS = ["である。", "について考える。", "を読んだ。", "が始まった。", "の中で、", "とともに、"]


def _latin_vocab(rng: random.Random, size: int = 1500) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 4))))
    return sorted(words)


def _japanese_vocab(rng: random.Random, size: int = 400) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add(rng.choice(_KANJI) + rng.choice(_KANJI))
    return sorted(words)


def _zipf_pick(rng: random.Random, vocab: list[str]) -> str:
    # A skewed draw (rank ~ 1/u) gives common and rare words, like real text.
    return vocab[min(len(vocab) - 1, int(len(vocab) * rng.random() ** 2.5))]


def _page_text(rng: random.Random, latin: list[str], japanese: list[str]) -> str:
    parts: list[str] = []
    size = 0
    while size < PAGE_CHARS:
        if rng.random() < 0.5:
            words = [_zipf_pick(rng, latin) for _ in range(rng.randint(6, 14))]
            sentence = " ".join(words).capitalize() + ". "
        else:
            pieces = []
            for _ in range(rng.randint(3, 6)):
                pieces.append(_zipf_pick(rng, japanese) + rng.choice(_KANA))
            sentence = "".join(pieces) + rng.choice(_ENDINGS)
        parts.append(sentence)
        size += len(sentence)
        if rng.random() < 0.15:
            parts.append("\n")
    return "".join(parts)


def make_book(seed: int = 7) -> tuple[list[Record], list[str], list[tuple[str, str]], list[str]]:
    """Records, unit labels, planted ``(query, record_id)`` pairs and the query vocabulary."""
    rng = random.Random(seed)
    latin = _latin_vocab(rng)
    japanese = _japanese_vocab(rng)
    pages = [_page_text(rng, latin, japanese) for _ in range(PAGES)]
    labels = [_roman(i + 1) for i in range(10)] + [str(i - 9) for i in range(10, PAGES)]
    records: list[Record] = []
    page = 0
    section = 0
    while page < PAGES:
        length = min(rng.randint(2, 5), PAGES - page)
        section += 1
        heading = (f"Part {section // 40 + 1}", f"Chapter {section // 8 + 1}",
                   f"Section {section}")
        for part in range(length):
            suffix = f"-{part + 1}" if part else ""
            text = pages[page + part]
            records.append(Record(
                record_id=f"r{section:04d}{suffix}", order=len(records), heading_path=heading,
                text=text, unit_start=page + part, char_start=0, unit_end=page + part,
                char_end=len(text),
            ))
        page += length
    planted: list[tuple[str, str]] = []
    targets = rng.sample(range(len(records)), PLANTED)
    for i, index in enumerate(targets):
        if i % 2 == 0:
            phrase = " ".join(rng.choice(latin[200:]) for _ in range(3))
            query = f'"{phrase}"'
            insert = f" {phrase.capitalize()} "
        else:
            phrase = rng.choice(japanese[100:]) + rng.choice(japanese[100:])
            query = insert = phrase
        rec = records[index]
        cut = rng.randint(0, len(rec.text))
        while cut < len(rec.text) and rec.text[cut - 1:cut].isalnum():
            cut += 1  # never split a Latin word
        text = rec.text[:cut] + insert + rec.text[cut:]
        records[index] = Record(
            record_id=rec.record_id, order=rec.order, heading_path=rec.heading_path, text=text,
            unit_start=rec.unit_start, char_start=0, unit_end=rec.unit_end, char_end=len(text),
        )
        planted.append((query, rec.record_id))
    words = [_zipf_pick(rng, latin) for _ in range(200)]
    words += [_zipf_pick(rng, japanese) for _ in range(200)]
    return records, labels, planted, words


def _roman(n: int) -> str:
    out = ""
    for value, numeral in ((10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i")):
        while n >= value:
            out += numeral
            n -= value
    return out


class LinearScan:
    """The baseline: count occurrences of the normalised query in each normalised text."""

    def __init__(self, records: list[Record]) -> None:
        self.ids = [r.record_id for r in records]
        self.texts = [normalise(r.text) for r in records]

    def search(self, query: str, top_k: int = 10) -> list[str]:
        """Record ids with the most occurrences of the query string, first ``top_k``."""
        needle = normalise(query.replace('"', "")).strip()
        scored = [(-text.count(needle), i) for i, text in enumerate(self.texts)
                  if text.find(needle) >= 0]
        scored.sort()
        return [self.ids[i] for _, i in scored[:top_k]]


def _rate(run: Callable[[str], object], queries: list[str], seconds: float) -> float:
    done = 0
    began = time.perf_counter()
    while True:
        for q in queries:
            run(q)
        done += len(queries)
        elapsed = time.perf_counter() - began
        if elapsed >= seconds:
            return done / elapsed


def _rounds(runs: dict[str, Callable[[str], object]], queries: list[str], seconds: float,
            rounds: int = 6) -> dict[str, list[float]]:
    """q/s of each runner over ``rounds`` alternating rounds of ``seconds / rounds`` each."""
    rates: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            rates[name].append(_rate(run, queries, seconds / rounds))
    return rates


def _recall(run: Callable[[str], list[str]], planted: list[tuple[str, str]]) -> float:
    found = sum(1 for query, rid in planted if rid in run(query))
    return found / len(planted)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0,
                        help="timing per engine, split over alternating rounds (default 3)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    began = time.perf_counter()
    records, labels, planted, words = make_book(args.seed)
    chars = sum(len(r.text) for r in records)
    print(f"book: {PAGES} pages, {len(records)} records, {chars:,} characters "
          f"(generated in {time.perf_counter() - began:.2f} s)")
    queries = words + [q for q, _ in planted]
    random.Random(args.seed).shuffle(queries)

    scan = LinearScan(records)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "index.sqlite"
        stats = build_index(records, path, unit_labels=labels)
        print(f"build ({stats.engine}): {stats.seconds:.2f} s for {chars / 1e6:.2f}M characters, "
              f"{stats.bytes / 1e6:.1f} MB, {stats.body_tokens:,} tokens + "
              f"{stats.cjk_chars:,} CJK characters")
        py_path = Path(tmp) / "index-python.sqlite"
        py_stats = build_index(records, py_path, unit_labels=labels, engine="python")
        with BookIndex.open(path) as index, BookIndex.open(py_path) as py_index:
            index.search("warm up")
            py_index.search("warm up")
            rates = _rounds({
                "index": lambda q: index.search(q, top_k=10),
                "scan": scan.search,
                "fallback": lambda q: py_index.search(q, top_k=10),
            }, queries, args.seconds)
            unquoted = [(q.strip('"'), rid) for q, rid in planted if q.startswith('"')]
            words_qps = max(_rounds({"u": lambda q: index.search(q, top_k=10)},
                                    [q for q, _ in unquoted], args.seconds / 3, rounds=3)["u"])
            first = sum(1 for q, rid in unquoted if index.search(q).hits[0].record_id == rid)
            recall = _recall(lambda q: [h.record_id for h in index.search(q).hits], planted)
            py_recall = _recall(lambda q: [h.record_id for h in py_index.search(q).hits],
                                planted)
    scan_recall = _recall(scan.search, planted)
    qps, scan_qps, py_qps = (max(rates[k]) for k in ("index", "scan", "fallback"))

    def median(name: str) -> str:
        return f"median {statistics.median(rates[name]):,.0f}"

    print(f"queries: {len(queries)} ({len(words)} words: Latin and two-character Japanese; "
          f"{len(planted)} planted phrases), top 10, one thread")
    print(f"index ({stats.engine}): {qps:,.0f} q/s ({median('index')}; target >= "
          f"{TARGET_QPS:,.0f}); planted recall@10 {recall:.0%} (target {TARGET_RECALL:.0%})")
    print(f"linear scan: {scan_qps:,.0f} q/s ({median('scan')}); "
          f"planted recall@10 {scan_recall:.0%}")
    print(f"index q/s ÷ scan q/s = {qps / scan_qps:.1f}")
    print(f"fallback ({py_stats.engine}, no target): build {py_stats.seconds:.2f} s, "
          f"{py_qps:,.0f} q/s ({median('fallback')}), recall@10 {py_recall:.0%}, "
          f"÷ scan = {py_qps / scan_qps:.1f}")
    print(f"unquoted Latin phrases ({len(unquoted)}, no target): ranked first {first}/"
          f"{len(unquoted)}, {words_qps:,.0f} q/s")
    ok = qps >= TARGET_QPS and recall >= TARGET_RECALL
    print("result:", "targets met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
