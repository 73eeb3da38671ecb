#!/usr/bin/env python3
"""Freeze the suite into one onedir bundle, and optionally the release archive.

    python build/freeze.py          → dist/readingroom/ (ndl-mcp, readingroom, _internal/)
    python build/freeze.py --zip    → also dist/readingroom-<version>-<platform>.zip

Every executable is thin (the bootloader and its entry script); the Python modules are in
``_internal/`` once, beside the libraries (see the spec). The report gives what the disk holds
(a file linked twice counted once) and what the release zip holds.

Run it with the project's environment (``.venv``), where PyInstaller is installed with the
test extra. The same spec builds on Windows, macOS and Linux; PyInstaller does not
cross-compile, so a Windows bundle is built on Windows.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import os
import platform
import re
import shutil
import stat
import subprocess
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "build" / "readingroom.spec"
DIST = ROOT / "dist"
WORK = ROOT / "build" / "pyinstaller-tmp"
BUNDLE = DIST / "readingroom"
SOURCE_URL = "https://github.com/readingroom/readingroom"
BUDGET_MIB = 180
"""The most the bundle may hold on disk (issue 19 §7); tests/stdio/test_frozen.py checks it."""

sys.path.insert(0, str(ROOT / "app"))
from readingroom import __version__  # noqa: E402
from readingroom.catalog import BUNDLED_PROGRAMS  # noqa: E402


def executable_names() -> list[str]:
    """Every executable the bundle must hold."""
    suffix = ".exe" if sys.platform == "win32" else ""
    return [f"{n}{suffix}" for n in BUNDLED_PROGRAMS]


def disk_usage(folder: Path) -> tuple[int, int, int, int]:
    """``(bytes, allocated bytes, files, symbolic links)`` under ``folder``, each file once.

    Symbolic links are not followed and a file reached by several hard links counts once, so
    the figures are what the disk holds, not what a walk that follows links would read.
    """
    seen: set[tuple[int, int]] = set()
    size = allocated = files = links = 0
    for parent, _dirs, names in os.walk(folder):
        for name in names:
            st = os.lstat(os.path.join(parent, name))
            links += stat.S_ISLNK(st.st_mode)
            if not stat.S_ISREG(st.st_mode):
                continue
            # Only a file with several links is looked up by inode (some file systems report
            # no inode numbers: there every file would look like the first).
            if st.st_nlink > 1:
                if (st.st_dev, st.st_ino) in seen:
                    continue
                seen.add((st.st_dev, st.st_ino))
            files += 1
            size += st.st_size
            # st_blocks counts 512-byte units where the OS reports it (not on Windows).
            allocated += getattr(st, "st_blocks", 0) * 512 or st.st_size
    return size, allocated, files, links


def describe(folder: Path) -> str:
    """One line for the report: MiB in files, MiB allocated, files, links."""
    size, allocated, files, links = disk_usage(folder)
    return (f"{size / 2**20:.1f} MiB in {files} files ({allocated / 2**20:.1f} MiB allocated"
            f"{f'; {links} symbolic links not followed' if links else ''})")


def freeze() -> Path:
    """Run PyInstaller on the spec and check every executable is in the bundle."""
    began = time.monotonic()
    cmd = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level=WARN",
           "--distpath", str(DIST), "--workpath", str(WORK), str(SPEC)]
    print("freezing:", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, cwd=ROOT)
    missing = [n for n in executable_names() if not (BUNDLE / n).is_file()]
    if missing:
        sys.exit(f"freeze.py: the bundle lacks {', '.join(missing)}")
    print(f"bundle: {BUNDLE}: {describe(BUNDLE)}; {len(executable_names())} executables "
          f"({sum((BUNDLE / n).stat().st_size for n in executable_names()) / 2**20:.1f} MiB "
          f"together), {time.monotonic() - began:.0f} s", file=sys.stderr)
    if disk_usage(BUNDLE)[0] > BUDGET_MIB * 2**20:
        print(f"freeze.py: the bundle is over its budget of {BUDGET_MIB} MiB", file=sys.stderr)
    return BUNDLE


def _requirements(dist_name: str, seen: set[str]) -> set[str]:
    """The distribution and everything it requires at run time (no extras), recursively."""
    key = re.sub(r"[-_.]+", "-", dist_name).lower()
    if key in seen:
        return seen
    try:
        dist = md.distribution(dist_name)
    except md.PackageNotFoundError:
        return seen
    seen.add(key)
    for req in dist.requires or []:
        if "extra ==" in req:
            continue
        marker_ok = True
        if ";" in req:
            from packaging.markers import Marker  # shipped with setuptools/pip's vendor

            marker_ok = Marker(req.split(";", 1)[1]).evaluate()
        if marker_ok:
            _requirements(re.split(r"[\s;<>=!~\[(]", req, maxsplit=1)[0], seen)
    return seen


def licence_name(parts: tuple[str, ...]) -> str:
    """Where a licence file of a distribution goes under its licenses/<name-version>/ folder.

    Its path inside the .dist-info folder, without the `licenses/` folder of PEP 639: numpy
    alone carries 17 licence files, `LICENSE.md` of `random/pcg64` beside that of `random/sfc64`,
    which one folder level would store under one name, the later hiding the earlier.
    """
    inner = list(parts[next(i for i, p in enumerate(parts) if p.endswith(".dist-info")) + 1:])
    if len(inner) > 1 and inner[0] == "licenses":
        inner = inner[1:]
    return "/".join(inner)


def third_party_licences() -> dict[str, list[tuple[str, bytes]]]:
    """Licence files of every bundled third-party distribution, from their metadata."""
    out: dict[str, list[tuple[str, bytes]]] = {}
    for key in sorted(_requirements("readingroom", set()) - {"readingroom"}):
        dist = md.distribution(key)
        files = [f for f in dist.files or [] if re.search(
            r"(licen[cs]e|copying|notice|authors)", f.name, re.I) and ".dist-info" in str(f)]
        label = f"{dist.metadata['Name']}-{dist.version}"
        out[label] = [(licence_name(f.parts), f.read_binary())
                      for f in files if f.locate().is_file()]
        if not out[label]:
            out[label] = [("LICENSE-SUMMARY.txt", (
                f"{dist.metadata['Name']} {dist.version}\nLicense: "
                f"{dist.metadata.get('License-Expression') or dist.metadata.get('License')}\n"
                f"Home: {dist.metadata.get('Home-page') or ''}\n").encode())]
    return out


def git_commit() -> str:
    """The source commit, or 'unknown' outside a git checkout."""
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def make_zip(bundle: Path) -> Path:
    """The release archive: bundle, installer, README, licences and the complete source."""
    plat = {"win32": "windows", "darwin": "macos"}.get(sys.platform, sys.platform)
    top = f"readingroom-{__version__}"
    archive = DIST / f"{top}-{plat}-{platform.machine().lower()}.zip"
    commit = git_commit()
    source = DIST / "source.zip"
    subprocess.run(["git", "archive", "--format=zip", f"--prefix={top}-source/", "-o",
                    str(source), "HEAD"], cwd=ROOT, check=True)
    notice = (
        f"readingroom {__version__} (commit {commit})\n\n"
        "readingroom is free software under the GNU Affero General Public License, version 3 "
        "or (at your option) any later version: see LICENSE.\n\n"
        "The complete corresponding source of this build is included in this archive as "
        f"source/{source.name} (git archive of commit {commit}) and published at "
        f"{SOURCE_URL}.\nThird-party components bundled in readingroom/_internal are listed "
        "with their licence texts under licenses/.\n"
    )
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for path in sorted(bundle.rglob("*")):
            if path.is_file():
                info = zipfile.ZipInfo.from_file(path, f"{top}/{path.relative_to(DIST)}")
                info.compress_type = zipfile.ZIP_DEFLATED
                with path.open("rb") as fh:
                    z.writestr(info, fh.read())
        for path in sorted((ROOT / "installer").rglob("*")):
            if path.is_file() and "tests" not in path.relative_to(ROOT / "installer").parts:
                z.write(path, f"{top}/{path.relative_to(ROOT)}")
        z.write(ROOT / "README.md", f"{top}/README.md")
        z.write(ROOT / "LICENSE", f"{top}/LICENSE")
        z.writestr(f"{top}/SOURCE.txt", notice)
        z.write(source, f"{top}/source/{source.name}")
        for label, files in third_party_licences().items():
            for name, data in files:
                z.writestr(f"{top}/licenses/{label}/{name}", data)
    source.unlink()
    with zipfile.ZipFile(archive) as z:
        entries = z.infolist()
    # A zip holds no links: a symbolic link of the bundle is stored as a copy of its target.
    print(f"release archive: {archive} ({archive.stat().st_size / 2**20:.1f} MiB; "
          f"{sum(i.file_size for i in entries) / 2**20:.1f} MiB unpacked in {len(entries)} "
          "files)", file=sys.stderr)
    return archive


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--zip", action="store_true", help="also make the release archive")
    parser.add_argument("--keep-work", action="store_true", help="keep build/pyinstaller-tmp")
    args = parser.parse_args()
    bundle = freeze()
    if not args.keep_work:
        shutil.rmtree(WORK, ignore_errors=True)
    if args.zip:
        make_zip(bundle)
    print(bundle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
