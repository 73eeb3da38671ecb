"""Frozen start-up: spawn → initialize of the frozen ndl-mcp against ``python -m`` in one run.

    python bench/frozen.py [--bundle dist/readingroom] [-n 15]

Runs are interleaved; medians are compared (target: frozen ≤ 1.3× ``python -m``, issue 19 §7).
Also prints what the bundle holds on disk, counted as ``build/freeze.py`` counts it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from startup import time_to_initialize  # bench/ is on sys.path when run as a script

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "build"))
from freeze import describe  # noqa: E402

TARGET = 1.3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bundle", default=str(ROOT / "dist" / "readingroom"))
    parser.add_argument("-n", type=int, default=15)
    args = parser.parse_args()
    bundle = Path(args.bundle)
    exe = bundle / ("ndl-mcp.exe" if sys.platform == "win32" else "ndl-mcp")
    if not exe.is_file():
        sys.exit(f"no frozen ndl-mcp at {exe}: run `python build/freeze.py` first")
    frozen_argv, module_argv = [str(exe)], [sys.executable, "-m", "readingroom.ndl"]
    time_to_initialize(frozen_argv)
    time_to_initialize(module_argv)
    frozen, module = [], []
    for _ in range(args.n):
        frozen.append(time_to_initialize(frozen_argv))
        module.append(time_to_initialize(module_argv))
    m_frozen, m_module = statistics.median(frozen), statistics.median(module)
    print(f"bundle: {bundle} — {describe(bundle)}")
    print(f"python -m readingroom.ndl: median {m_module * 1000:.0f} ms "
          f"(min {min(module) * 1000:.0f}, max {max(module) * 1000:.0f})")
    print(f"frozen ndl-mcp: median {m_frozen * 1000:.0f} ms "
          f"(min {min(frozen) * 1000:.0f}, max {max(frozen) * 1000:.0f})")
    print(f"frozen / python -m: {m_frozen / m_module:.2f}x (target <= {TARGET}x)")
    return 0 if m_frozen / m_module <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
