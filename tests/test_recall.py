"""The read path: channels, fusion, filters, budget, explanations, isolation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from hindsight import Hindsight, Kind, Settings, StoreError, ValidationError
from hindsight.embed import Embeddings
from hindsight.models import Source
from hindsight.recall.rank import Rerank
from hindsight.store import Filter

pytestmark = pytest.mark.backends  # the read path's searches and filters

FACTS = [
    ("Alice's cat is named Whiskers", "2024-01-05"),
    ("The quarterly report is due on Friday", "2024-02-10"),
    ("Alice is allergic to peanuts", "2024-03-15"),
    ("The staging server runs Ubuntu 22.04 with kernel zx-9187", "2024-04-20"),
    ("Alice plays the cello in a community orchestra", "2024-05-25"),
]


@pytest.fixture
def alice(hs: Hindsight) -> Hindsight:
    for text, day in FACTS:
        hs.retain("user:alice", text, kind="fact", observed_at=day)
    return hs


def _contents(results: list) -> list[str]:  # type: ignore[type-arg]
    return [r.memory.content for r in results]


def test_dense_channel_finds_a_paraphrase_without_shared_words(alice: Hindsight) -> None:
    results = alice.recall("user:alice", "which musical instrument does she play?", k=3)
    assert results[0].memory.content == FACTS[4][0]
    assert "dense" in results[0].explanation.channels


def test_keyword_channel_finds_a_rare_token(alice: Hindsight) -> None:
    (top, *_) = alice.recall("user:alice", "zx-9187", k=3)
    assert "zx-9187" in top.memory.content
    assert top.explanation.channels["bm25"].rank == 1


def test_explanation_accounts_for_the_score(alice: Hindsight) -> None:
    for result in alice.recall("user:alice", "Alice food allergy", k=5):
        why = result.explanation
        assert why.channels and why.fused >= 0  # min-max: the weakest candidate scores 0
        assert set(why.boosts) == {"confidence", "source", "recency"}
        product = why.fused * why.owner_weight
        for factor in why.boosts.values():
            product *= factor
        assert result.score == pytest.approx(product) == why.final
        assert set(why.as_dict()) == {
            "channels",
            "fused",
            "boosts",
            "owner_weight",
            "final",
            "confidence",
        }


def test_the_agents_own_words_count_less_than_the_users(hs: Hindsight) -> None:
    hs.retain(
        "user:src",
        messages=[
            {"role": "user", "content": "My bicycle is a green Brompton."},
            {"role": "assistant", "content": "A green Brompton bicycle folds small, nice."},
        ],
        session_id="s1",
    )
    results = hs.recall("user:src", "green Brompton bicycle", k=5, kinds=["episode"])
    by_source = {r.memory.provenance.source.value: r for r in results}
    assert by_source["agent"].explanation.boosts["source"] == 0.5
    assert by_source["user"].explanation.boosts["source"] == 1.0
    assert results[0].memory.provenance.source.value == "user"


def test_a_summary_of_the_conversation_weighs_the_agents_words_as_the_users(
    hs: Hindsight,
) -> None:
    """A summary asks for what both sides said: the reply that recorded the work counts
    as much as the user's words."""
    hs.retain(
        "user:sum",
        messages=[
            {"role": "user", "content": "Can you help me secure my budget tracker?"},
            {
                "role": "assistant",
                "content": "We added password hashing, CSRF tokens and an account lockout "
                "after five failed logins to your budget tracker.",
            },
        ],
        session_id="s1",
    )
    asked = "How did I secure my budget tracker with password hashing and lockout?"
    summary = "Summarize how I secured my budget tracker with password hashing and lockout."
    for query, weight in ((asked, 0.5), (summary, 1.0)):
        results = hs.recall("user:sum", query, k=5, kinds=["episode"])
        by_source = {r.memory.provenance.source.value: r for r in results}
        assert by_source["agent"].explanation.boosts["source"] == weight
        assert by_source["user"].explanation.boosts["source"] == 1.0


