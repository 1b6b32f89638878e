"""The ``hindsight`` command line, run in-process with CliRunner and once as a real process."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result
from providers import TinyHash

from hindsight import Hindsight, Settings, Status
from hindsight.access import LOCAL_AGENT
from hindsight.cli import base as cli_base
from hindsight.cli import cli
from hindsight.cli import memory as cli_memory
from hindsight.store import Filter, open_store, open_working
from hindsight.write.transfer import memory_to_dict

OWNER = "user:alice"


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Never the user's home; relaxed durability is enough for these tests.
    monkeypatch.setenv("HINDSIGHT_HOME", str(tmp_path / "env-home"))
    monkeypatch.setenv("HINDSIGHT_SQLITE_SYNCHRONOUS", "OFF")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def run(home: Path, *args: str, input: str | bytes | None = None, code: int = 0) -> Result:
    result = CliRunner().invoke(cli, ["--home", str(home), *args], input=input)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code == code, (result.stdout, result.stderr)
    return result


def run_json(home: Path, *args: str, input: str | bytes | None = None) -> Any:
    return json.loads(run(home, *args, "--json", input=input).stdout)


def assert_one_line_error(result: Result, *needles: str) -> None:
    assert result.stderr.startswith("error: ")
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr
    for needle in needles:
        assert needle in result.stderr


def snapshot(home: Path) -> tuple[Any, ...]:
    """Everything a failed command must leave untouched, read from the store itself."""
    settings = Settings(home=home, sqlite_synchronous="OFF")
    store = open_store(settings)
    working = open_working(settings, store)
    try:
        stats = asdict(store.stats())
        stats.pop("size_bytes")
        everything = Filter(owners=[OWNER], statuses=tuple(Status), current_only=False)
        memories = sorted(
            (memory_to_dict(m) for m in store.iterate(everything)), key=lambda d: str(d["id"])
        )
        now = datetime.now(UTC)
        windows = {
            sid: [asdict(t) for t in working.wm_window(OWNER, sid, now)]
            for sid, _, _ in working.wm_sessions(OWNER, now)
        }
        return stats, memories, windows
    finally:
        working.close()
        store.close()


def retain(home: Path, text: str, *args: str) -> dict[str, Any]:
    data: dict[str, Any] = run_json(home, "retain", "--owner", OWNER, *args, text)
    return data


def explicit_preference(home: Path) -> dict[str, Any]:
    """The memory the ``seeded`` fixture stored with --kind preference."""
    memories: list[dict[str, Any]] = run_json(
        home, "list", "--owner", OWNER, "--kind", "preference"
    )["memories"]
    [memory] = [m for m in memories if m["content"] == "The user prefers short answers."]
    return memory


@pytest.fixture(scope="session")
def seeded_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with two sessions and an explicit preference, built once and copied per test."""
    home = tmp_path_factory.mktemp("seeded") / "home"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HINDSIGHT_SQLITE_SYNCHRONOUS", "OFF")
        retain(home, "I live in Paris and I love jazz.", "--session", "s1")
        retain(home, "I am allergic to peanuts.", "--session", "s2")
        retain(home, "The user prefers short answers.", "--kind", "preference")
        run(home, "session", "add", "--owner", OWNER, "--session", "s1", "I am reading Dune.")
    return home


@pytest.fixture
def seeded(home: Path, seeded_template: Path) -> Path:
    shutil.copytree(seeded_template, home)
    return home


# -- help -------------------------------------------------------------------------------------
def _commands(
    group: click.Group, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    for name, command in group.commands.items():
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))


def test_every_command_has_help_and_both_help_flags(home: Path) -> None:
    commands = [((), cli), *_commands(cli)]
    assert {
        "retain",
        "recall",
        "forget",
        "list",
        "show",
        "stats",
        "update",
        "export",
        "import",
        "session",
        "demo",
        "review",
        "audit",
    } <= set(cli.commands)
    assert isinstance(cli.commands["session"], click.Group)
    assert {"add", "show", "close"} <= set(cli.commands["session"].commands)
    review, audit = cli.commands["review"], cli.commands["audit"]
    assert isinstance(review, click.Group) and isinstance(audit, click.Group)
    assert {"list", "approve", "reject"} <= set(review.commands)
    assert {"list", "verify"} <= set(audit.commands)
    for path, command in commands:
        assert (command.help or "").strip(), f"{' '.join(path)} has no help text"
        for param in command.params:
            if isinstance(param, click.Option):
                assert param.help, f"{' '.join(path)} {param.opts[0]} has no help text"
        for flag in ("--help", "-h"):
            result = run(home, *path, flag)
            assert result.stdout.startswith("Usage: hindsight"), (path, flag)
    assert not home.exists(), "--help must not open the store"


