"""The NDL notification gate: ndl-mcp is registered with hosts only once its date is recorded.

Section 17 of the NDL Search API terms asks continuous users to tell the library about their use
through a form, whether or not a usage application is required. Nothing upstream checks it, so
the installer does: ``readingroom setup --notification-filed YYYY-MM-DD`` records the date in
``NDL-API-NOTIFICATION.txt`` in the data folder, and a date recorded once counts on later runs.
:data:`KEEPER` is the :class:`~readingroom.core.declaration.GateKeeper` that ``SERVER.gate``
names; setup and ``install-host`` reach it only through the declaration.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from ..core.declaration import GateStatus
from ..core.files import write_atomically

__all__ = [
    "KEEPER",
    "NDL_FORM_URL",
    "NOTIFICATION_FILENAME",
    "SECTION_17_REQUEST",
    "NotificationDateError",
    "NotificationGate",
    "NotificationRecord",
    "NotificationRecordError",
    "notification_path",
    "parse_filed_date",
    "read_notification",
    "record_notification",
]

NDL_FORM_URL = "https://form2.ndl.go.jp/form/pub/ndl07/api"
"""The NDL's form for API users (利用申請・利用届)."""

NOTIFICATION_FILENAME = "NDL-API-NOTIFICATION.txt"

SECTION_17_REQUEST = (
    "Section 17 of the NDL Search API terms (「APIのご利用について」) asks everyone who uses "
    "the API continuously to tell the National Diet Library their contact details and how they "
    "use it, through the form below, 「事前の利用申請の要否にかかわらず」 (whether or not a "
    "prior usage application is required of them). Nothing is sent back: no key, no approval. "
    "readingroom registers ndl-mcp with your hosts once you have sent the form and recorded "
    "the date you sent it."
)
"""What the NDL asks, in plain words, for the message shown when no date is recorded."""

_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class NotificationDateError(ValueError):
    """A ``--notification-filed`` value that is not a past or present ISO calendar date."""


class NotificationRecordError(ValueError):
    """``NDL-API-NOTIFICATION.txt`` exists but does not hold a valid record."""


@dataclass(frozen=True)
class NotificationRecord:
    """The recorded notification: when it was filed and when that was recorded here."""

    filed: date
    recorded: date
    path: Path


def parse_filed_date(text: str, *, today: date | None = None) -> date:
    """Validate a filing date: ``YYYY-MM-DD``, a real calendar date, not after ``today``.

    Raises:
        NotificationDateError: saying which rule the value broke.
    """
    value = text.strip()
    if not _ISO_DATE.fullmatch(value):
        raise NotificationDateError(
            f"{text!r} is not a date in the form YYYY-MM-DD (for example 2026-08-19)"
        )
    try:
        filed = date.fromisoformat(value)
    except ValueError:
        raise NotificationDateError(f"{value} is not a calendar date") from None
    reference = today or date.today()
    if filed > reference:
        raise NotificationDateError(
            f"{value} is in the future (today is {reference.isoformat()}); give the date the "
            "form was sent"
        )
    return filed


def notification_path(data_dir: str | os.PathLike[str]) -> Path:
    """Where the record lives in ``data_dir``."""
    return Path(data_dir) / NOTIFICATION_FILENAME


def _field(text: str, label: str) -> date:
    match = re.search(rf"^{label}:\s*(\S+)\s*$", text, re.MULTILINE | re.IGNORECASE)
    if not match:
        raise NotificationRecordError(f"no {label!r} line")
    try:
        return date.fromisoformat(match.group(1))
    except ValueError:
        raise NotificationRecordError(f"{label}: {match.group(1)!r} is not a date") from None


def read_notification(data_dir: str | os.PathLike[str]) -> NotificationRecord | None:
    """The record in ``data_dir``, or None when there is none.

    Raises:
        NotificationRecordError: the file exists but is unreadable or incomplete.
    """
    path = notification_path(data_dir)
    if not path.is_file():
        return None
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise NotificationRecordError(f"{path}: {exc}") from None
    try:
        return NotificationRecord(_field(text, "date filed"), _field(text, "date recorded"), path)
    except NotificationRecordError as exc:
        raise NotificationRecordError(f"{path}: {exc}") from None


def record_notification(
    data_dir: str | os.PathLike[str], filed: date, *, today: date | None = None
) -> NotificationRecord:
    """Record ``filed`` in ``data_dir`` (the same date already recorded is kept as it was)."""
    try:
        existing = read_notification(data_dir)
    except NotificationRecordError:
        existing = None
    if existing is not None and existing.filed == filed:
        return existing
    recorded = today or date.today()
    path = notification_path(data_dir)
    write_atomically(
        path,
        "NDL Search API notification (section 17 of the NDL Search API terms)\n"
        f"date filed: {filed.isoformat()}\n"
        f"date recorded: {recorded.isoformat()}\n"
        f"form: {NDL_FORM_URL}\n",
    )
    return NotificationRecord(filed, recorded, path)


class NotificationGate:
    """ndl-mcp's gate: open once a notification date is recorded in the data folder."""

    def status(self, data_dir: Path) -> GateStatus:
        """Open with the recorded dates, closed when none (or an unreadable record) is there."""
        try:
            record = read_notification(data_dir)
        except NotificationRecordError as exc:
            return GateStatus(False, f"the notification record is unreadable ({exc})")
        if record is None:
            return GateStatus(False, "no NDL notification date is recorded")
        return GateStatus(True, f"NDL notification: filed {record.filed.isoformat()}, recorded "
                                f"{record.recorded.isoformat()} ({record.path})")

    def record(self, data_dir: Path, value: str, *, today: date | None = None) -> GateStatus:
        """Validate ``value`` as the filing date and record it.

        Raises:
            NotificationDateError: not a past or present ``YYYY-MM-DD`` date (a ValueError).
        """
        filed = parse_filed_date(value, today=today)
        record_notification(data_dir, filed, today=today)
        return self.status(data_dir)

    def check(self, value: str, *, today: date | None = None) -> None:
        """Validate ``value`` without recording it (so a bad date changes nothing).

        Raises:
            NotificationDateError: as :meth:`record`.
        """
        parse_filed_date(value, today=today)

    def explanation(self) -> list[str]:
        """What the NDL asks, and where its form is."""
        return [SECTION_17_REQUEST, f"Form: {NDL_FORM_URL}"]


KEEPER = NotificationGate()
"""The keeper named by ``readingroom.ndl.SERVER.gate``."""