@pytest.mark.parametrize(
    ("query", "asked"),
    [
        ("Can you give me a summary of how my resume progressed?", True),
        ("Summarise what we decided about the venue.", True),
        ("Could you summarize the security work?", True),
        ("Recap what we planned for the trip.", True),
        ("Can you sum up my progress on the novel?", True),
        ("Sum it up for me.", True),
        # what the agent said
        ("How did you recommend structuring my week?", True),
        ("What approach did you suggest for the resume?", True),
        ("Which venue you recommended was cheaper?", True),
        ("What did you tell me about the deadline?", True),
        # neither
        ("Could you suggest a venue?", False),  # a request, not what was said
        ("What did Caroline recommend?", False),
        ("When is the summer party?", False),
        ("Did the team recapture the lead?", False),
    ],
)
def test_the_agents_words_are_asked_for_by_a_summary_or_what_it_recommended(
    query: str, asked: bool
) -> None:
    rerank = Rerank()
    weights = rerank.for_query(query).source_weights
    assert weights[Source.AGENT] == (1.0 if asked else 0.5)
    assert rerank.source_weights[Source.AGENT] == 0.5  # the engine's own is left as it was


@pytest.mark.parametrize(("role", "lifted"), [("user", True), ("assistant", False)])
def test_the_reply_to_a_matching_question_comes_back_with_it(
    tmp_path: Path, embedder: Embeddings, role: str, lifted: bool
) -> None:
    # no neighbours in the keyword index: only the reply channel links the two turns (a
    # friend asks, so that the two are no run of one person's messages)
    settings = Settings(home=tmp_path, context_turns=0, sqlite_synchronous="OFF")
    with Hindsight(settings, embedder=embedder) as hs:
        filler = [f"We cooked pasta number {i} for dinner." for i in range(6)]
        hs.retain(
            "user:rep",
            messages=[
                {
                    "role": "user",
                    "speaker": "Nate",
                    "content": "Anything you're excited for in the adoption process?",
                },
                {"role": role, "content": "I'm thrilled to make a family for kids who need one."},
                *({"role": "user", "speaker": "Nate", "content": text} for text in filler),
            ],
            session_id="s1",
        )
        results = hs.recall("user:rep", "excited adoption process", k=3, kinds=["episode"])
        assert "adoption" in results[0].memory.content
        why = {r.memory.content[:10]: r.explanation for r in results}
        if lifted:
            assert "reply" in why["I'm thrill"].channels
            assert why["I'm thrill"].fused == pytest.approx(0.85 * results[0].explanation.fused)
        else:
            assert "I'm thrill" not in why or "reply" not in why["I'm thrill"].channels


def test_the_answer_to_a_follow_up_question_comes_back_with_the_statement(
    tmp_path: Path, embedder: Embeddings
) -> None:
    settings = Settings(home=tmp_path, context_turns=0, sqlite_synchronous="OFF")
    with Hindsight(settings, embedder=embedder) as hs:
        turns = [
            ("Joanna", "Woo! I finally finished my first full screenplay last Friday."),
            ("Nate", "Congrats! What genre is it?"),
            ("Joanna", "A mix of drama and romance."),
            *(("Nate", f"We cooked pasta number {i} for dinner.") for i in range(6)),
        ]
        hs.retain(
            "user:hop",
            messages=[{"role": "user", "speaker": who, "content": text} for who, text in turns],
            session_id="s1",
        )
        results = hs.recall("user:hop", "Joanna finished full screenplay", k=3, kinds=["episode"])
        assert results[0].memory.content.startswith("Woo!")
        why = {r.memory.content[:5]: r.explanation for r in results}
        assert "reply" in why["A mix"].channels  # through the follow-up question
        assert why["A mix"].fused == pytest.approx(0.85 * results[0].explanation.fused)


