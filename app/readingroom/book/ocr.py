"""Optional local OCR of scanned PDF pages: Tesseract through PyMuPDF's OCR text page.

``book-agent init --ocr`` reads the pages that have no text layer (``--ocr all``: every page)
with ``Page.get_textpage_ocr(full=True)``: MuPDF renders the page and runs the Tesseract it is
built with on it, using the language data of an installed Tesseract. Nothing here reaches the
network, and the text is never passed off as the publisher's: each OCR'd page says
``text_source: ocr`` with the engine, its version, the language, the resolution and the mean
word confidence, and so do the records, locators and search hits built on it.

Finding Tesseract (:func:`find_engine`)
    The language data folder is ``TESSDATA_PREFIX`` when that is set, else the one the
    ``tesseract`` program on ``PATH`` names (``tesseract --list-langs``, run without a shell),
    else, on Windows, ``%ProgramFiles%\\Tesseract-OCR\\tessdata`` (where the installer puts
    it). Every language asked for (``--ocr-lang jpn+eng``) must have its ``.traineddata``
    there. Without them init stops before it builds anything, saying what to install.

Word confidence
    MuPDF's OCR text page carries no confidences, so when the ``tesseract`` program is found
    it reads the same page image (rendered at the same resolution) once more, in TSV mode,
    alongside MuPDF's pass; the mean of its word confidences (0-100) is reported, and named as
    coming from that program. Without the program it is ``None``, with the reason.

Bounds (:class:`OcrSession`)
    Pages are read one by one in a separate process, so a page that runs past its deadline
    (``page_timeout``) is stopped — the process is ended and a new one started for the next
    page — and a page that fails stays image-only, with the reason, while the book is built.
    The resolution is capped (:data:`MAX_DPI`, and lowered so a page image has at most
    :data:`MAX_PIXELS`), which bounds the memory a page takes.
"""

from __future__ import annotations

import csv
import io
import math
import multiprocessing
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..core.errors import Code, CoreError

__all__ = [
    "DEFAULT_DPI",
    "INSTALL_HINT",
    "MAX_DPI",
    "MAX_PIXELS",
    "OcrEngine",
    "OcrOptions",
    "OcrPage",
    "OcrPlan",
    "OcrSession",
    "find_engine",
    "mean_confidence",
    "page_dpi",
]

DEFAULT_DPI = 300
MAX_DPI = 400
MAX_PIXELS = 40_000_000
"""A page image is rendered at a resolution that keeps it within this many pixels (an A4
page at 300 dpi has 8.7 million)."""
PAGE_TIMEOUT = 180.0
OcrMode = Literal["missing", "all"]

INSTALL_HINT = (
    "Install Tesseract and its language data: Debian/Ubuntu `sudo apt-get install "
    "tesseract-ocr tesseract-ocr-eng` (add `tesseract-ocr-jpn` for Japanese, "
    "`tesseract-ocr-<lang>` for others); macOS `brew install tesseract tesseract-lang`; "
    "Windows: the Tesseract installer from UB Mannheim (github.com/UB-Mannheim/tesseract/wiki), "
    "which installs into C:\\Program Files\\Tesseract-OCR — add that folder to PATH, or set "
    "TESSDATA_PREFIX to its tessdata folder."
)
_LANGUAGE = re.compile(r"[A-Za-z0-9_]{2,40}(?:\+[A-Za-z0-9_]{2,40}){0,7}")
_LIST_LANGS = re.compile(r'List of available languages in "(.+?)"')
_VERSION_ENTRY = 23
"""The component of a ``.traineddata`` file that holds its version string (Tesseract's
``TESSDATA_VERSION``)."""


@dataclass(frozen=True)
class OcrOptions:
    """What ``--ocr`` asked for."""

    mode: OcrMode = "missing"
    """``missing``: pages without a text layer; ``all``: every page."""
    language: str = "eng"
    """Tesseract language codes joined by ``+`` (``jpn+eng``)."""
    dpi: int = DEFAULT_DPI
    page_timeout: float = PAGE_TIMEOUT
    on_page: Callable[[str], None] | None = None
    """Called with one line of progress per page read (the CLI writes it to stderr)."""


@dataclass(frozen=True)
class OcrPlan:
    """OCR to run while a PDF is read: the engine found and what was asked."""

    engine: OcrEngine
    options: OcrOptions


