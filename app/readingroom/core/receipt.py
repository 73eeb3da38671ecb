"""Receipts: the one way every server records a search in the shared ledger.

:func:`deposit` builds the entry (redacting secrets from the parameters and hashing query and
parameters), writes it in a worker thread so the event loop never waits on the ledger's lock,
and puts the :class:`~readingroom.core.envelope.Receipt` and any ``RECEIPT_NOT_DEPOSITED`` /
``RECEIPT_WRITE_FAILED`` diagnostic on the envelope. It never raises: a search is not lost for
want of a receipt.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import anyio

from . import ledger
from .clock import Clock, SystemClock
from .envelope import Envelope, Level, Receipt, utc_now_iso
from .errors import Code
from .settings import ENV_RECEIPT_LOG

__all__ = ["deposit"]

log = logging.getLogger("readingroom.receipt")


async def deposit(
    env: Envelope,
    *,
    query: str,
    params: Mapping[str, Any],
    providers: Sequence[str],
    endpoint: str | None,
    outcome: str,
    result_ids: Sequence[str] = (),
    extra: Mapping[str, Any] | None = None,
    secret_names: Sequence[str] = (),
    clock: Clock | None = None,
    environ: Mapping[str, str] | None = None,
) -> Receipt:
    """Deposit the receipt of the search ``env`` answers, and record it on ``env``.

    Args:
        env: the envelope (success or failure) about to be sent.
        query: the normalised query sent upstream (e.g. the CQL).
        params: the request parameters sent; secret values are redacted before hashing.
        providers: the upstream sets searched.
        endpoint: the upstream URL (no query string).
        outcome: ``ok``, ``empty`` or the error code.
        result_ids: identifiers of the records returned, in order.
        extra: server-specific fields of the ledger line (e.g. ``normalized_terms``).
        secret_names: parameter names to redact besides the suite's defaults.
        clock: where ``issued_at`` comes from (tests pin it).
        environ: where ``MCP_RECEIPT_LOG`` is read (default ``os.environ``).
    """
    names = (*ledger.DEFAULT_SECRET_NAMES, *secret_names)
    safe_params = dict(ledger.redact(params, names))
    qhash = ledger.query_hash(query, safe_params)
    issued = utc_now_iso((clock or SystemClock()).now())
    ids = [str(i) for i in result_ids]
    entry: dict[str, Any] = {
        "server": env.server,
        "operation": env.operation,
        "issued_at": issued,
        "query": query,
        **(extra or {}),
        "params": safe_params,
        "providers": list(providers),
        "endpoint": endpoint,
        "query_hash": qhash,
        "result_ids": ids,
        "total": env.result.total if env.result else None,
        "returned": env.result.returned if env.result else 0,
        "outcome": outcome,
    }
    result = await anyio.to_thread.run_sync(
        lambda: ledger.deposit(entry, env=environ), abandon_on_cancel=True
    )
    env.receipt = Receipt(issued_at=issued, query_hash=qhash, result_ids=ids,
                          deposited=result.deposited, ledger_hash=result.ledger_hash)
    if result.code is Code.RECEIPT_NOT_DEPOSITED:
        env.diagnose(Level.info, Code.RECEIPT_NOT_DEPOSITED, result.message,
                     hint=f"Set {ENV_RECEIPT_LOG} to keep a verifiable record of searches.")
    elif result.code is Code.RECEIPT_WRITE_FAILED:
        log.warning("receipt not written: %s", result.message)
        env.diagnose(Level.warning, Code.RECEIPT_WRITE_FAILED, result.message)
    return env.receipt