def _chat(hs: Hindsight, owner: str, lines: list[tuple[str, str, int]]) -> list[str]:
    """Retain a chat, one message per line (speaker, text, minutes after 9:00); the ids."""
    start = datetime(2024, 3, 1, 9, tzinfo=UTC)
    messages = [
        {
            "role": "user",
            "speaker": who,
            "content": text,
            "observed_at": start + timedelta(minutes=minutes, seconds=i),
        }
        for i, (who, text, minutes) in enumerate(lines)
    ]
    return hs.retain(owner, messages=messages, session_id="day-1").episodes


FILLER = [("Nate", f"We cooked pasta number {i} for dinner.", 30 + i) for i in range(8)]


def test_a_run_of_messages_comes_back_whole_after_its_best_one(
    settings: Settings, embedder: Embeddings
) -> None:
    # no neighbours in the keyword index: only the run links the messages
    with Hindsight(settings.model_copy(update={"context_turns": 0}), embedder=embedder) as hs:
        ids = _chat(
            hs,
            "user:run",
            [
                ("Fahim", "ok so guess what", 0),
                ("Fahim", "we finally adopted the dog", 0),
                ("Fahim", "golden retriever, two years old", 1),
                ("Nate", "no way!! congrats", 2),
                *FILLER,
            ],
        )
        results = hs.recall("user:run", "Fahim adopted dog", k=4, kinds=["episode"])
    assert results[0].memory.id == ids[1]
    assert {r.memory.id for r in results[1:3]} == {ids[0], ids[2]}
    top = results[0].explanation.fused
    for mate in results[1:3]:
        assert "run" in mate.explanation.channels
        assert mate.explanation.fused == pytest.approx(top, rel=1e-4)
    assert all(r.memory.id != ids[3] or "run" not in r.explanation.channels for r in results)


def test_a_run_lifts_what_its_messages_say_not_the_replies_sent_over_and_over(
    settings: Settings, embedder: Embeddings
) -> None:
    # "lol" is what Nate says all the time: in a run, it tells nothing about the dog
    chatter = [("Nate", "lol", 30 + i) for i in range(4)]
    with Hindsight(settings.model_copy(update={"context_turns": 0}), embedder=embedder) as hs:
        ids = _chat(
            hs,
            "user:lol",
            [
                ("Fahim", "we finally adopted the dog", 0),
                ("Fahim", "lol", 0),
                ("Fahim", "golden retriever, two years old", 1),
                *chatter,
                *FILLER,
            ],
        )
        results = hs.recall("user:lol", "Fahim adopted dog", k=3, kinds=["episode"])
    channels = {r.memory.id: r.explanation.channels for r in results}
    assert results[0].memory.id == ids[0]
    assert "run" in channels[ids[2]]
    assert "run" not in channels.get(ids[1], {})


def test_a_run_breaks_at_another_speaker_a_pause_and_its_reach(
    settings: Settings, embedder: Embeddings
) -> None:
    with Hindsight(settings.model_copy(update={"context_turns": 0}), embedder=embedder) as hs:
        ids = _chat(
            hs,
            "user:runs",
            [
                ("Fahim", "morning", 0),  # 20 minutes before the next: a run of its own
                *((("Fahim", f"note {i} about the garden shed", 20)) for i in range(7)),
                ("Nate", "cool", 21),
                ("Fahim", "one more thing", 21),
                *FILLER,
            ],
        )
        hits = hs.store.run_mates([ids[4]], Filter(owners=["user:runs"]), reach=3)
    # three on each side, nearest first; not "morning", not past Nate's turn
    assert [m.id for m in hits[ids[4]]] == [ids[3], ids[5], ids[2], ids[6], ids[1], ids[7]]
    with Hindsight(settings, embedder=embedder) as hs:
        alone = hs.store.run_mates([ids[0], ids[8], ids[9]], Filter(owners=["user:runs"]), reach=3)
        assert alone == {}
        since = Filter(owners=["user:runs"], since=datetime(2024, 3, 1, 9, 20, 3, 500_000, UTC))
        kept = hs.store.run_mates([ids[4]], since, reach=3)
        assert {m.id for m in kept[ids[4]]} == {ids[5], ids[6], ids[7]}  # the filter holds


