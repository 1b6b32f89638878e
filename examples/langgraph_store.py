"""A LangGraph graph whose store is hindsight. Runs offline: python examples/langgraph_store.py"""

import operator
import tempfile
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from hindsight import Hindsight, Settings
from hindsight.integrations.langgraph import HindsightStore


class State(TypedDict):
    said: Annotated[list[str], operator.add]


def remember(state: State, *, store: BaseStore) -> dict[str, list[str]]:
    store.put(("user", "alice", "prefs"), "food", {"text": "Alice loves spicy Thai food"})
    store.put(("user", "alice", "prefs"), "music", {"text": "Alice listens to jazz"})
    return {"said": ["remembered"]}


def answer(state: State, runtime: Runtime[None]) -> dict[str, list[str]]:
    assert runtime.store is not None
    best = runtime.store.search(("user", "alice"), query="what should we cook?", limit=1)
    return {"said": [best[0].value["text"]]}


with tempfile.TemporaryDirectory() as home, Hindsight(Settings(home=home)) as memory:
    graph = StateGraph(State)
    graph.add_node("remember", remember)
    graph.add_node("answer", answer)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "answer")
    graph.add_edge("answer", END)
    app = graph.compile(store=HindsightStore(memory=memory))
    print(app.invoke({"said": []})["said"])  # ['remembered', 'Alice loves spicy Thai food']
