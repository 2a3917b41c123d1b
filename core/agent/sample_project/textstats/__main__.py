"""`python -m textstats [FILE] [--top N]`: a summary of a text file, or of stdin."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .counts import top_words
from .readability import average_sentence_length, reading_ease
from .tokenize import sentences, words


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="textstats", description=__doc__)
    parser.add_argument("file", nargs="?", help="the text file (default: stdin)")
    parser.add_argument("--top", type=int, default=5, help="how many frequent words to show")
    args = parser.parse_args(argv)
    if args.file:
        with open(args.file, encoding="utf-8") as handle:
            text = handle.read()
    else:
        text = sys.stdin.read()
    print(f"words:      {len(words(text))}")
    print(f"sentences:  {len(sentences(text))}")
    print(f"avg length: {average_sentence_length(text):.1f} words")
    print(f"ease:       {reading_ease(text)}")
    for word, count in top_words(text, args.top):
        print(f"  {count:5d}  {word}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
