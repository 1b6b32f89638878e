"""``hindsight bench locomo|beam``: metrics, loaders with the datasets' quirks, end to end."""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from llm_servers import Reply, Seen, fake_llm, openai_answer

from hindsight.bench import quality
from hindsight.bench.datasets import (
    Conversation,
    Dataset,
    Session,
    Typing,
    chat_typed,
    flatten_ids,
    load_beam,
    load_locomo,
    normalise_dia_id,
    one_owner,
    parse_beam_time,
    parse_locomo_time,
    per_sentence,
    split_evidence,
    strip_marker,
)
from hindsight.bench.quality import (
    aggregate,
    frac_recall,
    ndcg,
    owner_for,
    recall_all,
    recall_any,
    score_question,
    update_ranked_first,
)
from hindsight.cli import cli
from hindsight.validate import OWNER_RE

# The benchmark data lives beside the repository, never inside it.
DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"

# -- metrics ---------------------------------------------------------------------------------
POOL = [f"t{i}" for i in range(30)]
rankings = st.lists(st.sampled_from(POOL), unique=True, max_size=30)
evidences = st.frozensets(st.sampled_from(POOL), min_size=1, max_size=8)
ks = st.integers(min_value=1, max_value=30)


def test_metrics_on_a_known_ranking() -> None:
    ranked = ["a", "x", "b", "y", "z"]
    evidence = frozenset({"a", "b", "c"})
    assert frac_recall(ranked, evidence, 1) == pytest.approx(1 / 3)
    assert frac_recall(ranked, evidence, 5) == pytest.approx(2 / 3)
    assert recall_any(ranked, evidence, 1) == 1.0
    assert recall_all(ranked, evidence, 5) == 0.0
    assert recall_all(["c", "b", "a"], evidence, 3) == 1.0
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert ndcg(ranked, evidence, 5) == pytest.approx((1 + 1 / math.log2(4)) / ideal)
    assert ndcg([], evidence, 10) == 0.0


@given(rankings, evidences, ks)
def test_metrics_lie_between_zero_and_one_in_order(
    ranked: list[str], evidence: frozenset[str], k: int
) -> None:
    frac, any_, all_ = (f(ranked, evidence, k) for f in (frac_recall, recall_any, recall_all))
    gain = ndcg(ranked, evidence, k)
    for value in (frac, any_, all_, gain):
        assert 0.0 <= value <= 1.0
    assert all_ <= frac <= any_


@given(rankings, evidences, ks)
def test_recall_metrics_never_fall_as_k_grows(
    ranked: list[str], evidence: frozenset[str], k: int
) -> None:
    # (NDCG is not monotone in k: its ideal grows with k too.)
    for metric in (frac_recall, recall_any, recall_all):
        assert metric(ranked, evidence, k) <= metric(ranked, evidence, k + 1)


@given(evidences, rankings, ks)
def test_a_perfect_ranking_scores_one(evidence: frozenset[str], rest: list[str], k: int) -> None:
    ranked = sorted(evidence) + [t for t in rest if t not in evidence]
    assert ndcg(ranked, evidence, k) == pytest.approx(1.0)
    assert frac_recall(ranked, evidence, k) == pytest.approx(min(len(evidence), k) / len(evidence))
    assert recall_any(ranked, evidence, k) == 1.0


@given(rankings, evidences)
def test_duplicates_in_a_ranking_do_not_inflate_ndcg(
    ranked: list[str], evidence: frozenset[str]
) -> None:
    assert ndcg(ranked + ranked, evidence, 60) <= 1.0 + 1e-9


def test_update_order_and_aggregation() -> None:
    ordered = {"updated": ["u"], "original": ["o"]}
    assert update_ranked_first(["x", "u", "o"], ordered)
    assert not update_ranked_first(["o", "u"], ordered)
    assert update_ranked_first(["u"], ordered)  # the original does not show at all
    assert not update_ranked_first(["o", "x"], ordered)  # the update does not show
    both = {"updated": ["u"], "original": ["u", "o"]}  # a turn labelled both is an update
    assert update_ranked_first(["u", "o"], both) and not update_ranked_first(["o", "u"], both)
    rows = [
        ("a", score_question(["e1"], frozenset({"e1"}))),
        ("b", score_question(["x"], frozenset({"e2"}))),
    ]
    figures = aggregate(rows)
    assert list(figures) == ["overall", "a", "b"]
    assert figures["overall"]["n"] == 2
    assert figures["overall"]["frac_recall@10"] == 0.5
    assert figures["a"]["ndcg@10"] == 1.0
    assert figures["b"]["recall_any@5"] == 0.0


