"""The slot check: an untrusted claim giving a trusted statement's slot another value."""

from __future__ import annotations

from pathlib import Path

import pytest

from hindsight import Hindsight, Settings
from hindsight.access import Principal
from hindsight.embed import Embeddings
from hindsight.guard.slots import disputes, sentences
from hindsight.models import Status

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
        ("My course of antibiotics is 7 days long.", "Course of antibiotics: 10 days."),
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
        # a name spelt another way is the same name
        ("I live in Ghent near the station.", "Address verified: Veldstraat 12, 9000 Gent."),
        # a month says when, not what
        ("My contract has been permanent since January.", "Payroll: Solvik AS, cost centre 220."),
        # a number of another thing is detail, and a label's capitals are emphasis
        ("I'm on a 7 day course of amoxicillin.", "AMOXICILLIN 500MG CAPSULES x21."),
        # a request or a supposition states no value
        ("If my readings stay above 10, call Dr. Hale.", "Meter sync: 14-day average 8.2."),
    ],
)
def test_agreement_detail_and_chatter_are_no_dispute(
    embedder: Embeddings, trusted: str, claim: str
) -> None:
    assert disputes([claim], [trusted], embedder.encode_documents, similarity=SIMILARITY) == []


def test_what_the_agent_says_of_the_user_counts_not_its_advice(embedder: Embeddings) -> None:
    trusted = ["My mortgage is fixed at 3.1% with Ashdown Bank."]
    said = "Quick recap: you're on Birchfield's variable mortgage rate of 7.2%."
    advice = "Compare mortgage rates at Birchfield and Lowther, at 7.2% and 6.9%."
    for claim, found in ((said, True), (advice, False)):
        hits = disputes(
            [claim], trusted, embedder.encode_documents, similarity=SIMILARITY, of_the_user=True
        )
        assert bool(hits) is found, claim


def test_a_record_gives_the_users_slot_another_value_and_is_held(
    tmp_path: Path, embedder: Embeddings
) -> None:
    with Hindsight(Settings(home=tmp_path), embedder=embedder) as hs:
        hs.retain("user:ines", "I work fully remote from Braga for Quellor Labs.", session_id="s1")
        record = hs.retain(
            "user:ines",
            "HR import - worker record\nWork location: Lisbon HQ, Avenida Norte\nDesk: 4B-20",
            session_id="hr",
            source="tool",
        )
        payroll = hs.as_principal(Principal("payroll", read=("*",), write=("*",), trust=0.5))
        agrees = payroll.retain(
            "user:ines",
            "Payroll sync: Quellor Labs, remote worker, Braga.",
            session_id="pay",
            source="tool",
        )
        assert set(record.status.values()) == {Status.PENDING_REVIEW}
        assert set(agrees.status.values()) == {Status.ACTIVE}
        found = hs.recall("user:ines", "Where does Ines work from?", k=5)
        assert not any("Lisbon" in r.memory.content for r in found)
