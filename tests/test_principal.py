"""The library knows its caller: every operation checks the principal's scopes, once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from hindsight import Hindsight
from hindsight.access import TRUSTED, KeyRing, Principal
from hindsight.errors import NotFoundError, PermissionDeniedError, ValidationError

ALICE, BOB = "user:alice", "user:bob"
APP = Principal("alice-app", read=(ALICE, "shared:*"), write=(ALICE,))


@pytest.fixture
def seeded(hs: Hindsight) -> tuple[Hindsight, str, str]:
    mine = hs.retain(ALICE, "I love jazz.", kind="preference").created[0]
    theirs = hs.retain(BOB, "I love opera.", kind="preference").created[0]
    hs.observe(BOB, "b1", "I am planning a trip.")
    return hs, mine, theirs


def test_the_engine_runs_as_the_trusted_local_caller(hs: Hindsight) -> None:
    assert hs.principal is TRUSTED and TRUSTED.name == "local"
    hs.stats()  # every owner: allowed


def test_a_view_reaches_only_its_owners(seeded: tuple[Hindsight, str, str]) -> None:
    hs, mine, theirs = seeded
    app = hs.as_principal(APP)
    assert app.get(mine).owner == ALICE
    assert [r.memory.id for r in app.recall(ALICE, "jazz", k=1)] == [mine]
    app.update(mine, confidence=0.5)
    # an id of an owner out of scope is an unknown id: same class, same message
    with pytest.raises(NotFoundError) as unknown:
        app.get("no-such-id")
    for call in (app.get, app.forget, lambda mid: app.update(mid, confidence=0.1)):
        with pytest.raises(NotFoundError) as foreign:
            call(theirs)
        assert str(foreign.value) == str(unknown.value).replace("no-such-id", theirs)
    assert hs.get(theirs).confidence == 1.0  # nothing changed


denied: dict[str, Callable[[Hindsight], Any]] = {
    "retain": lambda hs: hs.retain(BOB, "I hate opera."),
    "recall one": lambda hs: hs.recall(BOB, "opera"),
    "recall several": lambda hs: hs.recall({ALICE: 1.0, BOB: 0.5}, "opera"),
    "list": lambda hs: hs.list_memories(BOB),
    "stats of all": lambda hs: hs.stats(),
    "stats of one": lambda hs: hs.stats(BOB),
    "forget an owner": lambda hs: hs.forget(owner=BOB),
    "export": lambda hs: list(hs.export(BOB)),
    "import": lambda hs: hs.import_records(
        [*hs.as_principal(TRUSTED).export(ALICE), *hs.as_principal(TRUSTED).export(BOB)]
    ),
    "observe": lambda hs: hs.observe(BOB, "b1", "hello"),
    "window": lambda hs: hs.window(BOB, "b1"),
    "sessions": lambda hs: hs.sessions(BOB),
    "consolidate": lambda hs: hs.consolidate(BOB, "b1"),
    "summarize": lambda hs: hs.summarize(BOB, "b1"),
    "reflect": lambda hs: hs.reflect(BOB),
    "purge": lambda hs: hs.purge_expired(),
    "write a read-only owner": lambda hs: hs.retain("shared:team", "We meet on Mondays."),
}


@pytest.mark.parametrize("operation", list(denied))
def test_every_operation_out_of_scope_is_denied_and_changes_nothing(
    seeded: tuple[Hindsight, str, str], operation: str
) -> None:
    hs, _, _ = seeded
    before = (list(hs.export(ALICE)), list(hs.export(BOB)), hs.window(BOB, "b1"))
    with pytest.raises(PermissionDeniedError, match="alice-app"):
        denied[operation](hs.as_principal(APP))
    assert (list(hs.export(ALICE)), list(hs.export(BOB)), hs.window(BOB, "b1")) == before


def test_closing_a_view_closes_nothing(hs: Hindsight) -> None:
    hs.as_principal(APP).close()
    assert hs.retain(ALICE, "Still open.", kind="fact").created


BOB_APP = Principal("bob-app", read=(BOB,), write=(BOB,))


@pytest.mark.parametrize("target", ["alice's memory", "an unknown id"])
def test_an_import_cannot_link_into_another_owner(
    seeded: tuple[Hindsight, str, str], target: str
) -> None:
    """A link to another owner's memory reads as a link to nothing: it is dropped, so
    alice's forget cannot cascade into bob's memories, and nothing tells bob which."""
    hs, mine, theirs = seeded
    link = mine if target == "alice's memory" else "m_000000000000feedfeedfeedfeed"
    record = {**next(r for r in hs.export(BOB) if r["id"] == theirs)}
    record |= {"id": "m_0000000000001234567812345678", "content": "I love the blues."}
    record["provenance"] = {**record["provenance"], "derived_from": [link, theirs]}
    record["superseded_by"] = link
    assert hs.as_principal(BOB_APP).import_records([record]) == {
        "imported": 1,
        "skipped": 0,
        "held": 0,
    }
    kept = hs.get(record["id"])
    assert kept.provenance.derived_from == [theirs] and kept.superseded_by is None
    receipt = hs.forget(mine)
    assert receipt.derived_ids == [] and hs.get(record["id"]).owner == BOB


@pytest.mark.parametrize("taken", [True, False], ids=["alice's id", "an unknown id"])
def test_an_import_answers_alike_for_another_owners_id_and_an_unknown_one(
    seeded: tuple[Hindsight, str, str], taken: bool
) -> None:
    """Bob's record reusing alice's id imports under an id of its own (a record of his
    batch linking to it follows), and again is skipped: the answers are those for an
    unknown id, and alice's memory is untouched."""
    hs, mine, theirs = seeded
    reused = mine if taken else "m_000000000000feedfeedfeedfeed"
    base = next(r for r in hs.export(BOB) if r["id"] == theirs)
    first = {**base, "id": reused, "content": "I love the blues."}
    second = {**base, "id": "m_0000000000001234567812345678", "content": "I love soul."}
    second["provenance"] = {**base["provenance"], "derived_from": [reused]}
    before = hs.get(mine)
    bob = hs.as_principal(BOB_APP)
    assert bob.import_records([first, second]) == {"imported": 2, "skipped": 0, "held": 0}
    blues = next(m for m in bob.list_memories(BOB) if m.content == "I love the blues.")
    assert (blues.id == reused) is not taken
    assert hs.get(second["id"]).provenance.derived_from == [blues.id]
    assert hs.get(mine) == before
    assert bob.import_records([first, second]) == {"imported": 0, "skipped": 2, "held": 0}


@pytest.mark.backends
def test_an_owners_stats_do_not_move_with_another_owners_writes(hs: Hindsight) -> None:
    hs.retain(ALICE, "I keep bees.")
    before = hs.stats(ALICE)
    for i in range(30):
        hs.retain(BOB, f"Note {i}: the quarterly numbers are in folder {i}.")
    assert hs.stats(ALICE) == before and before.size_bytes > 0
    assert hs.stats().size_bytes > before.size_bytes  # the whole store: its files


@pytest.mark.parametrize(
    "key", [" padded-key-0000000001", "padded-key-0000000001\n", "two words here!!"]
)
def test_a_key_with_spaces_is_refused_in_the_key_file(key: str) -> None:
    with pytest.raises(ValidationError, match="must not contain spaces"):
        KeyRing.parse({"keys": [{"name": "k", "key": key, "read": ["*"]}]})