def test_owner_names_are_valid() -> None:
    for conv in ("conv-26", "1", "weird id/with spaces!", "é"):
        assert OWNER_RE.fullmatch(owner_for("locomo", conv)), conv


# -- LoCoMo loader ------------------------------------------------------------------------------
def locomo_fixture() -> list[dict[str, Any]]:
    """One conversation, 2 sessions and 12 turns, with LoCoMo's quirks in its QA."""
    s1 = [
        ("Caroline", "Hey Mel! I went to a support group yesterday and it was powerful."),
        ("Melanie", "That's great! I painted a sunrise over the lake last week."),
        ("Caroline", "I am thinking about a career in counseling."),
        ("Melanie", "You would be a great counselor."),
        ("Caroline", "Thanks!"),
        ("Melanie", "Thanks!"),
    ]
    s2 = [
        ("Caroline", "I adopted a puppy named Biscuit."),
        ("Melanie", "Look at my new pottery bowl."),
        ("Caroline", "My grandmother gave me a necklace from Sweden."),
        ("Melanie", "We went camping in the mountains with the kids."),
        ("Caroline", "I am reading Becoming Nicole."),
        ("Melanie", "Thanks!"),
    ]

    def turns(session: int, lines: list[tuple[str, str]]) -> list[dict[str, Any]]:
        return [
            {"speaker": who, "dia_id": f"D{session}:{i}", "text": text}
            for i, (who, text) in enumerate(lines, start=1)
        ]

    session_2 = turns(2, s2)
    session_2[1]["blip_caption"] = "a photo of a blue ceramic bowl"
    return [
        {
            "sample_id": "conv-1",
            "conversation": {
                "speaker_a": "Caroline",
                "speaker_b": "Melanie",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": turns(1, s1),
                "session_2_date_time": "10:04 am on 19 June, 2023",
                "session_2": session_2,
            },
            "qa": [
                {"question": "What pet did Caroline adopt?", "evidence": ["D2:1"], "category": 4},
                {
                    "question": "What did Melanie make?",
                    "evidence": ["D1:2; D2:2", "D:2:4"],
                    "category": 1,
                },
                {"question": "What is Caroline reading?", "evidence": ["D2:05"], "category": 3},
                {"question": "Is Melanie an ally?", "evidence": [], "category": 3},
                {
                    "question": "Where is the necklace from?",
                    "evidence": ["D9:9", "D2:3"],
                    "category": 2,
                },
                {
                    "question": "Who won?",
                    "evidence": ["D7:1"],
                    "adversarial_answer": "x",
                    "category": 5,
                },
            ],
        }
    ]


def test_locomo_loader_keeps_speakers_times_and_captions(tmp_path: Path) -> None:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(locomo_fixture()))
    data = load_locomo(path)
    (conv,) = data.conversations
    assert [s.id for s in conv.sessions] == ["session_1", "session_2"]
    turns = list(conv.turns)
    assert len(turns) == data.turn_count == 12
    first = turns[0]
    assert (first.turn_id, first.role, first.speaker) == ("D1:1", "user", "Caroline")
    assert first.time is not None and first.time.isoformat() == "2023-05-08T13:56:00+00:00"
    assert turns[7].text.endswith("[shares a photo: a photo of a blue ceramic bowl]")


def test_locomo_loader_takes_a_turns_own_time_over_its_sessions(tmp_path: Path) -> None:
    """A chat's export may date each message: which messages were sent in a row (a run)
    is told by those times."""
    raw = locomo_fixture()
    body = raw[0]["conversation"]
    body["session_1_date_time"] = "2023-05-08T09:00:00"
    body["session_1"][1]["timestamp"] = "2023-05-08T09:02:30"
    body["session_1"][2]["date_time"] = "not a time"
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(raw))
    turns = list(load_locomo(path).conversations[0].turns)
    assert [t.time for t in turns[:3]] == [
        datetime(2023, 5, 8, 9, 0, tzinfo=UTC),
        datetime(2023, 5, 8, 9, 2, 30, tzinfo=UTC),
        datetime(2023, 5, 8, 9, 0, tzinfo=UTC),
    ]


