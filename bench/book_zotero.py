"""Reading a Zotero library of 5,000 items: the time ``add --zotero --dry-run`` takes to list
what would be added (target ≤ 3 s).

The library is generated from Zotero's real schema files (``shared/fixtures/libraries/
zotero``, through ``tests/book/library/zotero_builder.py``: ids assigned as Zotero's start-up
does, items inserted by name): 5,000 parent items of mixed types with creators, dates, tags
and collections, each with a stored PDF attachment (one small generated PDF, hard-linked),
every tenth with a note and every twentieth with a web link. Each attachment is the same small
generated PDF padded to a size of its own (a trailing PDF comment), so no two are duplicates.

    python bench/book_zotero.py [--samples ../shared/fixtures] [--items 5000]

Prints the command's wall time (process start included) and the reader's own time in
process; exits non-zero when the target is missed.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PYMUPDF_MESSAGE", "fd:2")

TYPES = ("book", "bookSection", "journalArticle", "thesis", "report")


def build(folder: Path, items: int, seed: int = 5) -> Path:
    """A Zotero data directory with ``items`` parent items and their attachments."""
    from tests.book.library.zotero_builder import ZoteroLibrary, random_title
    from tests.book.make_books import make_pdf

    rng = random.Random(seed)
    pdf = make_pdf(folder / "one.pdf", ["A small attachment for the benchmark."]).read_bytes()
    z = ZoteroLibrary(folder / "Zotero", upgraded=True, seed=seed)
    collections = [z.collection(f"Collection {n}") for n in range(20)]
    for n in range(items):
        kind = TYPES[n % len(TYPES)]
        fields = {"title": random_title(rng), "date": f"{1950 + n % 70}-00-00 {1950 + n % 70}"}
        if kind in ("book", "bookSection"):
            fields["publisher"] = "Publisher " + str(n % 40)
        if kind == "journalArticle":
            fields["publicationTitle"] = "Journal " + str(n % 30)
            fields["DOI"] = f"10.1000/bench.{n}"
        parent = z.item(kind, fields, creators=[("Given", f"Family{n % 300}", "author")],
                        tags=[f"tag{n % 50}"])
        z.file_into(collections[n % len(collections)], parent)
        att = z.attach(parent, name="paper.pdf")
        key = z.item_key(att)
        (z.data_dir / "storage" / key).mkdir(parents=True, exist_ok=True)
        (z.data_dir / "storage" / key / "paper.pdf").write_bytes(
            pdf + b"%" + b" " * n + b"\n")
        if n % 10 == 0:
            z.note(parent, f"note {n}")
        if n % 20 == 0:
            z.attach(parent, link_mode=3, content_type="text/html", path=None)
    z.close()
    return z.data_dir


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=Path)
    parser.add_argument("--items", type=int, default=5000)
    args = parser.parse_args()
    if args.samples:
        os.environ["READINGROOM_SAMPLES"] = str(args.samples.resolve())
    with tempfile.TemporaryDirectory() as tmp:
        began = time.perf_counter()
        data_dir = build(Path(tmp), args.items)
        print(f"generated {args.items:,} items in {time.perf_counter() - began:.1f} s "
              f"({(data_dir / 'zotero.sqlite').stat().st_size / 2**20:.1f} MiB database)")
        from readingroom.book.library.zotero import read_zotero

        began = time.perf_counter()
        found = read_zotero(data_dir, home=Path(tmp))
        reader = time.perf_counter() - began
        cli = [sys.executable, "-m", "readingroom.book", "--data-dir", str(Path(tmp) / "data"),
               "--json", "add", "--zotero", str(data_dir), "--dry-run"]
        times = []
        for _ in range(3):
            began = time.perf_counter()
            done = subprocess.run(cli, capture_output=True, text=True,
                                  env={**os.environ, "HOME": tmp})
            times.append(time.perf_counter() - began)
            assert done.returncode == 0, done.stderr
        best = min(times)
        print(f"reader in process: {reader:.2f} s for {len(found.candidates):,} book "
              f"attachments, {len(found.skipped):,} skipped")
        print(f"book-agent add --zotero --dry-run (whole command): best {best:.2f} s, "
              f"runs {', '.join(f'{t:.2f}' for t in times)} s (target ≤ 3 s)")
        return 0 if best <= 3.0 else 1


if __name__ == "__main__":
    sys.exit(main())
