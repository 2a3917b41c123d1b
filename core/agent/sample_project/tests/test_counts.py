import unittest

from textstats.counts import top_words, word_counts


class WordCountsTest(unittest.TestCase):
    def test_counts_each_word(self) -> None:
        self.assertEqual(word_counts("a b a"), {"a": 2, "b": 1})


class TopWordsTest(unittest.TestCase):
    def test_most_frequent_first(self) -> None:
        text = "the cat and the hat and the bat"
        self.assertEqual(top_words(text, 2), [("the", 3), ("and", 2)])

    def test_ties_in_alphabetical_order(self) -> None:
        text = "pear apple fig apple pear fig kiwi"
        self.assertEqual(top_words(text, 3), [("apple", 2), ("fig", 2), ("pear", 2)])

    def test_zero_gives_nothing(self) -> None:
        self.assertEqual(top_words("a b c", 0), [])

    def test_negative_n_is_an_error(self) -> None:
        with self.assertRaises(ValueError):
            top_words("a b c", -1)


if __name__ == "__main__":
    unittest.main()