def test_locomo_loader_repairs_evidence_and_counts_what_it_drops(tmp_path: Path) -> None:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(locomo_fixture()))
    data = load_locomo(path)
    questions = {q.text: q for q in data.questions}
    assert len(questions) == 4
    assert questions["What pet did Caroline adopt?"].group == "single-hop"
    assert questions["What did Melanie make?"].evidence == {"D1:2", "D2:2", "D2:4"}
    assert questions["What did Melanie make?"].group == "multi-hop"
    assert questions["What is Caroline reading?"].evidence == {"D2:5"}
    assert questions["Where is the necklace from?"].evidence == {"D2:3"}
    assert data.skipped == {
        "question without evidence": 1,
        "evidence id matching no turn (dropped)": 2,
        "question whose evidence matches no turn": 1,
    }
    assert data.repaired["QA item with malformed evidence normalised"] == 2


def test_locomo_per_sentence_sends_each_sentence_as_a_message_and_keeps_the_evidence(
    tmp_path: Path,
) -> None:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(locomo_fixture()))
    data = load_locomo(path)
    chat = per_sentence(data)
    assert chat.name == "locomo-sentences"
    turns = list(chat.conversations[0].turns)
    assert [(t.turn_id, t.text) for t in turns[:3]] == [
        ("D1:1.1", "Hey Mel!"),
        ("D1:1.2", "I went to a support group yesterday and it was powerful."),
        ("D1:2.1", "That's great!"),
    ]
    assert {t.speaker for t in turns[:2]} == {"Caroline"} and turns[0].time == turns[1].time
    assert chat.turn_count == 14  # two turns of two sentences each
    questions = {q.text: q for q in chat.questions}
    assert questions["What pet did Caroline adopt?"].evidence == {"D2:1.1"}
    assert questions["What did Melanie make?"].evidence == {"D1:2.1", "D1:2.2", "D2:2.1", "D2:4.1"}
    assert chat.skipped == data.skipped and len(chat.questions) == len(data.questions)
    assert data.turn_count == 12  # the loaded set is left as it was


def test_one_owner_puts_every_conversation_in_one_history(tmp_path: Path) -> None:
    """Two conversations become one: ids take their conversation's as a prefix, so the
    same "D1:1" of each stays two turns, and each question keeps its conversation."""
    first, second = locomo_fixture(), locomo_fixture()
    second[0]["sample_id"] = "conv-2"
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(first + second))
    data = load_locomo(path)
    long = one_owner(data)
    assert long.name == "locomo-one-owner"
    (history,) = long.conversations
    assert [s.id for s in history.sessions] == [
        "conv-1:session_1",
        "conv-1:session_2",
        "conv-2:session_1",
        "conv-2:session_2",
    ]
    turns = list(history.turns)
    assert (turns[0].turn_id, turns[12].turn_id) == ("conv-1:D1:1", "conv-2:D1:1")
    assert turns[0].text == turns[12].text and long.turn_count == data.turn_count == 24
    made = [q for q in long.questions if q.text == "What did Melanie make?"]
    assert [(q.conversation_id, sorted(q.evidence)) for q in made] == [
        ("conv-1", ["conv-1:D1:2", "conv-1:D2:2", "conv-1:D2:4"]),
        ("conv-2", ["conv-2:D1:2", "conv-2:D2:2", "conv-2:D2:4"]),
    ]
    assert long.skipped == data.skipped and long.repaired == data.repaired


def test_one_owner_keeps_which_statement_updated_which(tmp_path: Path) -> None:
    data = load_beam(write_beam(tmp_path))
    (update,) = [q for q in one_owner(data).questions if q.group == "knowledge_update"]
    assert update.evidence == {"1:2", "1:4"}
    assert update.ordered == {"updated": ["1:4"], "original": ["1:2"]}


