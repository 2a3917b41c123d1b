"""Small, dependency-free text statistics."""

from .counts import top_words, word_counts
from .readability import average_sentence_length, reading_ease
from .tokenize import sentences, words

__all__ = [
    "average_sentence_length",
    "reading_ease",
    "sentences",
    "top_words",
    "word_counts",
    "words",
]
__version__ = "0.1.0"
