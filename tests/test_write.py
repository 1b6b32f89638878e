"""The write path: episodes, extraction, dedupe, supersession, atomicity."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hindsight import Hindsight, Kind, Source, ValidationError
from hindsight.store import Filter
from hindsight.write.decide import embedding_text, in_third_person

pytestmark = pytest.mark.backends  # the write path's SQL and transactions


def _current(hs: Hindsight, owner: str, kind: Kind) -> list[str]:
    return sorted(m.content for m in hs.list_memories(owner, kinds=[kind]))


def test_retain_keeps_the_turn_verbatim_and_extracts_memories(hs: Hindsight) -> None:
    result = hs.retain("user:alice", "I live in Paris. I love jazz.", session_id="s1")
    assert len(result.episodes) == 1
    (episode,) = hs.list_memories("user:alice", kinds=[Kind.EPISODE])
    assert episode.content == "I live in Paris. I love jazz."
    assert episode.provenance.session_id == "s1"
    assert _current(hs, "user:alice", Kind.FACT) == ["User lives in Paris"]
    assert _current(hs, "user:alice", Kind.PREFERENCE) == ["User loves jazz"]
    for mid in result.created:
        memory = hs.get(mid)
        assert memory.provenance.derived_from == [episode.id]
        assert 0 < memory.confidence <= 1
        assert memory.embedding_model == hs.embedder.model_id


def test_explicit_kind_stores_content_as_given(hs: Hindsight) -> None:
    result = hs.retain(
        "agent:planner", "Deploys need a green CI first", kind="fact", source="agent"
    )
    (memory,) = hs.store.get(result.created)
    assert memory.kind is Kind.FACT and memory.provenance.source is Source.AGENT
    assert memory.content == "Deploys need a green CI first"
    assert hs.list_memories("agent:planner", kinds=[Kind.EPISODE]) == []


def test_repeated_statement_reinforces_instead_of_copying(hs: Hindsight) -> None:
    hs.retain("user:alice", "I love jazz.")
    (before,) = hs.list_memories("user:alice", kinds=[Kind.PREFERENCE])
    result = hs.retain("user:alice", "Honestly, I love jazz!")
    assert result.created == [] and result.updated == [before.id]
    (after,) = hs.list_memories("user:alice", kinds=[Kind.PREFERENCE])
    assert after.id == before.id
    assert after.confidence > before.confidence
    assert len(after.provenance.derived_from) == 2


def test_near_duplicate_direct_writes_merge(hs: Hindsight) -> None:
    first = hs.retain("user:bob", "Bob's sister is called Anna.", kind="fact")
    second = hs.retain("user:bob", "Bob's sister is called Anna", kind="fact")
    assert second.created == [] and second.updated == first.created


def test_different_owner_or_kind_is_never_a_duplicate(hs: Hindsight) -> None:
    hs.retain("user:alice", "Likes green tea", kind="preference")
    other_owner = hs.retain("user:bob", "Likes green tea", kind="preference")
    other_kind = hs.retain("user:alice", "Likes green tea", kind="fact")
    assert other_owner.created and other_kind.created


def test_new_value_supersedes_the_old_and_history_keeps_it(hs: Hindsight) -> None:
    hs.retain("user:alice", "I live in Paris.", observed_at="2024-01-10")
    result = hs.retain("user:alice", "I moved to Berlin.", observed_at="2024-06-01")
    assert len(result.superseded) == 1
    old_id, new_id = result.superseded[0]
    old, new = hs.get(old_id), hs.get(new_id)
    assert "Paris" in old.content and "Berlin" in new.content
    assert old.valid_to == new.observed_at and old.superseded_by == new.id
    assert new.valid_to is None
    assert _current(hs, "user:alice", Kind.FACT) == [new.content]
    history = hs.list_memories("user:alice", kinds=[Kind.FACT], include_history=True)
    assert {m.id for m in history} == {old.id, new.id}
    found = [r.memory.id for r in hs.recall("user:alice", "where does the user live")]
    assert new.id in found and old.id not in found


def test_history_imported_out_of_order_keeps_the_latest_current(hs: Hindsight) -> None:
    hs.retain("user:alice", "I moved to Berlin.", observed_at="2024-06-01")
    result = hs.retain("user:alice", "I live in Paris.", observed_at="2024-01-10")
    (old_id, new_id) = result.superseded[0]
    assert "Paris" in hs.get(old_id).content and "Berlin" in hs.get(new_id).content
    assert _current(hs, "user:alice", Kind.FACT) == [hs.get(new_id).content]


def test_retaining_the_same_turn_twice_is_idempotent(hs: Hindsight) -> None:
    args = {"session_id": "s1", "observed_at": "2024-05-01T10:00:00Z"}
    first = hs.retain("user:alice", "I live in Paris and I hate cilantro.", **args)
    count = hs.store.count(Filter(owners=["user:alice"], current_only=False))
    second = hs.retain("user:alice", "I live in Paris and I hate cilantro.", **args)
    assert second.episodes == first.episodes
    assert second.created == [] and second.updated == []
    assert hs.store.count(Filter(owners=["user:alice"], current_only=False)) == count


def test_messages_keep_speaker_role_and_time(hs: Hindsight) -> None:
    hs.retain(
        "user:carol",
        messages=[
            {
                "role": "user",
                "content": "I work at Acme.",
                "speaker": "Carol",
                "observed_at": "2023-05-08T13:56:00",
            },
            {"role": "assistant", "content": "Noted, you work at Acme."},
        ],
        session_id="s-7",
    )
    episodes = hs.list_memories("user:carol", kinds=[Kind.EPISODE])
    by_role = {m.metadata["role"]: m for m in episodes}
    assert by_role["user"].provenance.speaker == "Carol"
    assert by_role["user"].observed_at.isoformat() == "2023-05-08T13:56:00+00:00"
    assert by_role["assistant"].provenance.source is Source.AGENT
    facts = hs.list_memories("user:carol", kinds=[Kind.FACT])
    assert [f.content for f in facts] == ["Carol works at Acme"]  # not from the assistant


@pytest.mark.backends("sqlite")
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"owner": "alice", "content": "hi"}, "invalid owner"),
        ({"owner": "user:alice\n", "content": "hi"}, "invalid owner"),
        ({"owner": "user:alice", "content": "   "}, "content is empty"),
        ({"owner": "user:alice", "content": "x" * 40_000}, "limit"),
        ({"owner": "user:alice", "content": "bad \ud800 text"}, "UTF-8"),
        ({"owner": "user:alice", "content": "hi", "observed_at": "yesterday"}, "ISO 8601"),
        ({"owner": "user:alice", "content": "hi", "source": "robot"}, "source"),
        ({"owner": "user:alice", "content": "hi", "kind": "gossip"}, "kind"),
        ({"owner": "user:alice", "content": "hi", "metadata": {"x": {1, 2}}}, "metadata"),
        ({"owner": "user:alice", "messages": [{"role": "user", "content": ""}]}, "messages[0]"),
        ({"owner": "user:alice", "messages": [{"role": "pirate", "content": "arr"}]}, "role"),
        ({"owner": "user:alice", "content": "hi", "session_id": "bad id!"}, "session"),
        ({"owner": "user:alice", "content": "hi", "session_id": "s1\n"}, "session"),
        ({"owner": "user:alice", "messages": [{"content": "hi"}] * 1_001}, "the limit is 1000"),
        ({"owner": "user:alice", "content": "\u200b\u200d"}, "content is empty"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(
    hs: Hindsight, kwargs: dict[str, object], message: str
) -> None:
    hs.retain("user:alice", "I love jazz.")
    before = hs.stats()
    owner, rest = kwargs["owner"], {k: v for k, v in kwargs.items() if k != "owner"}
    with pytest.raises(ValidationError, match=message.replace("[", r"\[").replace("]", r"\]")):
        hs.retain(owner, **rest)  # type: ignore[arg-type]
    assert hs.stats() == before


def test_a_failing_write_leaves_the_store_as_it_was(hs: Hindsight) -> None:
    hs.retain("user:alice", "I love jazz.")
    before = replace(hs.stats(), size_bytes=0)  # PostgreSQL keeps the rolled-back rows' pages
    vectors = hs.store.vectors  # type: ignore[attr-defined]
    original = vectors.put
    calls = 0

    def fail_on_second(*args: object) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise RuntimeError("disk full")
        original(*args)

    vectors.put = fail_on_second
    with pytest.raises(RuntimeError):
        hs.retain("user:alice", "I live in Rome. I hate olives.")
    del vectors.put  # the backend's own again
    assert replace(hs.stats(), size_bytes=0) == before
    assert [r.memory.content for r in hs.recall("user:alice", "Rome olives")] != []
    assert all("Rome" not in m.content for m in hs.list_memories("user:alice", limit=100))


def test_identical_turns_of_one_call_stay_two_turns(hs: Hindsight) -> None:
    turns = [
        {"role": "user", "content": "Thanks!", "observed_at": "2024-05-01T10:00:00Z"},
        {"role": "assistant", "content": "You're welcome.", "observed_at": "2024-05-01T10:00:00Z"},
        {"role": "user", "content": "Thanks!", "observed_at": "2024-05-01T10:00:00Z"},
    ]  # one timestamp for the whole transcript, as imported history often has
    first = hs.retain("user:alice", messages=turns, session_id="s1")
    assert len(set(first.episodes)) == 3
    again = hs.retain("user:alice", messages=turns, session_id="s1")
    assert again.episodes == first.episodes  # retained twice: still three turns


def test_similar_texts_about_different_numbers_or_names_stay_apart(hs: Hindsight) -> None:
    first = hs.retain("user:ops", "The printer is in Room 101", kind="fact")
    second = hs.retain("user:ops", "The printer is in Room 102", kind="fact")
    third = hs.retain("user:ops", "Alice's sister is called Anna", kind="fact")
    fourth = hs.retain("user:ops", "Alice's sister is called Hanna", kind="fact")
    for result in (first, second, third, fourth):
        assert result.created and not result.updated


@pytest.mark.parametrize(
    ("text", "embedded"),
    [
        ("I went to a support group", "Caroline went to a support group"),
        ("I'm sure my dog likes me", "Caroline is sure Caroline's dog likes Caroline"),
        (
            "I\u2019ve been there, I'd go, I'll see",
            "Caroline has been there, Caroline would go, Caroline will see",
        ),
        ("Is it mine? I am fine, IT works", "Is it Caroline's? Caroline is fine, IT works"),
        # typed in a chat, without apostrophes; "Id" and "ill" are words of their own
        (
            "im sure, Ive been, ill be there, Id card",
            "Caroline is sure, Caroline has been, ill be there, Id card",
        ),
        ("Imagine my image", "Imagine Caroline's image"),
    ],
)
def test_a_named_speakers_turn_is_embedded_in_the_third_person(text: str, embedded: str) -> None:
    assert in_third_person(text, "Caroline") == embedded


def test_what_is_embedded_names_the_speaker_of_a_turn_only(hs: Hindsight) -> None:
    hs.retain(
        "user:emb",
        messages=[{"role": "user", "speaker": "Caroline", "content": "I live in Paris"}],
    )
    (episode,) = hs.list_memories("user:emb", kinds=["episode"])
    assert embedding_text(episode) == "Caroline: Caroline live in Paris"  # verbs stay as said
    (fact,) = hs.list_memories("user:emb", kinds=["fact"])
    assert embedding_text(fact) == fact.content


def test_an_instruction_is_embedded_as_the_requests_it_governs(hs: Hindsight) -> None:
    owner = "user:instr"
    hs.retain(owner, "Always format dates as day-month-year when I ask about deadlines.")
    hs.retain(owner, "Always answer in bullet points when I ask about deadlines.")
    hs.retain(owner, "Always format dates as day-month-year when I ask about deadlines!")
    instructions = hs.list_memories(owner, kinds=["preference"])
    # one condition, two different instructions: both kept; the repeat merged
    assert sorted(m.content for m in instructions) == [
        "User wants the assistant to always answer in bullet points when User asks about deadlines",
        "User wants the assistant to always format dates as day-month-year when User asks "
        "about deadlines",
    ]
    assert {embedding_text(m) for m in instructions} == {"deadlines"}
    for line in ("The grant report is almost done.", "I moved the review to Friday."):
        hs.retain(owner, line)
    found = [r.memory.id for r in hs.recall(owner, "When is the final submission due?", k=4)]
    assert {m.id for m in instructions} <= set(found)
