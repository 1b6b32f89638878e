"""Names as a query spells them, matched to the store's spelling."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hindsight import Hindsight
from hindsight.text.names import may_name, resolve, skeleton

NAMES = ["Muhhamed", "Fahim Khan", "Caroline", "Melanie"]


@pytest.mark.parametrize(
    ("query", "read"),
    [
        ("What did Mohammed say about cricket?", "What did Muhhamed say about cricket?"),
        ("What games do Faheem and Muhammad play?", "What games do Fahim and Muhhamed play?"),
        ("What does Mohamed Kahn do?", "What does Muhhamed Khan do?"),
        ("What is Carolyn doing?", "What is Caroline doing?"),
        ("What did Melany say?", "What did Melanie say?"),
        # short forms, one of a name spelled otherwise
        ("Did Mel call?", "Did Melanie call?"),
        ("Did Mo call?", "Did Muhhamed call?"),
        # not names of this store, or too short to tell
        ("Is Maddie coming to Madrid?", "Is Maddie coming to Madrid?"),
        ("What did Mike and Melody do?", "What did Mike and Melody do?"),
        ("Did Ann call?", "Did Ann call?"),
        # lower case is a word, not a name
        ("what did the caroling group sing?", "what did the caroling group sing?"),
    ],
)
def test_a_name_is_read_as_the_store_spells_it(query: str, read: str) -> None:
    assert resolve(query, NAMES) == read


def test_only_a_query_that_may_name_someone_asks_for_names() -> None:
    assert not may_name("What is the deadline for the first sprint?")
    assert not may_name("When did we meet? Tell me where.")
    assert may_name("What did Mohammed say?") and may_name("Did Faheem bowl?")
    assert may_name("Did Mel call?") and not may_name("Did Ann call?")


@pytest.mark.parametrize(
    ("query", "names", "read"),
    [
        ("What did Mike say?", ["Michael"], "What did Michael say?"),
        ("What did Michael say?", ["Mike"], "What did Mike say?"),
        ("What did Mick say?", ["Mikey Ross"], "What did Mikey say?"),  # two short forms
        ("What did Mike say?", ["Mikael"], "What did Mikael say?"),  # of a spelling
        ("Where did Deb go with Jo?", ["Deborah", "Joanna"], "Where did Deborah go with Joanna?"),
        ("What did Alex say?", ["Alexandra"], "What did Alexandra say?"),
        # not the same name, though they look or sound alike
        ("What did Jean say?", ["Jon"], "What did Jean say?"),
        ("What did Bob say?", ["Michael"], "What did Bob say?"),
        ("Will Robert come?", ["William"], "Will Robert come?"),  # a question's opener
    ],
)
def test_a_short_form_is_read_as_the_name_it_stands_for(
    query: str, names: list[str], read: str
) -> None:
    assert resolve(query, names) == read


def test_a_short_form_of_two_known_names_is_left_alone() -> None:
    assert resolve("Did Katie call?", ["Katherine", "Kathleen"]) == "Did Katie call?"
    assert resolve("Did Chris call?", ["Christopher", "Christina"]) == "Did Chris call?"


def test_a_word_close_to_two_names_is_left_alone() -> None:
    assert resolve("Where is Marie?", ["Mary", "Maria"]) == "Where is Marie?"


def test_skeleton() -> None:
    assert skeleton("Muhhamed") == skeleton("Mohammed") == skeleton("Muhammad") == "m*m*d"
    assert skeleton("Catherine") == skeleton("Katherine")
    assert skeleton("Zoë") == skeleton("Zoe") == "z"


words = st.text(alphabet=st.characters(categories=["L", "Zs", "P"]), max_size=60)


@given(words)
def test_no_names_no_change(query: str) -> None:
    assert resolve(query, []) == query


@given(st.lists(st.sampled_from(NAMES), max_size=4))
def test_known_names_stay_as_they_are(names: list[str]) -> None:
    query = "Did " + " and ".join(names) + " meet?"
    assert resolve(query, NAMES) == query


def test_recall_finds_a_speaker_by_another_spelling(hs: Hindsight) -> None:
    hs.retain(
        "chat:names",
        messages=[
            {"role": "user", "speaker": "Muhhamed", "content": "I bowled all afternoon."},
            {"role": "user", "speaker": "Fahim Khan", "content": "I bowled all afternoon."},
            {"role": "user", "speaker": "Caroline", "content": "I bowled all afternoon."},
            {"role": "user", "speaker": "Michael", "content": "I bowled all afternoon."},
        ],
    )
    assert hs.store.speakers("chat:names") == ["Caroline", "Fahim Khan", "Michael", "Muhhamed"]
    for query, speaker in (
        ("What did Mohammed do all afternoon?", "Muhhamed"),
        ("Did Faheem bowl all afternoon?", "Fahim Khan"),
        ("Did Mike bowl all afternoon?", "Michael"),
    ):
        (top, *_) = hs.recall("chat:names", query, kinds=["episode"])
        assert top.memory.provenance.speaker == speaker
        # the keyword channel found the name as the store spells it (the rest of the
        # words are in every turn alike and score nothing)
        assert top.explanation.channels["bm25"].rank == 1
        assert top.explanation.channels["bm25"].score > 0.1
