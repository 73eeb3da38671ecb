"""book-agent over MCP: round trips, render, start-up and memory, with ratios in one run.

On the generated 1,000-page mixed Latin/Japanese PDF of ``bench/book_ingest.py``:

- ``book_search`` MCP round trip (a real ``book-agent mcp`` stdio subprocess; request written
  to the answer parsed) p50 and p95, against the same queries through the in-process Core
  (``BookService.search``); target p95 <= 20 ms.
- ``book_render_page`` p50 at the default DPI (150), PNG decoded size reported.
- spawn -> initialize of ``book-agent mcp`` against a minimal v1 SDK server (bench/startup.py's),
  interleaved, medians; target <= 1.3x.
- peak RSS (VmHWM) of the server process after 200 mixed calls; target <= 250 MB; and again
  with a semantic model loaded: the test-built tiny model2vec model (tests/book/search), with
  the book's records embedded by it, which says little about a real model's own size; and
  with a real model2vec model (``--real-model DIR``, default: the one the
  ``tokenlearn-static-model`` test dependency ships, read in place): its load time, hybrid
  ``book_search`` p50/p95 (semantic ok) and peak RSS.

Linux reads peak RSS from /proc; elsewhere it says so.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "app"), str(ROOT), str(Path(__file__).resolve().parent)]

from book_ingest import make_synthetic_pdf  # noqa: E402
from readingroom.core.rawstdio import RawStdioClient  # noqa: E402
from startup import MINIMAL, time_to_initialize  # noqa: E402

TARGET_P95_MS = 20.0
TARGET_STARTUP = 1.3
TARGET_RSS_MB = 250.0


def server_argv(data: Path, *extra: str) -> list[str]:
    """``python -m readingroom.book --data-dir DATA mcp ...``."""
    return [sys.executable, "-m", "readingroom.book", "--data-dir", str(data), "mcp", *extra]


def peak_rss_mb(pid: int) -> float | None:
    """The process's peak resident set (VmHWM) in MB, or None where /proc is missing."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024 / 1e6
    except OSError:
        return None
    return None


