"""The extraction seam and the heuristic extractor."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight import Settings
from hindsight.errors import ValidationError
from hindsight.extract import DEFAULT_EXTRACTOR, Extracted, Extractor, registry
from hindsight.extract.heuristic import HeuristicExtractor
from hindsight.models import Kind, Tag, Turn
from hindsight.registry import Registry

P, F, E, T = Kind.PREFERENCE, Kind.FACT, Kind.EXPERIENCE, Kind.TOOL_RESULT
CORR = ("correction",)

EXTRACTOR = HeuristicExtractor()


def run(text: str, role: str = "user", **turn: Any) -> list[Extracted]:
    return EXTRACTOR.extract([Turn(role, text, **turn)], subject="User")


# (message, [(kind, content, {field: expected})])
CASES: list[tuple[str, list[tuple[Kind, str, dict[str, Any]]]]] = [
    # preferences and dislikes
    ("I like dark roast coffee.", [(P, "User likes dark roast coffee", {"polarity": 1})]),
    ("I love hiking with my dog!", [(P, "User loves hiking with their dog", {})]),
    ("i really enjoy jazz", [(P, "User enjoys jazz", {})]),
    ("I'm a huge fan of Murakami", [(P, "User is a huge fan of Murakami", {})]),
    ("I love pizza, pasta, and gelato.", [(P, "User loves pizza, pasta, and gelato", {})]),
    (
        "My favourite colour is blue.",
        [
            (
                P,
                "User's favourite colour is blue",
                {"attribute": "favourite:colour", "value": "blue"},
            )
        ],
    ),
    ("Dune is my favorite book", [(P, "User's favourite book is Dune", {"value": "Dune"})]),
    ("I hate cilantro", [(P, "User hates cilantro", {"polarity": -1})]),
    ("I dislike cilantro", [(P, "User dislikes cilantro", {"polarity": -1})]),
    ("I don't like spicy food.", [(P, "User dislikes spicy food", {"polarity": -1})]),
    ("I can\u2019t stand loud music", [(P, "User can't stand loud music", {"polarity": -1})]),
    (
        "Please always answer in English.",
        [(P, "User wants the assistant to always answer in English", {"polarity": 1})],
    ),
    (
        "Never use emojis please",
        [(P, "User wants the assistant to never use emojis", {"polarity": -1})],
    ),
    (  # when an instruction applies is kept: it is what a later request matches
        "Always format dates in the month-day-year style when I ask about my deadlines.",
        [
            (
                P,
                "User wants the assistant to always format dates in the month-day-year style "
                "when User asks about their deadlines",
                {
                    "query_hints": (
                        "my deadlines",
                        "how should the assistant respond",
                        "User's instructions",
                    ),
                    "applies_when": "their deadlines",
                },
            )
        ],
    ),
    ("I'd rather walk than drive", [(P, "User would rather walk than drive", {})]),
    ("I prefer tea over coffee", [(P, "User prefers tea over coffee", {"value": "tea"})]),
    ("I prefer reading to swimming.", [(P, "User prefers reading over swimming", {})]),
    # "to" giving a purpose, or after a clause boundary, is no rival
    (
        "I prefer batches of five to manage replies.",
        [(P, "User prefers batches of five to manage replies", {})],
    ),
    (
        "I prefer short sessions, like mornings, to keep focus.",
        [(P, "User prefers short sessions", {})],
    ),
    ("I prefer to work in the morning", [(P, "User prefers to work in the morning", {})]),
    # facts
    ("I live in Paris", [(F, "User lives in Paris", {"attribute": "location", "value": "Paris"})]),
    (
        "I'm currently living in New York City with my wife",
        [(F, "User lives in New York City", {"attribute": "location", "value": "New York City"})],
    ),
    ("I moved to Berlin last year.", [(F, "User moved to Berlin", {"attribute": "location"})]),
    ("I'm based in London, UK", [(F, "User lives in London", {"attribute": "location"})]),
    ("I live in St. Louis now.", [(F, "User lives in St. Louis", {"value": "St. Louis"})]),
    ("I'm from Lyon", [(F, "User is from Lyon", {"attribute": "origin", "value": "Lyon"})]),
    ("I was born in Madrid", [(F, "User was born in Madrid", {"attribute": "birthplace"})]),
    ("I work for Acme Corp.", [(F, "User works for Acme Corp", {"attribute": "employer"})]),
    (
        "I work at Google as a software engineer",
        [
            (F, "User works at Google", {"attribute": "employer", "value": "Google"}),
            (F, "User works as a software engineer", {"attribute": "job_title"}),
        ],
    ),
    ("I'm a nurse", [(F, "User works as a nurse", {"attribute": "job_title", "value": "nurse"})]),
    ("I work as an architect", [(F, "User works as an architect", {"attribute": "job_title"})]),
    (
        "I'm a professor of physics at MIT",
        [
            (F, "User works as a professor", {"attribute": "job_title"}),
            (F, "User works at MIT", {"attribute": "employer"}),
        ],
    ),
    ("I'm an introvert", [(F, "User is an introvert", {"attribute": None, "confidence": 0.55})]),
    ("My name is Alice", [(F, "User's name is Alice", {"attribute": "name", "value": "Alice"})]),
    ("my name's jane", [(F, "User's name is Jane", {"attribute": "name"})]),
    ("Call me Bob", [(F, "User's name is Bob", {"attribute": "name"})]),
    ("Hi, I'm Sam!", [(F, "User's name is Sam", {"attribute": "name", "confidence": 0.6})]),
    ("I'm 34", [(F, "User is 34 years old", {"attribute": "age", "value": "34"})]),
    ("I am 34 years old", [(F, "User is 34 years old", {"attribute": "age"})]),
    ("My wife's name is Anna", [(F, "User's wife is named Anna", {"attribute": "partner"})]),
    ("My husband is called Tom", [(F, "User's husband is named Tom", {"attribute": "partner"})]),
    ("I'm married to Tom", [(F, "User is married to Tom", {"attribute": "partner"})]),
    ("My dog is named Rex", [(F, "User's dog is named Rex", {"attribute": "pet:dog:name"})]),
    ("I have a cat called Miso", [(F, "User has a cat named Miso", {"attribute": "pet:cat:name"})]),
    ("My sister is named Kate", [(F, "User's sister is named Kate", {"attribute": None})]),
    ("I have two kids", [(F, "User has two kids", {})]),
    ("I'm vegan", [(F, "User is vegan", {"attribute": "diet"})]),
    ("I'm allergic to peanuts", [(F, "User is allergic to peanuts", {})]),
    ("I usually take the train to work", [(F, "User usually takes the train to work", {})]),
    ("I never eat meat", [(F, "User never eats meat", {"polarity": -1})]),
    # corrections
    (
        "No, I live in Berlin.",
        [(F, "User lives in Berlin", {"tags": CORR, "confidence": 0.95, "attribute": "location"})],
    ),
    ("No. I live in Berlin.", [(F, "User lives in Berlin", {"tags": CORR})]),
    ("Actually, I prefer tea.", [(P, "User prefers tea", {"tags": CORR, "confidence": 0.95})]),
    ("That's wrong. I work at Amazon.", [(F, "User works at Amazon", {"tags": CORR})]),
    ("That's not right, I'm 35", [(F, "User is 35 years old", {"tags": CORR})]),
    ("I said Tuesday not Thursday", [(F, "User said Tuesday, not Thursday", {"tags": CORR})]),
    ("I meant I live in Rome", [(F, "User lives in Rome", {"tags": CORR})]),
    (
        "No, the meeting is on Friday",
        [(F, "User corrected the assistant: the meeting is on Friday", {"tags": CORR})],
    ),
    # experiences
    ("I went to Japan last spring", [(E, "User went to Japan last spring", {"confidence": 0.6})]),
    ("I visited the Louvre yesterday", [(E, "User visited the Louvre yesterday", {})]),
    ("I just finished reading Dune", [(E, "User finished reading Dune", {})]),
    ("Yesterday I painted a sunset", [(E, "User painted a sunset yesterday", {})]),
    ("I've been to Iceland twice", [(E, "User has been to Iceland twice", {})]),
    # several sentences and clauses
    (
        "I'm Alice. I live in Paris and I work at Google.",
        [
            (F, "User lives in Paris", {}),
            (F, "User works at Google", {}),
        ],
    ),
    (
        "I love coffee but I hate tea.",
        [
            (P, "User loves coffee", {"polarity": 1}),
            (P, "User hates tea", {"polarity": -1}),
        ],
    ),
    ("Honestly, I really love sushi", [(P, "User loves sushi", {})]),
    # what a request states before it asks
    (
        "I'm learning probability, and I prefer step-by-step explanations, can you help me?",
        [(P, "User prefers step-by-step explanations", {})],
    ),
    ("I live in Lyon, what should I visit?", [(F, "User lives in Lyon", {})]),
    ("I love jazz, do you?", [(P, "User loves jazz", {})]),
    # nothing: questions, hypotheticals, negations, filler
    ("Do you like jazz?", []),
    ("Do you think I prefer tea, or coffee?", []),
    ("No, I think I'm good for now. Thanks for the help!", []),  # a polite no, not a correction
    ("I have completed 50% of it by November 18.", []),  # what "it" is was said elsewhere
    ("I spent ages restoring it.", []),
    ("Never saw this coming!", []),  # the past, not an instruction
    ("Always happy to help!", []),
    ("I never decided to try it.", []),  # nothing to conjugate: no "never decideds"
    ("I typically hold it for a minute.", []),  # not "User typically holds"
    ("I love to", []),
    ("I went to the store again and", [(E, "User went to the store again", {})]),
    ("Never heard of it.", []),
    (
        "My favorite book is It by Stephen King.",
        [(P, "User's favourite book is It by Stephen King", {})],
    ),
    ("I live in Lyon, right?", []),
    ("Where do I live?", []),
    ("where do I live", []),
    ("I like jazz?", []),
    ("If I lived in Rome I'd be happy", []),
    ("I'd love to visit Japan someday", []),
    ("I want to move to Rome", []),
    ("I don't live in Paris anymore", []),
    ("I no longer live in Paris", []),
    ("I used to live in Paris", []),
    ("I'm not a doctor", []),
    ("I'm a bit tired", []),
    ("I love you", []),
    ("I like it", []),
    ("call me later", []),
    ("I'm 5 minutes away", []),
    ("I got confused", []),
    ("I have a question", []),
    ("No problem", []),
    ("No.", []),
    ("Thanks!", []),
    ("The capital of France is Paris.", []),
    ("", []),
    # restated system prompts
    ("You are a helpful assistant. Always answer concisely.", []),
    ("System: you must always reply in JSON", []),
    ("<system>Always answer in French.</system>", []),
]


@pytest.mark.parametrize(("message", "expected"), CASES, ids=[c[0][:40] or "empty" for c in CASES])
def test_table(message: str, expected: list[tuple[Kind, str, dict[str, Any]]]) -> None:
    found = run(message)
    assert [(e.kind, e.content) for e in found] == [(k, c) for k, c, _ in expected]
    for got, (_, _, fields) in zip(found, expected, strict=True):
        for name, value in fields.items():
            assert getattr(got, name) == value, (message, name)


def test_supersession_shares_the_location_attribute() -> None:
    first, second = run("I live in Paris"), run("I moved to Berlin")
    assert first[0].attribute == second[0].attribute == "location"
    assert (first[0].value, second[0].value) == ("Paris", "Berlin")


def test_hints_and_turn_index() -> None:
    turns = [Turn("user", "hello"), Turn("assistant", "hi"), Turn("user", "I live in Oslo")]
    [found] = EXTRACTOR.extract(turns, subject="User")
    assert found.turn_index == 2
    assert "where does User live" in found.query_hints


@pytest.mark.parametrize("role", ["assistant", "system", "developer"])
def test_assistant_and_system_turns_yield_nothing(role: str) -> None:
    assert run("I live in Paris. I love jazz. My name is Bob.", role=role) == []


def test_named_speakers_in_a_multi_party_conversation() -> None:
    turns = [
        Turn("user", "I love painting", speaker="Caroline"),
        Turn("assistant", "I moved to Boston last month", speaker="Melanie"),
    ]
    found = EXTRACTOR.extract(turns, subject="User")
    assert [(e.content, e.turn_index) for e in found] == [
        ("Caroline loves painting", 0),
        ("Melanie moved to Boston", 1),
    ]


def test_between_people_no_answers_a_question_and_corrects_no_assistant() -> None:
    turns = [
        Turn("user", "Have you tried the sauce?", speaker="Sam"),
        Turn("user", "No, I haven't tried it yet. No, I live in Lyon now.", speaker="Maria"),
    ]
    found = EXTRACTOR.extract(turns, subject="User")
    assert [(e.content, e.tags) for e in found] == [("Maria lives in Lyon", ())]


def test_a_lone_assistant_speaker_is_not_multi_party() -> None:
    turns = [Turn("user", "hi"), Turn("assistant", "I live in the cloud", speaker="Bot")]
    assert EXTRACTOR.extract(turns, subject="User") == []


TOOL_CASES = [
    (
        'Traceback (most recent call last):\n  File "x.py"\nValueError: bad input',
        "Tool calc failed: ValueError: bad input",
    ),
    ("HTTP 503 Service Unavailable", "Tool calc failed: HTTP 503 Service Unavailable"),
    ("command exited with code 2", "Tool calc failed: command exited with code 2"),
    ("Request timed out after 30s", "Tool calc failed: Request timed out after 30s"),
    ('{"ok": false, "reason": "quota"}', 'Tool calc failed: {"ok": false, "reason": "quota"}'),
]


@pytest.mark.parametrize(("output", "content"), TOOL_CASES)
def test_tool_failures(output: str, content: str) -> None:
    [found] = run(output, role="tool", tool_name="calc")
    assert (found.kind, found.content, found.tags) == (T, content, ("tool_failure",))
    assert found.confidence >= 0.8


@pytest.mark.parametrize(
    "output", ['{"result": 42, "error": null}', "10 passed, 0 failed", "exit code 0\nall good"]
)
def test_tool_successes(output: str) -> None:
    [found] = run(output, role="tool", tool_name="calc")
    assert found.content.startswith("Tool calc returned: ")
    assert found.tags == () and found.confidence < 0.6


def test_tool_summary_is_short() -> None:
    [found] = run("line " * 500, role="tool")
    assert found.content.startswith("A tool returned: ") and len(found.content) < 160
    assert run("   \n ", role="tool") == []


def test_registry() -> None:
    cfg = Settings()
    assert isinstance(registry.create(DEFAULT_EXTRACTOR, cfg), HeuristicExtractor)
    with pytest.raises(ValidationError, match="heuristic"):
        registry.create("nope", cfg)
    with pytest.raises(ValidationError, match="takes no options, got: model"):
        registry.create(DEFAULT_EXTRACTOR, cfg, {"model": "m"})
    own: Registry[Extractor] = Registry("extractor")
    own.register("mine", lambda settings, options: HeuristicExtractor())
    made: Extractor = own.create("mine", cfg)
    assert made.name == "heuristic"


@pytest.mark.parametrize(
    "fields",
    [
        {"kind": Kind.EPISODE},
        {"content": " "},
        {"confidence": 1.5},
        {"confidence": float("nan")},
        {"turn_index": -1},
        {"polarity": 0},
        {"tags": ("corection",)},
    ],
)
def test_extracted_rejects_invalid_values(fields: dict[str, Any]) -> None:
    base: dict[str, Any] = {"kind": Kind.FACT, "content": "x", "confidence": 0.5, "turn_index": 0}
    with pytest.raises(ValidationError):
        Extracted(**(base | fields))


def test_a_plugins_plain_string_tags_become_tags() -> None:
    found = Extracted(Kind.FACT, "x", 0.5, 0, tags=("correction",))  # type: ignore[arg-type]
    assert found.tags == (Tag.CORRECTION,) and isinstance(found.tags[0], Tag)


# --- properties -----------------------------------------------------------------

_PREFIXES = [
    "",
    "I live in ",
    "I love ",
    "I hate ",
    "my name is ",
    "I'm a ",
    "I moved to ",
    "No, ",
    "Actually, I ",
    "I went to ",
    "Please always ",
    "I said ",
    "I meant ",
    "Yesterday I ",
    "My dog is named ",
    "I have a ",
    "I prefer ",
    "I work at ",
    "I'm ",
    "Hi, I'm ",
]
_texts = st.builds(
    lambda pre, body, end: pre + body + end,
    st.sampled_from(_PREFIXES),
    st.text(max_size=80),
    st.sampled_from(["", ".", "!", "?", ". I like tea", " anymore", "\n"]),
)
_turns = st.builds(
    Turn,
    role=st.sampled_from(["user", "assistant", "tool", "system", "human", "other"]),
    content=_texts,
    speaker=st.one_of(st.none(), st.sampled_from(["Caroline", "Melanie"]), st.text(max_size=10)),
    tool_name=st.one_of(st.none(), st.sampled_from(["search", "shell"])),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_turns, max_size=5))
def test_extraction_properties(turns: list[Turn]) -> None:
    found = EXTRACTOR.extract(turns, subject="User")
    for e in found:
        assert e.kind is not Kind.EPISODE
        assert 0.0 <= e.confidence <= 1.0
        assert 0 <= e.turn_index < len(turns)
        turn = turns[e.turn_index]
        name = turn.tool_name or turn.speaker or "User"
        assert e.content.strip()
        assert len(e.content) <= len(turn.content) + len(name) + 40
        if turn.role in ("assistant", "system") and not turn.speaker:
            pytest.fail("extracted from an assistant or system turn")


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text_never_raises(text: str) -> None:
    for role in ("user", "tool"):
        run(text, role=role)


def test_an_experiences_relative_time_becomes_its_date() -> None:
    said = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)  # a Monday
    found = run("I went to a pride parade last week!", observed_at=said, speaker="Caroline")
    assert [e.content for e in found] == [
        "Caroline went to a pride parade in the week of 1 May 2023"
    ]
    (found,) = run("Yesterday I painted a sunset", observed_at=said)
    assert found.content == "User painted a sunset on 7 May 2023"
    (undated,) = run("Yesterday I painted a sunset")  # no time given: nothing to resolve against
    assert undated.content == "User painted a sunset yesterday"