def test_a_run_is_found_when_its_messages_were_retained_one_at_a_time(hs: Hindsight) -> None:
    # what the extractor finds in each message is written between it and the next one
    start = datetime(2024, 3, 1, 9, tzinfo=UTC)
    lines = ["I love hiking in the Alps.", "I prefer tea to coffee.", "I love climbing too."]
    ids = [
        hs.retain(
            "user:one",
            messages=[
                {"role": "user", "content": text, "observed_at": start + timedelta(seconds=i)}
            ],
            session_id="day-1",
        ).episodes[0]
        for i, text in enumerate(lines)
    ]
    assert len(hs.store.list_memories(Filter(owners=["user:one"]), limit=20)) > len(lines)
    runs = hs.store.run_mates([ids[0]], Filter(owners=["user:one"], kinds=[Kind.EPISODE]), reach=3)
    assert [m.id for m in runs[ids[0]]] == ids[1:]


def test_a_turns_keyword_context_counts_a_run_as_one_turn(
    settings: Settings, embedder: Embeddings
) -> None:
    # one turn of context: the whole run before it, up to three of its messages
    with Hindsight(settings.model_copy(update={"context_turns": 1}), embedder=embedder) as hs:
        ids = _chat(
            hs,
            "user:ctx",
            [
                ("Fahim", "listen zebra", 0),
                ("Fahim", "we adopted a dog", 0),
                ("Fahim", "he is called Biscuit", 0),
                ("Fahim", "a golden retriever", 1),
                ("Nate", "cute!", 2),
                ("Fahim", "also a hamster", 30),  # after a pause: a run of its own
                *FILLER,
            ],
        )
        episodes = Filter(owners=["user:ctx"], kinds=[Kind.EPISODE])

        def found(word: str) -> set[str]:
            return {mid for mid, _ in hs.store.keyword_search(episodes, word, 20)}

        assert ids[4] in found("Biscuit") and ids[4] in found("adopted")  # three messages back
        assert ids[4] not in found("zebra")  # the fourth: past the run's share of context
        assert ids[4] in found("hamster")  # the next run
        assert ids[3] not in found("hamster")  # two runs away


def test_results_are_ordered_and_k_is_respected(alice: Hindsight) -> None:
    results = alice.recall("user:alice", "Alice", k=2)
    assert len(results) == 2
    assert results[0].score >= results[1].score


def test_filters_by_kind_time_and_confidence(alice: Hindsight) -> None:
    alice.retain("user:alice", "I love the cello.", observed_at="2024-06-01")
    prefs = alice.recall("user:alice", "cello", kinds=["preference"])
    assert prefs and all(r.memory.kind is Kind.PREFERENCE for r in prefs)
    window = alice.recall("user:alice", "Alice", since="2024-03-01", until="2024-04-30")
    assert {r.memory.content for r in window} == {FACTS[2][0], FACTS[3][0]}
    alice.retain("user:alice", "Alice might like opera", kind="fact", confidence=0.2)
    confident = alice.recall("user:alice", "opera", min_confidence=0.5)
    assert all(r.memory.confidence >= 0.5 for r in confident)
    assert "Alice might like opera" not in _contents(confident)