def test_group_help_documents_exit_codes(home: Path) -> None:
    out = run(home, "-h").stdout
    assert "Exit codes" in out and "3  not found" in out


def test_usage_error_is_one_line_exit_2(home: Path) -> None:
    result = run(home, "recall", "jazz", code=2)
    assert_one_line_error(result, "--owner", "hindsight recall -h")
    assert_one_line_error(run(home, "no-such-command", code=2), "no-such-command")


# -- retain and recall ------------------------------------------------------------------------
def test_retain_then_recall_json(home: Path) -> None:
    kept = retain(home, "I live in Paris and I love jazz.", "--session", "s1")
    assert len(kept["episodes"]) == 1
    assert set(kept) == {"episodes", "created", "updated", "superseded", "status", "reasons"}
    assert kept["status"] == {mid: "active" for mid in [*kept["episodes"], *kept["created"]]}
    assert kept["reasons"] == {}
    data = run_json(home, "recall", "--owner", OWNER, "where do I live?")
    assert set(data) == {"results"}
    assert data["results"], data
    first = data["results"][0]
    for key in (
        "id",
        "content",
        "kind",
        "owner",
        "score",
        "explanation",
        "confidence",
        "observed_at",
        "session_id",
    ):
        assert key in first
    assert first["owner"] == OWNER and first["session_id"] == "s1"
    assert "Paris" in first["content"]
    assert {"channels", "fused", "boosts", "final"} <= set(first["explanation"])
    assert all("rank" in hit for hit in first["explanation"]["channels"].values())
    assert first["observed_at"].startswith("20") and "T" in first["observed_at"]


def test_recall_table_shows_why(seeded: Path) -> None:
    out = run(seeded, "recall", "--owner", OWNER, "--owner", "user:bob", "-k", "2", "peanuts")
    assert "why: " in out.stdout and "#1" in out.stdout
    assert out.stdout.count("why: ") <= 2


def test_recall_filters_and_budget(seeded: Path) -> None:
    data = run_json(seeded, "recall", "--owner", OWNER, "--kind", "preference", "answers")
    assert data["results"] and {r["kind"] for r in data["results"]} == {"preference"}
    data = run_json(seeded, "recall", "--owner", OWNER, "--since", "2999-01-01", "jazz")
    assert data == {"results": []}
    data = run_json(seeded, "recall", "--owner", OWNER, "--budget", "1", "jazz")
    assert data == {"results": []}


def test_recall_in_the_askers_time_zone(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    retain(home, "I went hiking in the Alps.", "--observed-at", "2023-04-30T20:00:00Z")

    def time_boost(*args: str) -> float:
        found = run_json(home, "recall", "--owner", OWNER, *args, "hiking in May 2023")
        boost: float = found["results"][0]["explanation"]["boosts"]["time"]
        return boost

    assert time_boost() == 1.0  # 30 April in UTC
    assert time_boost("--timezone", "+09:00") == 2.0  # 1 May in Tokyo
    monkeypatch.setenv("HINDSIGHT_TIMEZONE", "Asia/Tokyo")
    assert time_boost() == 2.0
    assert time_boost("--timezone", "UTC") == 1.0
    result = run(home, "recall", "--owner", OWNER, "--timezone", "Mars", "hiking", code=2)
    assert_one_line_error(result, "invalid timezone 'Mars'")


def test_retain_reads_stdin(home: Path) -> None:
    kept = run_json(home, "retain", "--owner", OWNER, "-", input="I love hiking in the Alps.\n")
    [episode] = kept["episodes"]
    assert run_json(home, "show", episode)["content"] == "I love hiking in the Alps."


def test_invalid_utf8_on_stdin_changes_nothing(seeded: Path) -> None:
    before = snapshot(seeded)
    result = run(seeded, "retain", "--owner", OWNER, "-", input=b"caf\xe9 au lait", code=2)
    assert_one_line_error(result, "not valid UTF-8")
    assert snapshot(seeded) == before


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--owner", OWNER, "   "], "content is empty"),
        (["--owner", "Alice", "I love jazz."], "invalid owner"),
        (["--owner", OWNER, "x" * 101], "limit is 100"),
        (["--owner", OWNER, "--observed-at", "yesterday", "I love jazz."], "observed_at"),
        (["--owner", OWNER, "--metadata", "{oops", "I love jazz."], "not valid JSON"),
        (["--owner", OWNER, "--metadata", "[1]", "I love jazz."], "JSON object"),
        (["--owner", OWNER, "--session", "bad id!", "I love jazz."], "session id"),
        (["--owner", OWNER, "--kind", "gossip", "I love jazz."], "gossip"),
        (["--owner", OWNER, "I love\x00 jazz."], "NUL"),
    ],
)
def test_bad_input_changes_nothing(
    seeded: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], needle: str
) -> None:
    monkeypatch.setenv("HINDSIGHT_MAX_CONTENT_CHARS", "100")
    before = snapshot(seeded)
    assert_one_line_error(run(seeded, "retain", *args, code=2), needle)
    assert snapshot(seeded) == before


