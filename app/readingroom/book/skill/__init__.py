"""The Book Skill: a deterministic Agent Skill folder that tells an assistant how to use a book.

- :mod:`.build` generates it from a :class:`SkillBook`;
- :mod:`.validate` holds the Agent Skills rules and :func:`validate_skill`;
- :mod:`.export` copies it into a skills folder or writes it as a zip.
"""

from __future__ import annotations

from .build import SkillBook, SkillEntry, build_skill, skill_name
from .export import export_skill
from .validate import ALLOWED_KEYS, MAX_BODY_LINES, MAX_DESCRIPTION_WORDS, validate_skill

__all__ = [
    "ALLOWED_KEYS",
    "MAX_BODY_LINES",
    "MAX_DESCRIPTION_WORDS",
    "SkillBook",
    "SkillEntry",
    "build_skill",
    "export_skill",
    "skill_name",
    "validate_skill",
]
