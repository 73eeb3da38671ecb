"""Versioned packages: atomic publish, no trace of a failed build, concurrent publishers."""

from __future__ import annotations

import json
import threading

import pytest

from readingroom.book.package import Registry, book_id_from_name, check_book_id
from readingroom.core.errors import Code, CoreError


def build(reg: Registry, book_id: str, marker: str):
    folder = reg.new_build_dir(book_id)
    (folder / "payload.txt").write_text(marker)
    return folder


def finalize_manifest(folder, version):
    (folder / "manifest.json").write_text(json.dumps({"version": version}))


def test_publish_makes_versions_and_switches_current(tmp_path):
    reg = Registry(tmp_path)
    p1 = reg.publish("b", build(reg, "b", "one"), replace=False, finalize=finalize_manifest)
    p2 = reg.publish("b", build(reg, "b", "two"), replace=True, finalize=finalize_manifest)
    assert (p1.version, p2.version) == (1, 2)
    assert reg.get("b").version == 2 and reg.get("b", 1).version == 1
    assert (reg.get("b").path / "payload.txt").read_text() == "two"
    assert reg.list_ids() == ["b"]


def test_duplicate_without_replace_is_refused_and_leaves_no_version(tmp_path):
    reg = Registry(tmp_path)
    reg.publish("b", build(reg, "b", "one"), replace=False, finalize=finalize_manifest)
    second = build(reg, "b", "two")
    with pytest.raises(CoreError) as e:
        reg.publish("b", second, replace=False, finalize=finalize_manifest)
    assert e.value.code is Code.BOOK_EXISTS
    reg.discard(second)
    assert sorted(p.name for p in (tmp_path / "books" / "b").iterdir()
                  if not p.name.startswith(".")) == ["CURRENT", "v1"]


def test_failure_in_finalize_leaves_the_registry_untouched(tmp_path):
    reg = Registry(tmp_path)
    reg.publish("b", build(reg, "b", "one"), replace=False, finalize=finalize_manifest)

    def broken(folder, version):
        raise OSError("disk full")

    folder = build(reg, "b", "two")
    with pytest.raises(OSError):
        reg.publish("b", folder, replace=True, finalize=broken)
    reg.discard(folder)
    assert reg.get("b").version == 1 and not (tmp_path / "books" / "b" / "v2").exists()


def test_concurrent_publishers_get_distinct_versions(tmp_path):
    reg = Registry(tmp_path)
    folders = [build(reg, "b", str(i)) for i in range(6)]
    versions, errors = [], []

    def go(folder):
        try:
            versions.append(reg.publish("b", folder, replace=True,
                                        finalize=finalize_manifest).version)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=go, args=(f,)) for f in folders]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors and sorted(versions) == [1, 2, 3, 4, 5, 6]
    assert reg.get("b").version in versions


def test_unregistered_book_is_not_found_and_remove_deletes(tmp_path):
    reg = Registry(tmp_path)
    with pytest.raises(CoreError) as e:
        reg.get("nope")
    assert e.value.code is Code.BOOK_NOT_FOUND
    reg.publish("b", build(reg, "b", "x"), replace=False, finalize=finalize_manifest)
    assert reg.remove("b") == 1 and reg.list_ids() == []


@pytest.mark.parametrize("bad", ["", "../x", "A", ".hidden", "a/b", "x" * 65, "a..b", "abc\n",
                                 "con", "nul", "com1", "aux.txt", "abc."])
def test_book_ids_are_safe_folder_names(bad):
    with pytest.raises(CoreError):
        check_book_id(bad)


def test_id_from_file_name():
    assert book_id_from_name("GeoTopo Komprimiert.pdf") == "geotopo-komprimiert"
    assert book_id_from_name("吾輩は猫である.epub") == "book"
    assert book_id_from_name("Café-Müller.md") == "cafe-muller"


def test_remove_is_busy_while_a_live_build_exists_and_stale_builds_are_swept(tmp_path):
    reg = Registry(tmp_path)
    reg.publish("b", build(reg, "b", "one"), replace=False, finalize=finalize_manifest)
    live = build(reg, "b", "two")  # owned by this (live) process
    dead = tmp_path / "books" / "b" / live.name.replace(live.name.split("-")[1], "p0")
    dead.mkdir()  # pid 0 is never a live owner
    assert reg.clean_stale_builds("b") == 1 and not dead.exists()
    with pytest.raises(CoreError) as e:
        reg.remove("b")
    assert e.value.code is Code.BOOK_BUSY and reg.get("b").version == 1
    reg.discard(live)
    assert reg.remove("b") == 1 and not (tmp_path / "books" / "b").exists()


def test_a_failed_first_build_leaves_no_book_folder(tmp_path):
    reg = Registry(tmp_path)
    reg.discard(build(reg, "b", "x"))
    assert not (tmp_path / "books" / "b").exists()
