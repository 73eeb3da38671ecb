"""The shared real books, each read once per test run, for the tests that only look at what
:func:`readingroom.book.ingest.ingest` made of it.

Reading a large real book takes seconds (``linear-algebra.epub`` about three), and a dozen
modules on different test workers look at the same few books. The first worker to need one
reads it and leaves the document, pickled, in the run's folder (``READINGROOM_TEST_RUN_DIR``,
made by ``tests/conftest.py`` before the workers start, removed when the run ends); the others
load that copy (milliseconds). Every caller gets a document of its own to look at, never one
another test may have changed. The tests of reading itself (errors, progress, OCR, made-up
books) call ``ingest`` directly.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path

from readingroom.book.ingest import ingest
from readingroom.book.model import SourceDocument

from ..conftest import RUN_DIR_ENV

__all__ = ["ingested"]


def ingested(path: Path, *, allow_image_only: bool = False) -> SourceDocument:
    """``ingest(path, allow_image_only=...)``, read once per test run for every worker."""
    run_dir = os.environ.get(RUN_DIR_ENV)
    if not run_dir:
        return ingest(path, allow_image_only=allow_image_only)
    stat = path.stat()
    key = hashlib.sha256(repr((str(path.resolve()), stat.st_size, stat.st_mtime_ns,
                               allow_image_only)).encode()).hexdigest()[:32]
    kept = Path(run_dir) / f"ingested-{key}.pickle"
    try:
        with kept.open("rb") as stream:
            document: SourceDocument = pickle.load(stream)
        return document
    except FileNotFoundError:
        pass
    document = ingest(path, allow_image_only=allow_image_only)
    # Written aside and renamed: a worker reading at the same moment sees all of it or nothing.
    handle, partial = tempfile.mkstemp(dir=run_dir, prefix=kept.name, suffix=".part")
    with os.fdopen(handle, "wb") as stream:
        pickle.dump(document, stream, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(partial, kept)
    return document
