"""Difficulty levels (SPEC §3, "Difficulty levels"): each level declared once, as data.

Level 1 is the standard benchmark. Higher levels are additive: they draw their streams
under labels of their own and never change a level-1 task.
"""

from __future__ import annotations

LEVELS: tuple[int, ...] = (1,)
