"""The NDL notification gate: a past ISO calendar date, recorded once, read on later runs."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import platformdirs
import pytest

from readingroom.core.platform import Machine, default_data_dir
from readingroom.ndl import SERVER
from readingroom.ndl import notification as gate

TODAY = date(2026, 9, 1)


def test_a_valid_date_parses():
    assert gate.parse_filed_date("2026-08-19", today=TODAY) == date(2026, 8, 19)
    assert gate.parse_filed_date(" 2026-09-01 ", today=TODAY) == TODAY


@pytest.mark.parametrize("text, message", [
    ("2026-02-30", "not a calendar date"),
    ("2026-13-01", "not a calendar date"),
    ("26-1-1", "YYYY-MM-DD"),
    ("2026-1-01", "YYYY-MM-DD"),
    ("20260819", "YYYY-MM-DD"),
    ("2026-08-19T10:00", "YYYY-MM-DD"),
    ("yesterday", "YYYY-MM-DD"),
    ("", "YYYY-MM-DD"),
    ("2026-09-02", "in the future"),
])
def test_malformed_and_future_dates_are_refused(text, message):
    with pytest.raises(gate.NotificationDateError, match=message):
        gate.parse_filed_date(text, today=TODAY)


def test_record_then_read(tmp_path: Path):
    assert gate.read_notification(tmp_path) is None
    record = gate.record_notification(tmp_path / "data", date(2026, 8, 19), today=TODAY)
    assert record.path == tmp_path / "data" / "NDL-API-NOTIFICATION.txt"
    text = record.path.read_text(encoding="utf-8")
    assert "date filed: 2026-08-19\n" in text and "date recorded: 2026-09-01\n" in text
    assert gate.NDL_FORM_URL in text
    assert gate.read_notification(tmp_path / "data") == record


def test_the_same_date_again_keeps_the_first_recording(tmp_path: Path):
    first = gate.record_notification(tmp_path, date(2026, 8, 19), today=TODAY)
    again = gate.record_notification(tmp_path, date(2026, 8, 19), today=date(2026, 10, 1))
    assert again.recorded == first.recorded == TODAY
    changed = gate.record_notification(tmp_path, date(2026, 9, 20), today=date(2026, 10, 1))
    assert (changed.filed, changed.recorded) == (date(2026, 9, 20), date(2026, 10, 1))


def test_an_incomplete_record_is_an_error(tmp_path: Path):
    (tmp_path / gate.NOTIFICATION_FILENAME).write_text("date filed: soon\n", encoding="utf-8")
    with pytest.raises(gate.NotificationRecordError, match="not a date"):
        gate.read_notification(tmp_path)


def test_the_request_text_names_section_17_and_the_form():
    assert gate.NDL_FORM_URL == "https://form2.ndl.go.jp/form/pub/ndl07/api"
    assert "Section 17" in gate.SECTION_17_REQUEST
    assert "事前の利用申請の要否にかかわらず" in gate.SECTION_17_REQUEST


def test_default_data_dir_is_outside_appdata_on_windows(tmp_path: Path):
    windows = Machine(home=tmp_path / "alice", appdata=tmp_path / "alice" / "AppData",
                          platform="win32")
    assert default_data_dir(windows) == tmp_path / "alice" / "ReadingRoom"
    linux = Machine(home=tmp_path, platform="linux")
    assert default_data_dir(linux) == platformdirs.user_data_path("readingroom",
                                                                       appauthor=False)


def test_the_declared_gate_is_this_keeper_and_opens_once_a_date_is_recorded(tmp_path: Path):
    keeper = SERVER.gate.resolve()
    assert keeper is gate.KEEPER
    closed = keeper.status(tmp_path)
    assert not closed.open and "no NDL notification date" in closed.detail
    with pytest.raises(ValueError, match="future"):
        keeper.check("2026-09-02", today=TODAY)
    assert not (tmp_path / gate.NOTIFICATION_FILENAME).exists()
    opened = keeper.record(tmp_path, "2026-08-19", today=TODAY)
    assert opened.open and "filed 2026-08-19" in opened.detail
    assert keeper.status(tmp_path) == opened
    assert any(gate.NDL_FORM_URL in paragraph for paragraph in keeper.explanation())


def test_an_unreadable_record_keeps_the_gate_closed(tmp_path: Path):
    (tmp_path / gate.NOTIFICATION_FILENAME).write_text("date filed: soon\n", encoding="utf-8")
    status = gate.KEEPER.status(tmp_path)
    assert not status.open and "unreadable" in status.detail