def test_chat_typed_types_turns_as_on_a_phone_and_leaves_the_questions(tmp_path: Path) -> None:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(locomo_fixture()))
    data = load_locomo(path)
    typed = chat_typed(data)
    assert typed.name == "locomo-typed" and typed.questions == data.questions
    before, after = list(data.conversations[0].turns), list(typed.conversations[0].turns)
    assert [t.turn_id for t in after] == [t.turn_id for t in before]
    assert [t.text for t in after] != [t.text for t in before]
    assert [t.text for t in chat_typed(data).conversations[0].turns] == [t.text for t in after]
    assert [t.text for t in chat_typed(data, seed=1).conversations[0].turns] != [
        t.text for t in after
    ]
    assert data.conversations[0].sessions[0].turns[0].text.startswith("Hey Mel!")  # untouched

    def typed_as(text: str, **habits: float) -> str:
        turn = replace(before[0], text=text)
        one = Dataset("one", [Conversation("c", [Session("s", [turn])])])
        plain = {"lower": 0.0, "apostrophe": 0.0, "shorthand": 0.0, "stretch": 0.0, "typo": 0.0}
        typing = Typing(**(plain | habits))
        return next(chat_typed(one, typing).conversations[0].turns).text

    line = "Thanks! I'm going to see you tomorrow, it's so exciting."
    assert typed_as(line) == line
    assert typed_as(line, shorthand=1.0) == "thx! I'm gonna see u tmrw, it's so exciting."
    assert (
        typed_as(line, lower=1.0, apostrophe=1.0)
        == "thanks! im going to see you tomorrow, its so exciting"
    )
    assert re.fullmatch(
        r"Thanks{3,5}! I'm going to see you tomorrow, it's so{3,5} exciting\.",
        typed_as(line, stretch=1.0),
    )
    words = typed_as(line, typo=1.0).split()
    for was, now in zip(line.split(), words, strict=True):
        letters = sum(c.isalpha() for c in was)
        if letters < 4:
            assert now == was
        else:  # one letter left out, doubled, swapped or hit beside; never the first
            assert now != was and now[0] == was[0] and abs(len(now) - len(was)) <= 1


def test_locomo_parsers() -> None:
    assert normalise_dia_id("D:11:26") == "D11:26"
    assert normalise_dia_id("D30:05") == "D30:5"
    assert normalise_dia_id("D") is None
    assert split_evidence(["D8:6; D9:17", "D9:1 D4:4,D4:6", "D"]) == (
        ["D8:6", "D9:17", "D9:1", "D4:4", "D4:6"],
        1,
    )
    # runs of turns, as other files in LoCoMo's layout give them
    assert split_evidence(["D12:3-D12:5", "D2:7-8; D1:1", "D3:1 - D3:2"]) == (
        ["D12:3", "D12:4", "D12:5", "D2:7", "D2:8", "D1:1", "D3:1", "D3:2"],
        0,
    )
    # backwards, or into the next session without the conversation's turns to read it over
    assert split_evidence(["D1:3-D2:5", "D1:9-D1:2"]) == ([], 2)
    # given them, a run into the next session is read over the turns in their order
    order = ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2", "D2:3"]
    assert split_evidence(["D1:2-D2:2", "D2:2-D1:3", "D1:3-D3:1"], order) == (
        ["D1:2", "D1:3", "D2:1", "D2:2"],
        2,
    )
    when = parse_locomo_time("10:04 am on 19 December, 2023")
    assert when is not None and (when.hour, when.day, when.month) == (10, 19, 12)
    assert parse_locomo_time("yesterday") is None
    # other files in the layout: ISO 8601, other spellings of a date
    assert parse_locomo_time("2023-05-08 13:56") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert parse_locomo_time("2023-05-08T13:56:00+02:00") == datetime(
        2023, 5, 8, 11, 56, tzinfo=UTC
    )
    assert parse_locomo_time("May 8, 2023") == datetime(2023, 5, 8, tzinfo=UTC)


# -- BEAM loader --------------------------------------------------------------------------------
def message(mid: int, role: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"role": role, "id": mid, "content": text, **extra}


