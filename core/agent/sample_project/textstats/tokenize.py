"""Splitting text into words and sentences."""

from __future__ import annotations

import re

# Letters, digits and inner apostrophes: "don't" is one word, "'quoted'" is "quoted".
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def words(text: str) -> list[str]:
    """The words of `text`, lower-cased, in order."""
    return [match.group(0).lower() for match in _WORD.finditer(text)]


def sentences(text: str) -> list[str]:
    """The sentences of `text`, split after '.', '!' or '?'; empty ones are dropped."""
    return [part.strip() for part in _SENTENCE_END.split(text) if part.strip()]
