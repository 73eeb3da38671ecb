"""Fixtures of the setup tests: the host tests' own (one definition, in tests/hosts/conftest.py)."""

from __future__ import annotations

from ..hosts.conftest import install_dir, ndl_only_catalogue

__all__ = ["install_dir", "ndl_only_catalogue"]
