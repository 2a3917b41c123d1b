import unittest

from textstats.readability import average_sentence_length, reading_ease, syllables


class ReadabilityTest(unittest.TestCase):
    def test_average_sentence_length(self) -> None:
        self.assertEqual(average_sentence_length("One two. Three four five six."), 3.0)

    def test_no_sentences(self) -> None:
        self.assertEqual(average_sentence_length(""), 0.0)

    def test_syllables(self) -> None:
        self.assertEqual(syllables("cat"), 1)
        self.assertEqual(syllables("cake"), 1)
        self.assertEqual(syllables("reading"), 2)

    def test_simple_text_reads_easily(self) -> None:
        self.assertGreater(reading_ease("The cat sat on the mat. It was a good cat."), 90)


if __name__ == "__main__":
    unittest.main()