def test_token_budget_packs_what_fits(alice: Hindsight) -> None:
    results = alice.recall("user:alice", "Alice", k=10, token_budget=12)
    used = sum((len(r.memory.content) + 3) // 4 for r in results)
    assert results and used <= 12


def test_owners_never_see_each_other(alice: Hindsight) -> None:
    alice.retain("user:bob", "Bob's cat is named Tiger", kind="fact")
    bob = alice.recall("user:bob", "cat name Whiskers allergy cello", k=50)
    assert _contents(bob) == ["Bob's cat is named Tiger"]
    assert all(r.memory.owner == "user:alice" for r in alice.recall("user:alice", "Tiger", k=50))


def test_shared_namespaces_join_with_weights(alice: Hindsight) -> None:
    alice.retain("shared:team", "The team's cat is named Whiskers too", kind="fact")
    mixed = alice.recall({"user:alice": 1.0, "shared:team": 0.5}, "cat named Whiskers", k=5)
    owners = {r.memory.owner for r in mixed}
    assert owners == {"user:alice", "shared:team"}
    shared = next(r for r in mixed if r.memory.owner == "shared:team")
    assert shared.explanation.owner_weight == 0.5


def test_recall_counts_accesses(alice: Hindsight) -> None:
    (top,) = alice.recall("user:alice", "peanuts", k=1)
    alice._search.flush_access(force=True)
    memory = alice.get(top.memory.id)
    assert memory.access_count == 1 and memory.last_accessed_at is not None
    assert memory.last_accessed_at <= datetime.now(UTC)


def test_counting_accesses_never_fails_a_recall(
    alice: Hindsight, monkeypatch: pytest.MonkeyPatch
) -> None:
    def deadlocked(hits: dict[str, int], at: datetime) -> None:
        raise StoreError("deadlock detected")  # what PostgreSQL answered two servers

    (top,) = alice.recall("user:alice", "peanuts", k=1)
    with monkeypatch.context() as patched:
        patched.setattr(alice.store, "record_access", deadlocked)
        alice._search.flush_access(force=True)  # logged, not raised
        assert alice.recall("user:alice", "peanuts", k=1)[0].memory.id == top.memory.id
    alice._search.flush_access(force=True)  # the counts were kept for this one
    assert alice.get(top.memory.id).access_count == 2


def test_empty_store_and_no_match(hs: Hindsight) -> None:
    assert hs.recall("user:nobody", "anything at all") == []


@pytest.mark.backends("sqlite")
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"owners": "nobody", "query": "x"}, "owner"),
        ({"owners": [], "query": "x"}, "at least one owner"),
        ({"owners": {"user:a": -1}, "query": "x"}, "weight"),
        ({"owners": {"user:a": float("nan")}, "query": "x"}, "weight"),
        ({"owners": {"user:a": 1e308}, "query": "x"}, "from 0.001 to 1000"),
        ({"owners": {"user:a": 1e-320}, "query": "x"}, "from 0.001 to 1000"),
        ({"owners": "user:a\n", "query": "x"}, "owner"),
        ({"owners": "user:a", "query": " "}, "query is empty"),
        ({"owners": "user:a", "query": "x", "k": 0}, "k must"),
        ({"owners": "user:a", "query": "x", "since": "last week"}, "since"),
        ({"owners": "user:a", "query": "x", "kinds": ["nope"]}, "kind"),
        ({"owners": "user:a", "query": "x", "min_confidence": 3}, "min_confidence"),
        ({"owners": "user:a", "query": "x", "token_budget": 0}, "token_budget"),
    ],
)
def test_bad_recall_arguments(hs: Hindsight, kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        hs.recall(**kwargs)  # type: ignore[arg-type]


def test_a_turn_is_found_through_its_neighbours_words(hs: Hindsight) -> None:
    hs.retain(
        "user:alice",
        messages=[
            {"role": "user", "content": "We adopted a puppy from the shelter."},
            {"role": "assistant", "content": "Wonderful! What did you name it?"},
            {"role": "user", "content": "Biscuit, after my favourite snack."},
        ],
        session_id="s1",
    )
    results = hs.recall("user:alice", "shelter puppy name", k=10)
    naming = next(r for r in results if r.memory.content.startswith("Biscuit"))
    assert "bm25" in naming.explanation.channels  # matched only through its neighbours


def test_forgetting_a_turn_removes_its_words_from_its_neighbours(hs: Hindsight) -> None:
    result = hs.retain(
        "user:alice",
        messages=[
            {"role": "user", "content": "My locker code is 4471."},
            {"role": "user", "content": "Remind me about the gym tomorrow."},
        ],
        session_id="s1",
    )
    hs.forget(result.episodes[0])
    hits = hs.store.keyword_search(Filter(owners=["user:alice"]), "4471 locker", 10)
    assert hits == []