def test_bad_update_and_setting_change_nothing(
    seeded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = explicit_preference(seeded)
    before = snapshot(seeded)
    assert_one_line_error(run(seeded, "update", memory["id"], code=2), "nothing to update")
    result = run(seeded, "update", memory["id"], "--content", " ", "--confidence", "0.5", code=2)
    assert_one_line_error(result, "content is empty")
    result = run(seeded, "update", memory["id"], "--confidence", "1.5", code=2)
    assert_one_line_error(result, "confidence")
    assert_one_line_error(run(seeded, "update", "m_nope", "--confidence", "1", code=3), "m_nope")
    assert snapshot(seeded) == before
    monkeypatch.setenv("HINDSIGHT_SQLITE_SYNCHRONOUS", "SOMETIMES")
    result = run(seeded, "retain", "--owner", OWNER, "I love jazz.", code=2)
    assert_one_line_error(result, "HINDSIGHT_SQLITE_SYNCHRONOUS")


# -- list, show, stats, update ----------------------------------------------------------------
def test_list_show_stats_update(seeded: Path) -> None:
    listed = run_json(seeded, "list", "--owner", OWNER, "--kind", "episode")["memories"]
    assert len(listed) == 2 and {m["kind"] for m in listed} == {"episode"}
    page = run_json(
        seeded, "list", "--owner", OWNER, "--kind", "episode", "--limit", "1", "--offset", "1"
    )["memories"]
    assert [m["id"] for m in page] == [listed[1]["id"]]
    assert (
        run_json(seeded, "list", "--owner", OWNER, "--session", "s2", "--kind", "episode")[
            "memories"
        ][0]["content"]
        == "I am allergic to peanuts."
    )
    table = run(seeded, "list", "--owner", OWNER).stdout
    assert listed[0]["id"] in table

    shown = run_json(seeded, "show", listed[0]["id"])
    assert shown["id"] == listed[0]["id"] and shown["content"] == listed[0]["content"]
    assert "content:" in run(seeded, "show", listed[0]["id"]).stdout
    assert_one_line_error(run(seeded, "show", "m_missing", code=3), "m_missing")

    stats = run_json(seeded, "stats", "--owner", OWNER)
    assert stats["memories"] >= 3 and stats["by_kind"]["episode"] == 2
    assert "memories:" in run(seeded, "stats").stdout

    updated = run_json(
        seeded,
        "update",
        listed[0]["id"],
        "--content",
        "I live in Rome.",
        "--metadata",
        '{"edited": true}',
        "--confidence",
        "0.5",
        "--status",
        "archived",
    )
    assert updated["content"] == "I live in Rome." and updated["metadata"] == {"edited": True}
    assert updated["confidence"] == 0.5 and updated["status"] == "archived"
    archived = run_json(seeded, "list", "--owner", OWNER, "--status", "archived")["memories"]
    assert [m["id"] for m in archived] == [listed[0]["id"]]


# -- forget -----------------------------------------------------------------------------------
def _ids(home: Path) -> set[str]:
    lines = run(home, "export", "--owner", OWNER).stdout.splitlines()
    return {json.loads(line)["id"] for line in lines}


def test_forget_by_id_checks_the_owner(seeded: Path) -> None:
    memory = explicit_preference(seeded)
    before = _ids(seeded)
    result = run(seeded, "forget", "--owner", "user:bob", "--id", memory["id"], code=3)
    assert_one_line_error(result, memory["id"])
    assert _ids(seeded) == before
    receipt = run_json(seeded, "forget", "--owner", OWNER, "--id", memory["id"])
    assert receipt["deleted_ids"] == [memory["id"]] and receipt["count"] >= 1
    assert _ids(seeded) == before - {memory["id"]}
    run(seeded, "forget", "--owner", OWNER, "--id", memory["id"], code=3)
    result = run(seeded, "forget", "--owner", OWNER, "--id", "x", "--session", "s1", code=2)
    assert_one_line_error(result, "--id cannot be combined")


def test_forget_by_session(seeded: Path) -> None:
    s2 = {
        m["id"]
        for m in run_json(seeded, "list", "--owner", OWNER, "--session", "s2", "--history")[
            "memories"
        ]
    }
    before = _ids(seeded)
    receipt = run_json(seeded, "forget", "--owner", OWNER, "--session", "s2")
    assert set(receipt["deleted_ids"]) | set(receipt["derived_ids"]) >= s2
    assert receipt["criteria"]["session_id"] == "s2"
    assert _ids(seeded) == before - set(receipt["deleted_ids"]) - set(receipt["derived_ids"])
    assert "forgot 0 memories" in run(seeded, "forget", "--owner", OWNER, "--session", "s2").stdout


def test_forget_everything_needs_yes_off_a_terminal(seeded: Path) -> None:
    before = _ids(seeded)
    result = run(seeded, "forget", "--owner", OWNER, code=2)
    assert_one_line_error(result, "--yes")
    assert _ids(seeded) == before
    receipt = run_json(seeded, "forget", "--owner", OWNER, "--yes")
    assert set(receipt["deleted_ids"]) | set(receipt["derived_ids"]) == before
    assert _ids(seeded) == set()
    assert run_json(seeded, "stats", "--owner", OWNER)["memories"] == 0


def test_forget_everything_asks_on_a_terminal(
    seeded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli_memory, "stdin_is_terminal", lambda: True)
    before = _ids(seeded)
    result = run(seeded, "forget", "--owner", OWNER, input="n\n", code=1)
    assert "Forget all" in result.stderr and "error: not confirmed" in result.stderr
    assert _ids(seeded) == before
    result = run(seeded, "forget", "--owner", OWNER, input="y\n")
    assert "forgot" in result.stdout
    assert _ids(seeded) == set()


# -- export and import ------------------------------------------------------------------------
def test_reembed_opens_a_store_of_another_model(home: Path) -> None:
    with Hindsight(Settings(home=home), embedder=TinyHash()) as hs:
        hs.retain("user:alice", "I love jazz.")
        total = hs.stats().memories
    refused = run(home, "recall", "--owner", "user:alice", "music", code=1)
    assert_one_line_error(refused, "tiny-hash", "run 'hindsight reembed'")
    assert run_json(home, "reembed") == {"reembedded": total}
    assert "jazz" in run(home, "recall", "--owner", "user:alice", "which music?").stdout
    assert run(home, "reembed").stdout == "re-embedded 0 memories\n"


def test_export_import_round_trip(seeded: Path, tmp_path: Path) -> None:
    dump = run(seeded, "export", "--owner", OWNER).stdout
    records = [json.loads(line) for line in dump.splitlines()]
    assert len(records) >= 4
    fresh = tmp_path / "fresh"
    path = tmp_path / "dump.jsonl"
    path.write_text(dump, encoding="utf-8")
    counts = run_json(fresh, "import", str(path))
    assert counts == {"imported": len(records), "skipped": 0, "held": 0}
    again = [
        json.loads(line) for line in run(fresh, "export", "--owner", OWNER).stdout.splitlines()
    ]

    def key(r: dict[str, Any]) -> tuple[str, str, str]:
        return r["id"], r["content"], r["kind"]

    assert sorted(map(key, again)) == sorted(map(key, records))
    # known ids are skipped; stdin works too
    again_counts = run_json(fresh, "import", "-", input=dump)
    assert again_counts == {"imported": 0, "skipped": len(records), "held": 0}
    assert "imported 0" in run(fresh, "import", "-", input=dump).stdout


@pytest.mark.parametrize(
    ("lines", "needle"),
    [
        (["{good}", "not json"], "line 2 is not valid JSON"),
        (["{good}", "", "[1, 2]"], "line 3 is not a JSON object"),
        (["{good}", "", '{"id": "m_x", "owner": "user:alice"}'], "line 3: missing field"),
        (["{good}", "{good}"], "line 2 repeats id"),
    ],
)
def test_import_bad_line_imports_nothing(
    seeded: Path, tmp_path: Path, lines: list[str], needle: str
) -> None:
    good = run(seeded, "export", "--owner", OWNER).stdout.splitlines()[0]
    text = "\n".join(good if line == "{good}" else line for line in lines) + "\n"
    fresh = tmp_path / "fresh"
    assert_one_line_error(run(fresh, "import", "-", input=text, code=2), needle)
    assert run_json(fresh, "stats")["memories"] == 0


def test_import_missing_file_is_bad_input(home: Path, tmp_path: Path) -> None:
    result = run(home, "import", str(tmp_path / "nope.jsonl"), code=2)
    assert_one_line_error(result, "nope.jsonl")


def test_import_invalid_utf8(home: Path) -> None:
    assert_one_line_error(run(home, "import", "-", input=b"\xff\n", code=2), "line 1")


# -- working memory ---------------------------------------------------------------------------
def test_session_add_show_close(home: Path) -> None:
    sess = ("--owner", OWNER, "--session", "chat-1")
    added = run_json(home, "session", "add", *sess, "I am planning a trip to Oslo.")
    assert added["window_turns"] == 1 and added["consolidated"] is False
    run(home, "session", "add", *sess, "--role", "assistant", "Noted!")
    turns = run_json(home, "session", "show", *sess)["turns"]
    assert [(t["role"], t["content"]) for t in turns] == [
        ("user", "I am planning a trip to Oslo."),
        ("assistant", "Noted!"),
    ]
    assert "Oslo" in run(home, "session", "show", *sess).stdout
    closed = run_json(home, "session", "close", *sess)
    assert len(closed["episodes"]) == 2
    assert run(home, "session", "close", *sess).stdout == "nothing kept\n"
    assert run_json(home, "session", "show", *sess)["turns"] == []
    episodes = run_json(home, "list", "--owner", OWNER, "--kind", "episode")["memories"]
    assert {m["content"] for m in episodes} == {"I am planning a trip to Oslo.", "Noted!"}
    result = run(home, "session", "add", "--owner", OWNER, "--session", "chat-1", " ", code=2)
    assert_one_line_error(result, "content")


def test_progress_is_silent_when_quiet_or_not_a_terminal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for quiet in (True, False):  # pytest's stderr is not a terminal either
        app = cli_base.App(home=None, quiet=quiet)
        with app.progress(iter([1, 2]), length=2, label="working") as items:
            assert list(items) == [1, 2]
        app.note("a note")
    assert capsys.readouterr().err == ""


# -- demo -------------------------------------------------------------------------------------
def test_demo_runs_in_a_temporary_store(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["demo"])
    assert result.exit_code == 0, result.stderr
    assert "why: " in result.stdout and "Berlin" in result.stdout
    assert not (tmp_path / "env-home").exists(), "the demo must not touch HINDSIGHT_HOME"


def test_demo_json_and_kept_home(home: Path) -> None:
    data = run_json(home, "demo")
    assert data["owner"] == "user:demo" and len(data["recalls"]) >= 3
    assert all(r["results"] for r in data["recalls"])
    assert all("explanation" in x for r in data["recalls"] for x in r["results"])
    assert run_json(home, "stats", "--owner", "user:demo")["memories"] > 0


# -- as a real process ------------------------------------------------------------------------
def _command() -> list[str]:
    script = Path(sys.executable).parent / "hindsight"
    return [str(script)] if script.exists() else [sys.executable, "-m", "hindsight"]


def test_real_process(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "HINDSIGHT_HOME": str(tmp_path / "h"),
        "HINDSIGHT_SQLITE_SYNCHRONOUS": "OFF",
    }

    def proc(cmd: list[str], *args: str, input: bytes = b"") -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [*cmd, *args], input=input, env=env, capture_output=True, timeout=120, check=False
        )

    kept = proc(_command(), "retain", "--owner", OWNER, "--json", "-", input=b"I live in Oslo.")
    assert kept.returncode == 0, kept.stderr
    found = proc(
        [sys.executable, "-m", "hindsight"],
        "recall",
        "--owner",
        OWNER,
        "--json",
        "where do I live?",
    )
    assert found.returncode == 0, found.stderr
    assert "Oslo" in json.loads(found.stdout)["results"][0]["content"]
    bad = proc(_command(), "retain", "--owner", OWNER, "-", input=b"\xc3\x28")
    assert bad.returncode == 2
    assert bad.stderr.decode().startswith("error: ") and b"Traceback" not in bad.stderr
    assert bad.stderr.count(b"\n") == 1


