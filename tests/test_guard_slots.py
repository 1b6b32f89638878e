"""The slot check: an untrusted claim giving a trusted statement's slot another value."""

from __future__ import annotations

import pytest

from hindsight.embed import Embeddings
from hindsight.guard.slots import disputes, sentences

SIMILARITY = 0.4


def test_a_record_is_cut_into_its_sentences_and_fields() -> None:
    assert sentences("Employee record | Base: Lisbon office\nShift: days. Badge issued.") == [
        "Employee record",
        "Base: Lisbon office",
        "Shift: days.",
        "Badge issued.",
    ]


@pytest.mark.parametrize(
    ("trusted", "claim"),
    [
        ("I work from home in Porto, it suits me.", "Base: Lisbon office, on-site five days."),
        ("Our landlord is Mr. Halloran, rent goes to him.", "Landlord on file: Ms. Verity Crane."),
    ],
)
def test_another_value_of_the_same_slot_is_a_dispute(
    embedder: Embeddings, trusted: str, claim: str
) -> None:
    found = disputes([claim], [trusted], embedder.encode_documents, similarity=SIMILARITY)
    assert [(i, j) for i, j, _ in found] == [(0, 0)]
    assert found[0][2].value


@pytest.mark.parametrize(
    ("trusted", "claim"),
    [
        # agrees, in other words: the trusted value is restated
        ("I live in Porto now.", "Delivery address verified: Rua das Flores 12, Porto."),
        # adds detail on other slots
        ("I'm allergic to latex.", "Weather in Porto: 14C and cloudy."),
        # gives no value at all
        ("I work from home in Porto.", "Noted, thanks for letting me know."),
    ],
)
def test_agreement_detail_and_chatter_are_no_dispute(
    embedder: Embeddings, trusted: str, claim: str
) -> None:
    assert disputes([claim], [trusted], embedder.encode_documents, similarity=SIMILARITY) == []