def pct(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of ``values``, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def queries(planted: list[tuple[str, int]], latin: list[str], japanese: list[str],
            n: int, seed: int = 3) -> list[str]:
    """A mix: planted phrases, one and two common Latin words, two-character Japanese."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        kind = i % 4
        if kind == 0:
            out.append(planted[rng.randrange(len(planted))][0])
        elif kind == 1:
            out.append(rng.choice(latin[:300]))
        elif kind == 2:
            out.append(f"{rng.choice(latin[:300])} {rng.choice(latin[:300])}")
        else:
            out.append(rng.choice(japanese)[:2])
    return out


def round_trips(client: RawStdioClient, qs: list[str]) -> list[float]:
    """Milliseconds per book_search round trip."""
    times = []
    for q in qs:
        began = time.perf_counter()
        result = client.call_tool("book_search", {"book_id": "big", "query": q})
        times.append((time.perf_counter() - began) * 1000)
        assert not result["isError"], result
    return times


def core_times(data: Path, qs: list[str]) -> list[float]:
    """Milliseconds per in-process BookService.search (warm)."""
    from readingroom.book.service import BookService

    service = BookService(data)
    service.search("big", qs[0])
    times = []
    for q in qs:
        began = time.perf_counter()
        service.search("big", q)
        times.append((time.perf_counter() - began) * 1000)
    return times


def mixed_calls(client: RawStdioClient, qs: list[str], n: int) -> dict[str, int]:
    """``n`` calls of every read tool in turn (search, entry, markdown, locate, source,
    render, status, skill); counts by tool."""
    counts: dict[str, int] = {}
    rng = random.Random(5)
    record_id = None
    for i in range(n):
        kind = i % 8
        if kind == 0 or record_id is None:
            name, args = "book_search", {"book_id": "big", "query": qs[i % len(qs)]}
        elif kind == 1:
            name, args = "book_read_entry", {"book_id": "big", "record_id": record_id,
                                             "neighbors": 1}
        elif kind == 2:
            start = rng.randrange(1, 20000)
            name, args = "book_read_markdown", {"book_id": "big", "start_line": start,
                                                "end_line": start + 80}
        elif kind in (3, 4):
            name, args = "book_locate_source", {"book_id": "big", "record_id": record_id}
        elif kind == 5:
            name, args = "book_render_page", {"book_id": "big",
                                              "page_index": rng.randrange(1000)}
        elif kind == 6:
            name, args = "book_status", {"book_id": "big"}
        else:
            name, args = "book_get_skill", {"book_id": "big"}
        result = client.call_tool(name, args)
        data = result["structuredContent"] if result.get("structuredContent") else {}
        if name == "book_search" and data.get("items"):
            record_id = data["items"][0]["record_id"]
        if name == "book_locate_source" and data.get("items") and kind == 4:
            client.call_tool("book_read_source", {"locator": data["items"][0]["locator"]})
            counts["book_read_source"] = counts.get("book_read_source", 0) + 1
        counts[name] = counts.get(name, 0) + 1
    return counts


def installed_real_model() -> Path | None:
    """The model folder the ``tokenlearn-static-model`` package ships, if it is installed."""
    import importlib.util

    spec = importlib.util.find_spec("static_model")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    return folder if (folder / "model.safetensors").is_file() else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--searches", type=int, default=400)
    parser.add_argument("--renders", type=int, default=20)
    parser.add_argument("--starts", type=int, default=11, help="start-up runs of each")
    parser.add_argument("--calls", type=int, default=200, help="mixed calls before RSS")
    parser.add_argument("--real-model", type=Path, default=None,
                        help="a real model2vec folder (default: tokenlearn-static-model's)")
    args = parser.parse_args()
    real = args.real_model or installed_real_model()
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        pdf = root / "synthetic.pdf"
        planted, latin, japanese = make_synthetic_pdf(pdf, args.pages)
        from tests.book.search.tiny_model import make_model

        from readingroom.book.search.semantic import SemanticConfig
        from readingroom.book.service import BookService

        data, sem_data = root / "data", root / "data-semantic"
        BookService(data).init(pdf, book_id="big")
        model = make_model(root / "tiny-model")
        BookService(sem_data).init(pdf, book_id="big", semantic=SemanticConfig(model_dir=model))
        print(f"book: {args.pages} generated pages (bench/book_ingest.py), "
              f"{pdf.stat().st_size / 2**20:.1f} MiB")
        qs = queries(planted, latin, japanese, args.searches)

        with RawStdioClient(server_argv(data)) as client:
            client.initialize(timeout=60)
            round_trips(client, qs[:20])  # warm: the package and index opened once
            mcp_ms = round_trips(client, qs)
            render_ms = []
            for i in range(args.renders):
                began = time.perf_counter()
                result = client.call_tool("book_render_page", {"book_id": "big",
                                                               "page_index": (i * 37) % 1000})
                render_ms.append((time.perf_counter() - began) * 1000)
                shown = result["structuredContent"]["data"]
            counts = mixed_calls(client, qs, args.calls)
            rss = peak_rss_mb(client.proc.pid)
            client.close()
        core_ms = core_times(data, qs)
        p50, p95 = pct(mcp_ms, 0.5), pct(mcp_ms, 0.95)
        c50, c95 = pct(core_ms, 0.5), pct(core_ms, 0.95)
        print(f"book_search MCP round trip ({len(qs)} queries): p50 {p50:.2f} ms, p95 "
              f"{p95:.2f} ms (target p95 <= {TARGET_P95_MS:g} ms)")
        print(f"  in-process Core: p50 {c50:.2f} ms, p95 {c95:.2f} ms; MCP / Core p50 "
              f"{p50 / c50:.1f}x, overhead p50 {p50 - c50:.2f} ms")
        ok &= p95 <= TARGET_P95_MS
        print(f"book_render_page at the default DPI ({shown['dpi']:g}): p50 "
              f"{pct(render_ms, 0.5):.1f} ms, p95 {pct(render_ms, 0.95):.1f} ms "
              f"({shown['width']}x{shown['height']} px, about {shown['bytes'] / 1e3:.0f} kB)")
        total, mix = sum(counts.values()), ", ".join(f"{k} {v}" for k, v in counts.items())
        print(f"peak RSS after {total} mixed calls ({mix}): "
              + (f"{rss:.0f} MB (target <= {TARGET_RSS_MB:g} MB)" if rss else "not measured "
                 "(no /proc)"))
        ok &= rss is None or rss <= TARGET_RSS_MB

        with RawStdioClient(server_argv(sem_data, "--semantic-model", str(model))) as client:
            client.initialize(timeout=60)
            for _ in range(5000):  # until the background load has ended
                state = client.call_tool("book_status", {"book_id": "big"})[
                    "structuredContent"]["data"]["server"]["search"]["semantic"]["state"]
                if state != "warming":
                    break
            sem_ms = round_trips(client, qs[:100])
            counts = mixed_calls(client, qs, args.calls)
            sem_rss = peak_rss_mb(client.proc.pid)
            client.close()
        print(f"with the tiny test-built model2vec model ({state}): book_search p50 "
              f"{pct(sem_ms, 0.5):.2f} ms, p95 {pct(sem_ms, 0.95):.2f} ms; peak RSS after "
              f"{sum(counts.values())} mixed calls "
              + (f"{sem_rss:.0f} MB (target <= {TARGET_RSS_MB:g} MB; a real model adds its own "
                 "size)" if sem_rss else "not measured"))
        ok &= sem_rss is None or sem_rss <= TARGET_RSS_MB

        if real is None:
            print("with a real model2vec model: not measured (pip install "
                  "tokenlearn-static-model, or --real-model DIR)")
        else:
            real_data = root / "data-real"
            began = time.perf_counter()
            BookService(real_data).init(pdf, book_id="big",
                                        semantic=SemanticConfig(model_dir=real))
            init_s = time.perf_counter() - began
            with RawStdioClient(server_argv(real_data, "--semantic-model", str(real))) as client:
                client.initialize(timeout=120)
                began = time.perf_counter()
                while time.perf_counter() - began < 300:  # until the background load ends
                    state = client.call_tool("book_status", {"book_id": "big"})[
                        "structuredContent"]["data"]["server"]["search"]["semantic"]["state"]
                    if state != "warming":
                        break
                    time.sleep(0.05)
                load_s = time.perf_counter() - began
                modes = client.call_tool("book_search", {"book_id": "big", "query": qs[0]})[
                    "structuredContent"]["data"]["modes"]
                real_ms = round_trips(client, qs[:200])
                counts = mixed_calls(client, qs, args.calls)
                real_rss = peak_rss_mb(client.proc.pid)
                client.close()
            print(f"with a real model2vec model ({real}; init with embeddings {init_s:.1f} s, "
                  f"server load {load_s:.1f} s, {state}, semantic {modes.get('semantic')}): "
                  f"hybrid book_search p50 {pct(real_ms, 0.5):.2f} ms, p95 "
                  f"{pct(real_ms, 0.95):.2f} ms (no target: the {TARGET_P95_MS:g} ms one is "
                  "lexical's; compare the tiny model's line); peak RSS after "
                  f"{sum(counts.values())} mixed calls "
                  + (f"{real_rss:.0f} MB" if real_rss else "not measured"))

        minimal = root / "minimal_server.py"
        minimal.write_text(MINIMAL, encoding="utf-8")
        ours_argv, base_argv = server_argv(data), [sys.executable, str(minimal)]
        time_to_initialize(ours_argv)
        time_to_initialize(base_argv)
        ours, base = [], []
        for _ in range(args.starts):
            ours.append(time_to_initialize(ours_argv))
            base.append(time_to_initialize(base_argv))
        m_ours, m_base = statistics.median(ours), statistics.median(base)
        print(f"spawn -> initialize ({args.starts} interleaved runs): book-agent mcp median "
              f"{m_ours * 1000:.0f} ms, minimal v1 SDK server {m_base * 1000:.0f} ms, ratio "
              f"{m_ours / m_base:.2f}x (target <= {TARGET_STARTUP:g}x)")
        ok &= m_ours / m_base <= TARGET_STARTUP
    print("all targets met" if ok else "A TARGET WAS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