def write_beam(root: Path) -> Path:
    conv = root / "1"
    (conv / "probing_questions").mkdir(parents=True)
    chat = [
        {
            "batch_number": 1,
            "time_anchor": None,
            "turns": [
                [
                    message(
                        0, "user", "My deadline is March 29. ->-> 1,1", time_anchor="March-15-2024"
                    ),
                    message(1, "assistant", "Noted, the deadline is March 29."),
                ],
                [
                    message(2, "user", "The API answers in 400ms. ->->  1,2"),
                    message(3, "assistant", "That is slow."),
                ],
            ],
        },
        {
            "batch_number": 2,
            "time_anchor": "April 5, 2024",
            "turns": [  # a flat list of messages, not a list of lists
                message(4, "user", "After caching the API answers in 250ms ->-> 2,N/A"),
                message(5, "assistant", "Much better."),
                message(6, "user", "Any tips on connectivity? ->-> 5,14)", time_anchor="someday"),
                message(7, "assistant", "   "),
            ],
        },
    ]
    probing = {
        "abstention": [{"question": "What did my manager say?"}],
        "knowledge_update": [
            {
                "question": "How fast is the API?",
                "source_chat_ids": {"original_info": [2], "updated_info": [4]},
            }
        ],
        "temporal_reasoning": [
            {
                "question": "When is the deadline?",
                "source_chat_ids": {"first_event": [[0, "1"]], "second_event": [999]},
            }
        ],
        "information_extraction": [{"question": "Tips?", "source_chat_ids": [6]}],
    }
    (conv / "chat.json").write_text(json.dumps(chat))
    (conv / "probing_questions" / "probing_questions.json").write_text(json.dumps(probing))
    return root


def test_beam_loader_flattens_batches_strips_markers_and_carries_time(tmp_path: Path) -> None:
    data = load_beam(write_beam(tmp_path))
    (conv,) = data.conversations
    assert [s.id for s in conv.sessions] == ["b1", "b2"]
    turns = {t.turn_id: t for t in conv.turns}
    assert list(turns) == ["0", "1", "2", "3", "4", "5", "6"]  # 7 had no text
    assert turns["0"].text == "My deadline is March 29."
    assert turns["2"].text == "The API answers in 400ms."
    assert turns["4"].text == "After caching the API answers in 250ms"
    assert turns["6"].text == "Any tips on connectivity?"
    assert (turns["1"].role, turns["1"].speaker) == ("assistant", None)
    march, april = parse_beam_time("March-15-2024"), parse_beam_time("April 5, 2024")
    assert turns["0"].time == turns["3"].time == march  # carried from the last anchor
    assert turns["4"].time == turns["6"].time == april  # the batch's anchor
    assert conv.repaired["index marker stripped from message"] == 4
    assert conv.skipped["message without text"] == 1
    assert conv.skipped["unparseable time_anchor (ignored)"] == 1


def test_beam_loader_questions(tmp_path: Path) -> None:
    data = load_beam(write_beam(tmp_path))
    questions = {q.group: q for q in data.questions}
    assert set(questions) == {"knowledge_update", "temporal_reasoning", "information_extraction"}
    update = questions["knowledge_update"]
    assert update.evidence == {"2", "4"}
    assert update.ordered == {"updated": ["4"], "original": ["2"]}
    assert questions["temporal_reasoning"].evidence == {"0", "1"}
    assert questions["temporal_reasoning"].ordered is None
    assert data.skipped["question without evidence (abstention)"] == 1
    assert data.skipped["evidence id matching no message (dropped)"] == 1


def test_beam_parsers() -> None:
    assert strip_marker("hello ->-> 3,8") == ("hello", True)
    assert strip_marker("a -> b") == ("a -> b", False)
    assert flatten_ids({"a": [1, [2, "3"]], "b": {"c": [4]}}) == (["1", "2", "3", "4"], 0)
    assert flatten_ids(["chat_id: 5", True]) == ([], 2)
    assert parse_beam_time("2024-03-15") == parse_beam_time("March-15-2024")
    assert parse_beam_time("next week") is None


# -- end to end -----------------------------------------------------------------------------
SYSTEM_KEYS = ("n", "frac_recall@5", "frac_recall@10", "recall_any@10", "recall_all@10", "ndcg@10")


def check_report(report: dict[str, Any], *, groups: set[str]) -> None:
    for system in quality.SYSTEMS:
        assert set(report[system]) == {"overall", *groups}, system
        for figures in report[system].values():
            assert set(SYSTEM_KEYS) <= set(figures)
            assert all(0.0 <= figures[k] <= 1.0 for k in SYSTEM_KEYS if k != "n")
    speed = report["speed"]
    timed = ("recall_p50_ms", "recall_p95_ms", "first_recall_p50_ms", "first_recall_max_ms")
    for key in ("ingest_per_s", *timed, "peak_rss_mb"):
        assert speed[key] > 0, key
    assert speed["recall_p95_ms"] >= speed["recall_p50_ms"]
    assert speed["first_recall_max_ms"] >= speed["first_recall_p50_ms"]