@dataclass(frozen=True)
class OcrEngine:
    """The Tesseract installation found (see :func:`find_engine`)."""

    tessdata: str
    languages: tuple[str, ...]
    """Languages whose data is installed there."""
    program: str | None = None
    """The ``tesseract`` program, when found (used for word confidences)."""
    program_version: str | None = None
    engine_version: str | None = None
    """The version of the Tesseract built into MuPDF, when it can be read."""
    data_versions: Mapping[str, str] = field(default_factory=dict)
    """Language → the version string of its ``.traineddata``, when it has one."""

    def label(self, language: str) -> dict[str, Any]:
        """What a page read by this engine says about it (without the page's figures)."""
        import pymupdf

        data = {lang: self.data_versions[lang] for lang in language.split("+")
                if lang in self.data_versions}
        return {
            "engine": "tesseract",
            "engine_version": self.engine_version,
            "engine_build": f"built into MuPDF {pymupdf.VersionFitz} (PyMuPDF "
                            f"{pymupdf.VersionBind})",
            "language": language,
            **({"language_data": data} if data else {}),
        }


@dataclass
class OcrPage:
    """One page read by OCR, or why it could not be."""

    index: int
    dpi: int
    seconds: float
    blocks: list[tuple[Any, ...]] = field(default_factory=list)
    """MuPDF's ``blocks`` of the OCR text page (page space)."""
    dict: dict[str, Any] | None = None
    """MuPDF's ``dict`` of the OCR text page, when its text is CJK (for line assembly)."""
    words: int = 0
    confidence: float | None = None
    """Mean word confidence, 0-100."""
    confidence_note: str | None = None
    failure: str | None = None


def find_engine(
    language: str,
    *,
    environ: Mapping[str, str] | None = None,
    which: Callable[[str], str | None] = shutil.which,
    run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
) -> OcrEngine:
    """The Tesseract installation that can read ``language``.

    Raises:
        CoreError: INVALID_ARGUMENT for a malformed language; CAPABILITY_UNAVAILABLE when
            Tesseract or a language's data is not installed (the remediation names what to
            install).
    """
    if not _LANGUAGE.fullmatch(language or ""):
        raise CoreError(Code.INVALID_ARGUMENT, f"--ocr-lang {language!r} is not a list of "
                        "Tesseract language codes.", remediation="e.g. --ocr-lang eng or "
                        "--ocr-lang jpn+eng")
    env = os.environ if environ is None else environ
    program = which("tesseract")
    if program is None and sys.platform == "win32":
        guess = Path(env.get("ProgramFiles", r"C:\Program Files")) / "Tesseract-OCR"
        if (guess / "tesseract.exe").is_file():
            program = str(guess / "tesseract.exe")
    listed: str | None = None
    program_version: str | None = None
    if program is not None:
        listed, program_version = _ask_program(program, run)
    folder = env.get("TESSDATA_PREFIX") or listed
    if folder is None and program is not None:
        beside = Path(program).parent / "tessdata"
        folder = str(beside) if beside.is_dir() else None
    if not folder or not Path(folder).is_dir():
        raise CoreError(
            Code.CAPABILITY_UNAVAILABLE,
            "OCR needs Tesseract and its language data, which were not found"
            + (f" (TESSDATA_PREFIX={env['TESSDATA_PREFIX']!r} is not a folder)"
               if env.get("TESSDATA_PREFIX") else
               " (no `tesseract` on PATH and TESSDATA_PREFIX is not set)") + ".",
            details={"language": language},
            remediation=INSTALL_HINT)
    installed = tuple(sorted(p.name[: -len(".traineddata")]
                             for p in Path(folder).glob("*.traineddata")))
    missing = [lang for lang in language.split("+") if lang not in installed]
    if missing:
        packages = " ".join(f"tesseract-ocr-{lang.lower().replace('_', '-')}"
                            for lang in missing)
        raise CoreError(
            Code.CAPABILITY_UNAVAILABLE,
            f"Tesseract has no language data for {', '.join(missing)} in {folder}.",
            details={"tessdata": folder, "installed": list(installed), "missing": missing},
            remediation=f"Install it (Debian/Ubuntu: `sudo apt-get install {packages}`; "
                        "Windows: rerun the Tesseract installer and tick the language), or "
                        f"choose installed ones: {'+'.join(installed[:6]) or 'none'}.")
    versions = {lang: v for lang in language.split("+")
                if (v := _data_version(Path(folder) / f"{lang}.traineddata"))}
    return OcrEngine(tessdata=folder, languages=installed, program=program,
                     program_version=program_version, engine_version=_builtin_version(),
                     data_versions=versions)


def _ask_program(program: str, run: Callable[..., Any]) -> tuple[str | None, str | None]:
    """The tessdata folder and the version the ``tesseract`` program reports."""
    folder = version = None
    try:
        listed = run([program, "--list-langs"], capture_output=True, text=True, timeout=20,
                     check=False)
        found = _LIST_LANGS.search(f"{listed.stdout}\n{listed.stderr}")
        folder = found.group(1) if found else None
        said = run([program, "--version"], capture_output=True, text=True, timeout=20,
                   check=False)
        first = f"{said.stdout}\n{said.stderr}".strip().splitlines()
        version = next((line.split()[1] for line in first
                        if line.lower().startswith("tesseract ") and len(line.split()) > 1),
                       None)
    except (OSError, subprocess.SubprocessError, ValueError):
        pass
    return folder, version


