"""Average sentence length and a rough reading-ease score."""

from __future__ import annotations

import re

from .tokenize import sentences, words

_VOWEL_GROUPS = re.compile(r"[aeiouy]+")


def average_sentence_length(text: str) -> float:
    """Words per sentence; 0.0 for text without any."""
    found = sentences(text)
    if not found:
        return 0.0
    return len(words(text)) / len(found)


def syllables(word: str) -> int:
    """A rough syllable count: groups of vowels, a silent final 'e' left out."""
    groups = len(_VOWEL_GROUPS.findall(word.lower()))
    if word.lower().endswith("e") and groups > 1:
        groups -= 1
    return max(1, groups)


def reading_ease(text: str) -> float:
    """The Flesch reading-ease score: higher is easier, 60-70 is plain English."""
    found = words(text)
    if not found:
        return 0.0
    per_sentence = average_sentence_length(text)
    per_word = sum(syllables(word) for word in found) / len(found)
    return round(206.835 - 1.015 * per_sentence - 84.6 * per_word, 1)
