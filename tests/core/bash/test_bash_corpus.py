"""Every vector of corpus.jsonl is classified as its source says it must be."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.bash import analyze

CORPUS = [
    json.loads(line)
    for line in (Path(__file__).parent / "corpus.jsonl").read_text(encoding="utf-8").split("\n")
    if line.strip()
]


def test_the_corpus_is_large_and_balanced():
    assert len(CORPUS) >= 200
    read_only = sum(vector["read_only"] for vector in CORPUS)
    assert 80 <= read_only <= len(CORPUS) - 80
    for vector in CORPUS:
        assert set(vector) == {"command", "read_only", "why", "source"}
        assert vector["why"] and vector["source"]


@pytest.mark.parametrize("vector", CORPUS, ids=[repr(v["command"])[:80] for v in CORPUS])
def test_vector(vector):
    result = analyze(vector["command"])
    assert result.read_only is vector["read_only"], result.reason
    # A refusal always explains itself; an acceptance never carries a reason.
    assert bool(result.reason) is not vector["read_only"]