def _data_version(path: Path) -> str | None:
    """The version string a ``.traineddata`` file carries, if it has one."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4)
            (count,) = struct.unpack("<i", head)
            if not 0 < count <= 64:
                return None
            offsets = struct.unpack(f"<{count}q", handle.read(8 * count))
            if count <= _VERSION_ENTRY or offsets[_VERSION_ENTRY] < 0:
                return None
            start = offsets[_VERSION_ENTRY]
            later = [o for o in offsets[_VERSION_ENTRY + 1:] if o > start]
            handle.seek(0, os.SEEK_END)
            end = min(later) if later else handle.tell()
            if end - start > 200:
                return None
            handle.seek(start)
            text = handle.read(end - start).decode("ascii", "replace").strip("\0 \n")
            text = text.split(":[", 1)[0]  # the network spec that follows is no version
            return text if text.isprintable() and text else None
    except (OSError, struct.error):
        return None


def _builtin_version() -> str | None:
    """The version MuPDF's built-in Tesseract reports (``TessBaseAPI::Version``), where its
    library exports the symbol under the Itanium C++ name (Linux, macOS); else None."""
    try:
        import ctypes

        import pymupdf

        folder = Path(pymupdf.__file__).parent
        for lib in sorted(folder.glob("libmupdf.*")):
            if lib.suffix in (".py", ".pyi"):
                continue
            handle = ctypes.CDLL(str(lib))
            version = handle._ZN9tesseract11TessBaseAPI7VersionEv
            version.restype = ctypes.c_char_p
            value = version()
            return value.decode("ascii") if value else None
    except Exception:  # not exported here (Windows), or another layout: unknown
        return None
    return None


def page_dpi(width: float, height: float, dpi: int) -> int:
    """The resolution a page of ``width`` × ``height`` points is read at: ``dpi`` capped at
    :data:`MAX_DPI` and lowered so the image stays within :data:`MAX_PIXELS`."""
    dpi = max(72, min(int(dpi), MAX_DPI))
    pixels = (width / 72 * dpi) * (height / 72 * dpi)
    if pixels > MAX_PIXELS:
        dpi = int(dpi * math.sqrt(MAX_PIXELS / pixels))
    return max(dpi, 50)


def mean_confidence(tsv: str) -> tuple[float | None, int]:
    """The mean confidence (0-100) of the words in Tesseract's TSV output, and their count."""
    total = 0.0
    count = 0
    for row in csv.DictReader(io.StringIO(tsv), delimiter="\t", quoting=csv.QUOTE_NONE):
        try:
            if row.get("level") != "5" or not (row.get("text") or "").strip():
                continue
            conf = float(row.get("conf") or -1)
        except ValueError:
            continue
        if conf >= 0:
            total += conf
            count += 1
    return (round(total / count, 1) if count else None), count


# --- reading pages in a worker process ----------------------------------------------------------


def _worker(conn: Any, pdf: str, tessdata: str) -> None:
    """The OCR process: reads page requests from ``conn`` and answers each one."""
    os.environ.setdefault("PYMUPDF_MESSAGE", "fd:2")
    import pymupdf

    doc = pymupdf.open(pdf)
    flags = pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_CID_FOR_UNKNOWN_UNICODE
    while True:
        request = conn.recv()
        if request is None:
            break
        index, language, dpi = request
        began = time.monotonic()
        try:
            page = doc.load_page(index)
            textpage = page.get_textpage_ocr(flags=flags, language=language, dpi=dpi, full=True,
                                             tessdata=tessdata)
            blocks = [tuple(b) for b in page.get_text("blocks", textpage=textpage)]
            text = "".join(str(b[4]) for b in blocks)
            cjk = sum(1 for ch in text if "\u3040" <= ch <= "\u9fff")
            data = page.get_text("dict", textpage=textpage) if cjk >= 4 else None
            conn.send(("ok", blocks, _plain(data), time.monotonic() - began))
        except Exception as exc:  # reported to the reader; the page stays image-only
            conn.send(("error", f"{type(exc).__name__}: {exc}"[:300], time.monotonic() - began))
    doc.close()


def _plain(data: dict[str, Any] | None) -> dict[str, Any] | None:
    """A ``dict`` text page without images (small, picklable)."""
    if data is None:
        return None
    return {"blocks": [b for b in data.get("blocks", ()) if b.get("type", 0) == 0]}


