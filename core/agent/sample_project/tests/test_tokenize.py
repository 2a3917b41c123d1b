import unittest

from textstats.tokenize import sentences, words


class WordsTest(unittest.TestCase):
    def test_lower_cases_and_drops_punctuation(self) -> None:
        self.assertEqual(words("Hello, World!"), ["hello", "world"])

    def test_keeps_inner_apostrophes(self) -> None:
        self.assertEqual(words("Don't 'quote' me"), ["don't", "quote", "me"])

    def test_empty_text_has_no_words(self) -> None:
        self.assertEqual(words("  \n "), [])


class SentencesTest(unittest.TestCase):
    def test_splits_after_terminal_punctuation(self) -> None:
        text = "One. Two? Three! Four"
        self.assertEqual(sentences(text), ["One.", "Two?", "Three!", "Four"])


if __name__ == "__main__":
    unittest.main()
