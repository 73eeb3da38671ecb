"""Hypothesis strategies that damage a real upstream answer in the ways upstreams do.

Every provider's property test draws from these: start from a canned or real sample answer,
change one place in it (a wrong type, a null, a huge or negative number, a very deep value, a
missing key, an emptied container, a number where a list belongs), and check that the server
answers with a valid result or a structured error — never a fabricated zero, never
``INTERNAL_ERROR``.

Two families:

- :func:`json_mutants` for JSON answers (``dict``/``list`` trees);
- :func:`xml_mutants` for XML answers (bytes in, bytes out; the document is parsed with the
  project's hardened parser, so a mutant is always well-formed XML unless the mutation is
  "truncate", which cuts the bytes).

Example counts: the suite runs a bounded number per provider (``PROPERTY_EXAMPLES``, default
40, ``.ci/run`` included); ``READINGROOM_PROPERTY_EXAMPLES`` raises it for a longer search.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

__all__ = [
    "PROPERTY_EXAMPLES",
    "WRONG_VALUES",
    "json_mutants",
    "json_paths",
    "property_settings",
    "xml_mutants",
]

PROPERTY_EXAMPLES = int(os.environ.get("READINGROOM_PROPERTY_EXAMPLES", "40"))


def property_settings(examples: int | None = None) -> settings:
    """Hypothesis settings for a malformed-answer property: bounded, no deadline, derandomised.

    Derandomised so that a failure in CI reproduces locally from the same seed; no per-example
    deadline because a loopback round trip on a busy 2-core machine varies.
    """
    return settings(
        max_examples=examples or PROPERTY_EXAMPLES,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                               HealthCheck.function_scoped_fixture],
        database=None,
    )


def _deep(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = {"d": [value]}
    return value


# Values an upstream has been seen to put where something else belongs.
WRONG_VALUES: tuple[Any, ...] = (
    None,
    "oops",
    "",
    "many",
    0,
    -1,
    9,
    10**30,
    1e308,
    True,
    [],
    {},
    {"a": 1},
    [None, None, 3],
    ["oops"],
    [{}],
)


def json_paths(
    value: Any, prefix: tuple[Any, ...] = (), limit: int = 4000
) -> list[tuple[Any, ...]]:
    """Every path (tuple of keys and indices) inside a JSON tree, the root included.

    Long lists contribute their first three and last elements only, so a 100-record answer
    does not make every path a record field.
    """
    paths: list[tuple[Any, ...]] = [prefix]
    stack: list[tuple[tuple[Any, ...], Any]] = [(prefix, value)]
    while stack and len(paths) < limit:
        path, node = stack.pop()
        children: list[tuple[Any, Any]] = []
        if isinstance(node, dict):
            children = list(node.items())
        elif isinstance(node, list):
            indices = list(range(len(node)))
            if len(indices) > 4:
                indices = [*indices[:3], indices[-1]]
            children = [(i, node[i]) for i in indices]
        for key, child in children:
            child_path = (*path, key)
            paths.append(child_path)
            stack.append((child_path, child))
    return paths


def _get(tree: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        tree = tree[key]
    return tree


def _set(tree: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    parent = _get(tree, path[:-1])
    parent[path[-1]] = value
    return tree


def _delete(tree: Any, path: tuple[Any, ...]) -> Any:
    if not path:
        return {}
    parent = _get(tree, path[:-1])
    del parent[path[-1]]
    return tree


def json_mutants(original: Any) -> st.SearchStrategy[tuple[str, Any]]:
    """Strategy of ``(description, mutated copy)`` for one JSON answer.

    The description names the path and the mutation, for the failure message.
    """
    # Paths grouped by depth, a depth drawn first: the containers near the root (where a
    # wrong type turns a whole page into "nothing") are drawn as often as the many leaves.
    by_depth: dict[int, list[tuple[Any, ...]]] = {}
    for path in json_paths(original):
        by_depth.setdefault(len(path), []).append(path)
    depths = sorted(by_depth)
    # A JSON round trip copies a large answer several times faster than copy.deepcopy.
    frozen = json.dumps(original)

    @st.composite
    def mutant(draw: Callable[..., Any]) -> tuple[str, Any]:
        depth = draw(st.sampled_from(depths))
        path = draw(st.sampled_from(by_depth[depth]))
        kind = draw(st.sampled_from(["replace", "delete", "deep", "empty", "wrap"]))
        tree = json.loads(frozen)
        where = "/".join(str(p) for p in path) or "<root>"
        if kind == "delete" and path:
            return f"delete {where}", _delete(tree, path)
        if kind == "deep":
            depth = draw(st.sampled_from([50, 200, 900]))
            return f"{where} = {depth}-deep value", _set(tree, path, _deep(depth))
        if kind == "empty":
            node = _get(tree, path)
            empty: Any = {} if isinstance(node, dict) else [] if isinstance(node, list) else ""
            return f"{where} emptied", _set(tree, path, empty)
        if kind == "wrap":
            return f"{where} wrapped in a list", _set(tree, path, [_get(tree, path)])
        value = draw(st.sampled_from(WRONG_VALUES))
        return f"{where} = {value!r}", _set(tree, path, copy.deepcopy(value))

    return mutant()


def xml_mutants(original: bytes) -> st.SearchStrategy[tuple[str, bytes]]:
    """Strategy of ``(description, mutated bytes)`` for one XML answer.

    Mutations: drop an element, replace an element's text (a word, a negative, a huge number,
    nothing), replace its children with text, duplicate it, rename it, or truncate the bytes.
    """
    from lxml import etree

    from readingroom.core.xmlsafe import parse_xml

    root = parse_xml(original)
    # Element indices grouped by depth, a depth drawn first (as for JSON).
    by_depth: dict[int, list[int]] = {}
    for index, element in enumerate(el for el in root.iter() if isinstance(el.tag, str)):
        by_depth.setdefault(sum(1 for _ in element.iterancestors()), []).append(index)
    depths = sorted(by_depth)

    @st.composite
    def mutant(draw: Callable[..., Any]) -> tuple[str, bytes]:
        kind = draw(st.sampled_from(["drop", "text", "children", "duplicate", "rename",
                                     "truncate"]))
        if kind == "truncate":
            cut = draw(st.integers(min_value=0, max_value=max(0, len(original) - 1)))
            return f"truncated at byte {cut}", original[:cut]
        tree = parse_xml(original)
        nodes = [el for el in tree.iter() if isinstance(el.tag, str)]
        index = draw(st.sampled_from(by_depth[draw(st.sampled_from(depths))]))
        node = nodes[index]
        name = etree.QName(node).localname
        if kind == "drop" and node.getparent() is not None:
            node.getparent().remove(node)
            what = f"drop <{name}> #{index}"
        elif kind == "children":
            for child in list(node):
                node.remove(child)
            node.text = "oops"
            what = f"<{name}> #{index} children replaced by text"
        elif kind == "duplicate" and node.getparent() is not None:
            node.addnext(copy.deepcopy(node))
            what = f"<{name}> #{index} duplicated"
        elif kind == "rename":
            node.tag = "unexpected"
            what = f"<{name}> #{index} renamed"
        else:
            text = draw(st.sampled_from(["many", "-1", str(10**30), "", "NaN", "9"]))
            for child in list(node):
                node.remove(child)
            node.text = text
            what = f"<{name}> #{index} text = {text!r}"
        return what, etree.tostring(tree, xml_declaration=True, encoding="UTF-8")

    return mutant()