class OcrSession:
    """Pages of one PDF read by OCR, one at a time, each within its deadline.

    Use as a context manager; the worker process starts with the first page and is ended
    (and restarted for the next page) when a page overruns.
    """

    def __init__(self, pdf: Path, engine: OcrEngine, options: OcrOptions,
                 *, clock: Callable[[], float] = time.monotonic) -> None:
        self.pdf, self.engine, self.options, self.clock = pdf, engine, options, clock
        self._process: Any = None
        self._conn: Any = None
        self._image: str | None = None  # the page image the confidence pass reads

    def __enter__(self) -> OcrSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End the worker process."""
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if process is None:
            return
        try:
            if conn is not None:
                conn.send(None)
            process.join(5)
        except (OSError, EOFError, ValueError):
            pass
        if process.is_alive():
            process.kill()
            process.join(5)
        if conn is not None:
            conn.close()

    def _start(self) -> None:
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe()
        process = context.Process(target=_worker, daemon=True, name="book-agent-ocr",
                                  args=(theirs, str(self.pdf), self.engine.tessdata))
        try:
            process.start()
        finally:
            theirs.close()
        self._process, self._conn = process, ours

    def _stop(self) -> None:
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if process is not None:
            process.kill()
            process.join(5)
        if conn is not None:
            conn.close()

    def read(self, page: Any) -> OcrPage:
        """OCR one page (a PyMuPDF page of the same PDF, for its size and the image the
        confidence pass reads)."""
        began = self.clock()
        deadline = began + self.options.page_timeout
        width, height = float(page.rect.width), float(page.rect.height)
        dpi = page_dpi(width, height, self.options.dpi)
        result = OcrPage(index=page.number, dpi=dpi, seconds=0.0)
        counter = self._confidence_pass(page, dpi)
        try:
            if self._process is None:
                self._start()
            self._conn.send((page.number, self.options.language, dpi))
            if not self._conn.poll(max(0.0, deadline - self.clock())):
                self._stop()
                result.failure = (f"OCR did not finish within {self.options.page_timeout:g} s "
                                  "(stopped)")
            else:
                answer = self._conn.recv()
                if answer[0] == "ok":
                    result.blocks, result.dict = answer[1], answer[2]
                else:
                    result.failure = f"OCR failed: {answer[1]}"
        except (OSError, EOFError, RuntimeError) as exc:
            self._stop()
            result.failure = f"the OCR process ended ({type(exc).__name__})"
        result.confidence, _counted, result.confidence_note = self._collect(counter, deadline)
        result.words = sum(len(str(b[4]).split()) for b in result.blocks if b[6] == 0)
        result.seconds = round(self.clock() - began, 2)
        if self.options.on_page is not None:
            self.options.on_page(_progress_line(result))
        return result

    def _confidence_pass(self, page: Any, dpi: int) -> subprocess.Popen[bytes] | str:
        """Start the ``tesseract`` program on the page image (TSV), or say why not."""
        if self.engine.program is None:
            return "no `tesseract` program found: word confidence unknown"
        try:
            handle, name = tempfile.mkstemp(prefix="book-agent-ocr-", suffix=".png")
            with os.fdopen(handle, "wb") as out:
                out.write(page.get_pixmap(dpi=dpi).tobytes("png"))
            self._image = name
            env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
            return subprocess.Popen(
                [self.engine.program, name, "stdout", "-l", self.options.language,
                 "--dpi", str(dpi), "--tessdata-dir", self.engine.tessdata, "tsv"],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                env=env)
        except (OSError, ValueError, RuntimeError) as exc:
            return f"the confidence pass could not start ({type(exc).__name__})"

    def _collect(self, counter: subprocess.Popen[bytes] | str,
                 deadline: float) -> tuple[float | None, int, str | None]:
        try:
            return self._wait(counter, deadline)
        finally:
            if self._image is not None:
                Path(self._image).unlink(missing_ok=True)
                self._image = None

    def _wait(self, counter: subprocess.Popen[bytes] | str,
              deadline: float) -> tuple[float | None, int, str | None]:
        if isinstance(counter, str):
            return None, 0, counter
        try:
            out, _ = counter.communicate(timeout=max(1.0, deadline - self.clock()))
        except subprocess.TimeoutExpired:
            counter.kill()
            counter.communicate()
            return None, 0, "the confidence pass ran past the page's deadline"
        confidence, words = mean_confidence(out.decode("utf-8", "replace"))
        version = self.engine.program_version or "?"
        return confidence, words, f"mean of the word confidences of tesseract {version} " \
                                  "(TSV) on the same page image"


def _progress_line(page: OcrPage) -> str:
    if page.failure:
        return f"OCR page index {page.index}: failed after {page.seconds:.1f} s: {page.failure}"
    conf = f", mean word confidence {page.confidence:.0f}" if page.confidence is not None else ""
    return (f"OCR page index {page.index}: {page.seconds:.1f} s at {page.dpi} dpi, "
            f"{page.words} words{conf}")