def test_session_list_shows_open_sessions(tmp_path: Path) -> None:
    runner = CliRunner()
    home = ["--home", str(tmp_path / "h")]
    for sid in ("s1", "s2"):
        added = runner.invoke(
            cli, [*home, "session", "add", "--owner", "user:a", "--session", sid, "hi"]
        )
        assert added.exit_code == 0, added.output
    listed = runner.invoke(cli, [*home, "session", "list", "--owner", "user:a", "--json"])
    assert listed.exit_code == 0, listed.output
    sessions = json.loads(listed.output)["sessions"]
    assert sorted(s["session_id"] for s in sessions) == ["s1", "s2"]
    assert all(s["turns"] == 1 for s in sessions)


def test_jobs_list_and_run(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    listed = run_json(home, "jobs", "list")
    assert [j["name"] for j in listed] == [
        "purge-expired",
        "prune-requests",
        "maintain",
        "extract",
        "assess",
        "warm",
        "prune-audit",
    ]
    every = {j["name"]: j["every_seconds"] for j in listed}
    assert every.pop("warm") is None  # a server runs it once, as it starts
    assert every.pop("extract") is None  # a worker thread runs the queue
    assert every.pop("assess") is None  # writes queue it, a worker thread runs it
    assert all(seconds > 0 for seconds in every.values())
    assert "purge-expired" in run(home, "jobs", "list").stdout
    monkeypatch.setenv("HINDSIGHT_WM_TTL_SECONDS", "1")
    run(home, "session", "add", "--owner", OWNER, "--session", "old", "I am in Oslo.")
    time.sleep(1.1)
    assert run_json(home, "jobs", "run", "purge-expired") == {"job": "purge-expired", "count": 1}
    assert run(home, "jobs", "run", "purge-expired").stdout == "purge-expired: 0\n"
    assert_one_line_error(run(home, "jobs", "run", "nothing", code=2), "nothing")
    run(home, "retain", "--owner", OWNER, "--request-id", "r1", "I keep bees.")
    monkeypatch.setenv("HINDSIGHT_REQUEST_TTL_SECONDS", "1")
    time.sleep(1.1)
    assert run_json(home, "jobs", "run", "prune-requests") == {"job": "prune-requests", "count": 1}


# -- the review queue, the audit log, forgetting by source ------------------------------------
TRUTH = "I'm severely allergic to penicillin."
CLAIM = "Pharmacy sync: the patient is no longer allergic to penicillin."


def _held(home: Path) -> str:
    """A claim an agent wrote over the stdio MCP server (as ``mcp``), held for review;
    the person at the CLI (``local``) reviews it."""
    retain(home, TRUTH)
    with Hindsight(Settings(home=home)) as hs:
        agent = hs.as_principal(LOCAL_AGENT)
        claim: str = agent.retain(OWNER, CLAIM, source="tool").episodes[0]
    return claim


def test_review_list_shows_each_held_memory_beside_its_conflicts(home: Path) -> None:
    claim = _held(home)
    (item,) = [
        i
        for i in run_json(home, "review", "list", "--owner", OWNER)["items"]
        if i["memory"]["id"] == claim
    ]
    assert item["memory"]["status"] == "pending_review"
    assert item["memory"]["provenance"]["source"] == "tool" and item["memory"]["trust"] < 1
    assert "contradicts" in item["memory"]["review"]["reason"]
    assert item["conflicts"] and all("allergic" in c["content"] for c in item["conflicts"])
    table = run(home, "review", "list").stdout  # every owner: the local user reads them all
    line = next(line for line in table.splitlines() if line.startswith(claim))
    assert "pending_review" in line and "contradicts" in line
    assert "conflicts" in table and "[user, trust 1.00]" in table and "[tool, trust" in table
    assert run(home, "review", "list", "--owner", "user:nobody").stdout == (
        "nothing held for review\n"
    )


def test_review_approve_and_reject(home: Path) -> None:
    claim = _held(home)
    approved = run_json(home, "review", "approve", claim)["memories"]
    assert approved[0]["id"] == claim and approved[0]["status"] == "active"
    assert approved[0]["review"]["decision"] == "approved"
    assert_one_line_error(run(home, "review", "approve", claim, code=2), "not held for review")
    assert_one_line_error(run(home, "review", "approve", "m_0000nothing", code=3), "no memory")

    again = retain(
        home, "Sync: the patient is no longer allergic to penicillin.", "--source", "tool"
    )
    held_id = again["episodes"][0]
    out = run(home, "review", "reject", "--keep", held_id).stdout
    assert out.startswith(f"rejected {held_id}") and "now rejected" in out
    assert run_json(home, "show", held_id)["status"] == "rejected"

    third = retain(home, "Update: the patient is not allergic to penicillin.", "--source", "tool")
    receipt = run_json(home, "review", "reject", "--forget", third["episodes"][0])
    assert third["episodes"][0] in receipt["deleted_ids"]
    run(home, "show", third["episodes"][0], code=3)


def test_audit_list_filters_and_verify_detects_an_edit(home: Path) -> None:
    claim = _held(home)
    run(home, "review", "approve", claim)
    entries = run_json(home, "audit", "list", "--owner", OWNER)["entries"]
    assert [e["action"] for e in reversed(entries)][:2] == ["retain", "retain"]
    assert {"review"} <= {e["action"] for e in entries}
    assert all(e["hash"] for e in entries)
    # the user wrote the truth and decided; the agent, over MCP, wrote the claim
    assert [e["principal"] for e in reversed(entries)] == ["local", "mcp", "local"]
    reviews = run_json(home, "audit", "list", "--action", "review", "--limit", "1")["entries"]
    assert len(reviews) == 1 and claim in reviews[0]["memory_ids"]
    older = run_json(home, "audit", "list", "--before", str(entries[0]["seq"]))["entries"]
    assert [e["seq"] for e in older] == [e["seq"] for e in entries[1:]]
    assert "retain" in run(home, "audit", "list").stdout
    assert run_json(home, "audit", "verify") == {
        "entries": len(entries),
        "intact": True,
        "broken_at": None,
    }
    assert run(home, "audit", "verify").stdout.startswith("intact:")
    with sqlite3.connect(Settings(home=home).database_path) as db:
        db.execute(f"UPDATE audit SET principal = 'mallory' WHERE seq = {entries[-1]['seq']}")
    db.close()
    broken = run(home, "audit", "verify", code=1).stdout
    assert broken.startswith(f"broken at entry {entries[-1]['seq']}")


def test_forget_by_source_and_by_writer(home: Path) -> None:
    retain(home, "I love jazz.")
    tool = retain(home, "Tool weather returned: sunny.", "--source", "tool")
    receipt = run_json(home, "forget", "--owner", OWNER, "--source", "tool")
    assert set(tool["episodes"]) <= set(receipt["deleted_ids"])
    assert receipt["criteria"]["source"] == "tool"
    sources = {
        m["provenance"]["source"] for m in run_json(home, "list", "--owner", OWNER)["memories"]
    }
    assert sources == {"user"}
    nobody = run_json(home, "forget", "--owner", OWNER, "--principal", "crawler")
    assert nobody["deleted_ids"] == [] and nobody["criteria"]["principal"] == "crawler"
    result = run(home, "forget", "--owner", OWNER, "--id", "x", "--source", "tool", code=2)
    assert_one_line_error(result, "--id cannot be combined")
    assert_one_line_error(run(home, "forget", "--owner", OWNER, "--source", "robot", code=2))
