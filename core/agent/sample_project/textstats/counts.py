"""Word counts and the most frequent words."""

from __future__ import annotations

from collections import Counter

from .tokenize import words


def word_counts(text: str) -> dict[str, int]:
    """How often each word occurs in `text`."""
    return dict(Counter(words(text)))


def top_words(text: str, n: int = 10) -> list[tuple[str, int]]:
    """The `n` most frequent words with their counts, most frequent first.

    Words with the same count come in alphabetical order, so the result is stable.
    """
    if n < 0:
        raise ValueError(f"n must be 0 or more, not {n}")
    counts = word_counts(text)
    ranked = sorted(counts.items(), key=lambda item: (item[1], item[0]), reverse=True)
    return ranked[:n]
