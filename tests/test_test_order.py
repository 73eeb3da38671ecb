"""The order modules are handed to the test workers: the slowest first (tests/conftest.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.conftest import order_slowest_modules_first


@dataclass
class _Item:
    nodeid: str
    marks: tuple[str, ...] = ()

    def get_closest_marker(self, name: str) -> Any:
        return name if name in self.marks else None


@dataclass
class _Cache:
    seconds: dict[str, float] = field(default_factory=dict)

    def get(self, key: str, default: Any) -> Any:
        assert key.startswith("readingroom/module-seconds")
        return self.seconds or default


@dataclass
class _Config:
    cache: _Cache
    quick: bool = False

    def getoption(self, name: str) -> Any:
        assert name == "quick"
        return self.quick


def _order(items: list[_Item], remembered: dict[str, float]) -> list[str]:
    config: Any = _Config(_Cache(remembered))
    order_slowest_modules_first(config, items)  # type: ignore[arg-type]
    return [item.nodeid for item in items]


ITEMS = [
    ("tests/core/test_a.py::one", ()), ("tests/core/test_a.py::two", ()),
    ("tests/book/test_b.py::one", ("slow",)), ("tests/book/test_b.py::two", ()),
    ("tests/stdio/test_c.py::one", ("stdio",)),
    ("tests/hosts_real/test_d.py::one", ("stdio",)),
    ("tests/core/test_e.py::one", ()),
]


def test_a_fresh_clone_orders_by_kind_and_keeps_each_module_whole_and_in_order():
    got = _order([_Item(n, m) for n, m in ITEMS], {})
    assert got == ["tests/hosts_real/test_d.py::one", "tests/stdio/test_c.py::one",
                   "tests/book/test_b.py::one", "tests/book/test_b.py::two",
                   "tests/core/test_a.py::one", "tests/core/test_a.py::two",
                   "tests/core/test_e.py::one"]


def test_remembered_seconds_win_over_the_kind():
    remembered = {"tests/core/test_e.py": 90.0, "tests/hosts_real/test_d.py": 1.0}
    got = _order([_Item(n, m) for n, m in ITEMS], remembered)
    assert got[0] == "tests/core/test_e.py::one"
    assert got.index("tests/stdio/test_c.py::one") < got.index("tests/hosts_real/test_d.py::one")
    # Each module's tests stay together, in the file's order.
    assert got.index("tests/book/test_b.py::one") + 1 == got.index("tests/book/test_b.py::two")


@pytest.mark.parametrize("quick", [False, True])
def test_the_quick_tier_remembers_its_own_seconds(quick: bool):
    seen: list[str] = []

    class Cache(_Cache):
        def get(self, key: str, default: Any) -> Any:
            seen.append(key)
            return default

    config: Any = _Config(Cache(), quick=quick)
    order_slowest_modules_first(config, [_Item("tests/core/test_a.py::one")])  # type: ignore[list-item]
    assert seen == ["readingroom/module-seconds" + ("-quick" if quick else "")]
