"""Secrets out of what is recorded or shown: request parameters with secret-looking names.

One rule for the receipt builder (:mod:`.receipt`), the ledger (which redacts again, in depth)
and the HTTP client's URLs and logs (:mod:`.http`): a key named like a secret keeps its name
and loses its value. Standard library only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["DEFAULT_SECRET_NAMES", "REDACTED", "redact"]

REDACTED = "[REDACTED]"
DEFAULT_SECRET_NAMES: frozenset[str] = frozenset(
    {
        "appid",
        "api_key",
        "apikey",
        "key",
        "token",
        "access_token",
        "password",
        "secret",
        "client_secret",
        "auth",
        "authorization",
    }
)


def redact(
    params: Mapping[str, Any], secret_names: Iterable[str] = DEFAULT_SECRET_NAMES
) -> dict[str, Any]:
    """A copy of ``params`` with the values of secret-looking keys replaced by ``[REDACTED]``.

    Args:
        params: request parameters.
        secret_names: key names to redact, compared case-insensitively.
    """
    secrets = {name.lower() for name in secret_names}
    return {k: (REDACTED if str(k).lower() in secrets else v) for k, v in params.items()}