def test_bench_locomo_end_to_end(tmp_path: Path) -> None:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(locomo_fixture()))
    out = tmp_path / "out" / "report.json"
    args = ["--home", str(tmp_path / "h"), "-q", "bench", "locomo", str(path)]
    result = CliRunner().invoke(cli, [*args, "--json", "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report == json.loads(out.read_text())
    assert (report["dataset"], report["conversations"], report["questions"]) == ("locomo", 1, 4)
    assert report["turns"] == 12
    check_report(report, groups={"single-hop", "multi-hop", "open-domain", "temporal"})
    assert report["skipped"]["question without evidence"] == 1
    assert "turn merged into an identical turn by the write path" not in report["skipped"]
    # a unique, well-worded answer is found by every system
    assert report["bm25"]["single-hop"]["recall_all@10"] == 1.0
    # per conversation too: the one conversation's figures are the overall ones
    for system in quality.SYSTEMS:
        (one,) = report["per_conversation"][system].values()
        assert one["n"] == 4
        assert one["frac_recall@10"] == report[system]["overall"]["frac_recall@10"]

    # halves of the set, in its order: one conversation is all in the first
    first, second = report["halves"]["hindsight"]["first"], report["halves"]["hindsight"]["second"]
    assert (first["conversations"], first["n"], second["n"]) == (["conv-1"], 4, 0)
    assert first["frac_recall@10"] == report["hindsight"]["overall"]["frac_recall@10"]

    table = CliRunner().invoke(cli, args)  # again into the same --home: starts afresh
    assert table.exit_code == 0, table.output
    assert "merged" not in table.output
    assert "hindsight" in table.output and "overall (4)" in table.output
    assert "speed: ingest" in table.output
    assert "f@10 by conversation, hindsight:" in table.output
    assert "f@10 by half, hindsight: first 1 conversations" in table.output

    sentences = CliRunner().invoke(cli, [*args, "--per-sentence", "--json"])
    assert sentences.exit_code == 0, sentences.output
    split = json.loads(sentences.output)
    assert (split["dataset"], split["turns"], split["questions"]) == ("locomo-sentences", 14, 4)

    typed = CliRunner().invoke(cli, [*args, "--per-sentence", "--typed", "--json"])
    assert typed.exit_code == 0, typed.output
    report = json.loads(typed.output)
    assert (report["dataset"], report["turns"]) == ("locomo-sentences-typed", 14)

    assert "details" not in report
    detailed = CliRunner().invoke(cli, [*args, "--details", "--json"])
    assert detailed.exit_code == 0, detailed.output
    details = json.loads(detailed.output)["details"]
    assert [d["question"] for d in details] == [
        "What pet did Caroline adopt?",
        "What did Melanie make?",
        "What is Caroline reading?",
        "Where is the necklace from?",
    ]
    pet = details[0]
    assert (pet["conversation"], pet["group"], pet["evidence"]) == (
        "conv-1",
        "single-hop",
        ["D2:1"],
    )
    for d in details:
        for system in quality.SYSTEMS:
            top, ranks = d[system]["top"], d[system]["ranks"]
            assert len(top) == len(set(top)) <= 10 and set(ranks) == set(d["evidence"])
            for turn, rank in ranks.items():  # an evidence turn in the top ten is where it says
                assert (turn in top) == (rank is not None and rank <= 10)
                assert turn not in top or top[rank - 1] == turn
    assert pet["bm25"]["ranks"]["D2:1"] is not None and pet["bm25"]["ranks"]["D2:1"] <= 10

    long = CliRunner().invoke(cli, [*args, "--one-owner", "--json"])
    assert long.exit_code == 0, long.output
    report = json.loads(long.output)
    assert (report["dataset"], report["turns"], report["questions"]) == ("locomo-one-owner", 12, 4)
    assert list(report["per_conversation"]["hindsight"]) == ["conv-1"]
    assert report["bm25"]["single-hop"]["recall_all@10"] == 1.0


def test_bench_locomo_with_an_llm_reports_both_and_what_the_llm_took(tmp_path: Path) -> None:
    """A loopback server answers as a model would: each user turn a fact, each question
    one sub-query; the report has the offline and the LLM figures of one run."""

    def respond(seen: Seen) -> Reply:
        name = seen.body["response_format"]["json_schema"]["name"]
        prompt = seen.body["messages"][-1]["content"]
        if name == "search":
            question = prompt.removeprefix("Question: ")
            return openai_answer(json.dumps({"queries": [question.rstrip("?")], "entities": []}))
        facts = [
            {"kind": "fact", "content": m.group(2), "confidence": 0.9, "turn": int(m.group(1))}
            for m in re.finditer(r"^\[(\d+)\] [^:]*?(?:user|tool), [^:]+: (.+)$", prompt, re.M)
        ]
        return openai_answer(json.dumps({"memories": facts}), prompt_tokens=100)

    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(locomo_fixture()))
    with fake_llm() as server:
        server.respond = respond
        env = {
            "HINDSIGHT_LLM_PROVIDER": "openai",
            "HINDSIGHT_LLM_BASE_URL": server.url + "/v1",
            "HINDSIGHT_LLM_MODEL": "m",
            "HINDSIGHT_LLM_PRICES": '{"m": {"prompt": 1.0, "completion": 2.0}}',
        }
        args = ["--home", str(tmp_path / "h"), "-q", "bench", "locomo", str(path)]
        result = CliRunner().invoke(cli, [*args, "--details", "--json"], env=env)
        assert result.exit_code == 0, result.output
        report = json.loads(result.output)
        table = CliRunner().invoke(cli, args, env=env)
    check_report(report, groups={"single-hop", "multi-hop", "open-domain", "temporal"})
    assert set(report[quality.WITH_LLM]) == set(report["hindsight"])
    # each question once, with what each system ranked for it, the LLM's search too
    assert len(report["details"]) == 4
    assert all({*quality.SYSTEMS, quality.WITH_LLM} <= set(d) for d in report["details"])
    llm = report["llm"]
    assert llm["jobs"]["done"] == 2 and llm["jobs"]["failed"] == 0  # one job per session
    assert llm["by_operation"]["extract"]["calls"] == 2
    assert llm["by_operation"]["query"]["calls"] == 4  # one per question
    assert llm["prompt_tokens"] == 2 * 100 + 4 * 11
    assert llm["cost"] == pytest.approx((llm["prompt_tokens"] + 2 * llm["completion_tokens"]) / 1e6)
    assert report["speed"]["hindsight+llm_p50_ms"] > 0
    assert table.exit_code == 0, table.output
    assert "llm (openai, m): 6 calls" in table.output
    assert "hindsight+llm" in table.output


def test_bench_beam_end_to_end(tmp_path: Path) -> None:
    root = write_beam(tmp_path / "beam")
    args = ["--home", str(tmp_path / "h"), "bench", "beam", str(root), "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    check_report(
        report, groups={"knowledge_update", "temporal_reasoning", "information_extraction"}
    )
    assert report["knowledge_update_order"]["n"] == 1
    assert set(report["knowledge_update_order"]) == {"n", *quality.SYSTEMS}

    long = CliRunner().invoke(cli, [*args, "--one-owner"])
    assert long.exit_code == 0, long.output
    report = json.loads(long.output)
    assert report["dataset"] == "beam-one-owner" and report["knowledge_update_order"]["n"] == 1


def test_bench_rejects_a_file_of_another_shape(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"not": "a list"}')
    result = CliRunner().invoke(cli, ["bench", "locomo", str(path)])
    assert result.exit_code == 2
    assert "not a LoCoMo file" in result.output


@pytest.mark.skipif(
    not (DATA / "locomo10.json").is_file(),
    reason="the LoCoMo data is not beside the repository (../shared/data/locomo10.json)",
)
def test_bench_locomo_on_the_first_real_conversation(tmp_path: Path) -> None:
    args = ["--home", str(tmp_path / "h"), "bench", "locomo", str(DATA / "locomo10.json")]
    result = CliRunner().invoke(cli, [*args, "--limit", "1", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert (report["conversations"], report["turns"], report["questions"]) == (1, 419, 197)
    check_report(
        report, groups={"single-hop", "multi-hop", "open-domain", "temporal", "adversarial"}
    )
    assert report["skipped"] == {"question without evidence": 2}
    for system in quality.SYSTEMS:  # far above chance (10 of 419 turns)
        assert report[system]["overall"]["frac_recall@10"] > 0.2, system
