"""Script detection of query terms."""

from __future__ import annotations

import pytest

from readingroom.core.script import Script, detect_script, has_latin


@pytest.mark.parametrize("term,script", [
    ("夏目漱石", Script.han), ("こころ", Script.kana), ("コーヒー", Script.kana),
    ("吾輩は猫である", Script.han_kana), ("Soseki", Script.latin), ("Ｓｏｓｅｋｉ", Script.latin),
    ("Zürich", Script.latin), ("한국 문학", Script.hangul), ("Natsume 漱石", Script.mixed),
    ("978-4-7649-0405-7", Script.none), ("913.6", Script.none), ("々", Script.han),
    ("ｺｺﾛ", Script.kana), ("Москва", Script.mixed),
])
def test_detect(term, script):
    assert detect_script(term) is script


def test_has_latin_ignores_digits():
    assert not has_latin("0387-3250")
    assert has_latin("ISBN 4")
