"""hindsight.integrations.langgraph: a LangGraph store over the engine or a Client."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any, TypedDict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

langgraph = pytest.importorskip("langgraph")

from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.runtime import Runtime  # noqa: E402
from langgraph.store.base import BaseStore, Item, SearchItem  # noqa: E402

from hindsight import Hindsight  # noqa: E402
from hindsight.integrations.langgraph import HindsightStore  # noqa: E402


@pytest.fixture
def store(adapter_memory: Any) -> HindsightStore:
    return HindsightStore(memory=adapter_memory)


def test_put_get_round_trip(store: HindsightStore, adapter_engine: Hindsight) -> None:
    value = {"food": "pizza", "n": 3, "nested": {"ok": True, "xs": [1, 2.5, None]}}
    store.put(("user", "alice", "prefs"), "k1", value)
    item = store.get(("user", "alice", "prefs"), "k1")
    assert isinstance(item, Item)
    assert (item.namespace, item.key, item.value) == (("user", "alice", "prefs"), "k1", value)
    # kept by user:alice, as one memory that says what the value says
    (m,) = [x for x in adapter_engine.list_memories("user:alice") if "langgraph" in x.metadata]
    assert m.owner == "user:alice"
    assert "pizza" in m.content
    assert item.created_at == m.created_at
    assert item.updated_at == m.updated_at
    assert store.get(("user", "alice", "prefs"), "nope") is None
    assert store.get(("user", "alice"), "k1") is None  # another namespace


def test_update_keeps_created_at_and_none_forgets(
    store: HindsightStore, adapter_engine: Hindsight
) -> None:
    ns = ("user", "alice")
    store.put(ns, "k", {"text": "likes tea"})
    first = store.get(ns, "k")
    assert first is not None
    store.put(ns, "k", {"text": "likes coffee"})
    second = store.get(ns, "k")
    assert second is not None
    assert second.value == {"text": "likes coffee"}
    assert second.created_at == first.created_at
    assert second.updated_at > first.updated_at
    assert len(adapter_engine.list_memories("user:alice")) == 1
    store.delete(ns, "k")
    assert store.get(ns, "k") is None
    assert adapter_engine.list_memories("user:alice", include_history=True) == []


def test_one_label_namespace_is_refused(store: HindsightStore) -> None:
    with pytest.raises(ValueError, match="two labels"):
        store.put(("user",), "k", {"a": "b"})
    with pytest.raises(ValueError, match="valid owner"):
        store.put(("User!", "x"), "k", {"a": "b"})


def test_search(store: HindsightStore) -> None:
    store.put(("user", "alice", "prefs"), "food", {"text": "Alice loves spicy Thai food"})
    store.put(("user", "alice", "prefs"), "music", {"text": "Alice listens to jazz", "x": 1})
    store.put(("user", "alice", "work"), "job", {"text": "Alice is a nurse", "x": 1})
    store.put(("user", "bob"), "food", {"text": "Bob hates spicy food"})
    store.put(("team", "red"), "food", {"text": "the team orders spicy pizza"})

    hits = store.search(("user", "alice"), query="what food does she like?")
    assert all(isinstance(h, SearchItem) for h in hits)
    assert hits[0].key == "food" and hits[0].score is not None
    assert {h.namespace[:2] for h in hits} == {("user", "alice")}

    assert {h.key for h in store.search(("user", "alice", "prefs"))} == {"food", "music"}
    assert {h.key for h in store.search(("user", "alice"), filter={"x": 1})} == {"music", "job"}
    everyone = store.search(("user",), query="spicy food", limit=10)
    assert {(h.namespace, h.key) for h in everyone} >= {
        (("user", "alice", "prefs"), "food"),
        (("user", "bob"), "food"),
    }
    assert all(h.namespace[0] == "user" for h in everyone)
    page = store.search(("user", "alice"), limit=1, offset=1)
    assert len(page) == 1
    assert page[0].key in {"food", "music", "job"}
    assert len(store.search(("user", "alice"), limit=2)) == 2


def test_list_namespaces(store: HindsightStore) -> None:
    store.put(("user", "alice", "prefs"), "a", {"t": "x"})
    store.put(("user", "alice", "work", "2024"), "b", {"t": "y"})
    store.put(("team", "red"), "c", {"t": "z"})
    assert store.list_namespaces() == [
        ("team", "red"),
        ("user", "alice", "prefs"),
        ("user", "alice", "work", "2024"),
    ]
    assert store.list_namespaces(prefix=("user",)) == [
        ("user", "alice", "prefs"),
        ("user", "alice", "work", "2024"),
    ]
    assert store.list_namespaces(prefix=("*", "alice")) == [
        ("user", "alice", "prefs"),
        ("user", "alice", "work", "2024"),
    ]
    assert store.list_namespaces(suffix=("2024",)) == [("user", "alice", "work", "2024")]
    assert store.list_namespaces(max_depth=2) == [("team", "red"), ("user", "alice")]
    assert store.list_namespaces(limit=1, offset=1) == [("user", "alice", "prefs")]


def test_async(store: HindsightStore) -> None:
    async def scenario() -> None:
        await store.aput(("user", "carol"), "k", {"text": "Carol rides a bike"})
        item = await store.aget(("user", "carol"), "k")
        assert item is not None and item.value == {"text": "Carol rides a bike"}
        hits = await store.asearch(("user", "carol"), query="bike")
        assert [h.key for h in hits] == ["k"]
        await store.adelete(("user", "carol"), "k")
        assert await store.aget(("user", "carol"), "k") is None

    asyncio.run(scenario())


class State(TypedDict):
    said: Annotated[list[str], operator.add]


def test_compiled_graph(store: HindsightStore) -> None:
    def remember(state: State, *, store: BaseStore) -> dict[str, Any]:
        store.put(("user", "dave", "notes"), "city", {"text": "Dave lives in Lisbon"})
        return {"said": ["kept"]}

    def answer(state: State, runtime: Runtime[None]) -> dict[str, Any]:
        assert runtime.store is not None
        hits = runtime.store.search(("user", "dave"), query="where does he live?")
        return {"said": [hits[0].value["text"]]}

    graph = StateGraph(State)
    graph.add_node("remember", remember)
    graph.add_node("answer", answer)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "answer")
    graph.add_edge("answer", END)
    app = graph.compile(store=store)
    assert app.invoke({"said": []}) == {"said": ["kept", "Dave lives in Lisbon"]}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    value=st.dictionaries(st.text(max_size=8), json_values, max_size=4),
    key=st.text(min_size=1, max_size=12),
)
def test_any_json_value_round_trips(
    adapter_engine: Hindsight, value: dict[str, Any], key: str
) -> None:
    store = HindsightStore(memory=adapter_engine)
    store.put(("user", "erin", "x"), key, value)
    item = store.get(("user", "erin", "x"), key)
    assert item is not None and (item.key, item.value) == (key, value)
    store.delete(("user", "erin", "x"), key)
    assert store.get(("user", "erin", "x"), key) is None


def test_memory_must_be_an_engine_or_a_sync_client(adapter_url: str) -> None:
    from hindsight import AsyncClient

    client = AsyncClient(adapter_url)
    with pytest.raises(TypeError, match=r"sync hindsight\.Client"):
        HindsightStore(memory=client)
    asyncio.run(client.close())
    with pytest.raises(TypeError):
        HindsightStore(memory=object())
