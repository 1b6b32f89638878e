"""Every public operation of the library is on the CLI, the REST API, MCP and the client.

A new public method of :class:`Hindsight` fails here until it is exposed everywhere,
or listed in ``ABSENT`` with the reason it is left out of an interface.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, get_args, get_type_hints

import anyio
import click
import pytest

from hindsight import AsyncClient, Client, Hindsight
from hindsight.api import create_app
from hindsight.cli import cli
from hindsight.mcpserver import create_server

INTERFACES = ("cli", "rest", "mcp", "client")

# library method -> CLI command path
CLI: dict[str, tuple[str, ...]] = {
    "retain": ("retain",),
    "recall": ("recall",),
    "get": ("show",),
    "list_memories": ("list",),
    "stats": ("stats",),
    "owners": ("owners",),
    "update": ("update",),
    "forget": ("forget",),
    "feedback": ("feedback",),
    "history": ("history",),
    "export": ("export",),
    "import_records": ("import",),
    "observe": ("session", "add"),
    "window": ("session", "show"),
    "purge_expired": ("jobs", "run"),
    "warm": ("jobs", "run"),  # builds and saves the indexes a later process loads
    "sessions": ("session", "list"),
    "close_session": ("session", "close"),
    "summarize": ("summarize",),
    "reflect": ("reflect",),
    "review_queue": ("review", "list"),
    "approve": ("review", "approve"),
    "reject": ("review", "reject"),
    "assess": ("review", "assess"),
    "audit": ("audit", "list"),
    "verify_audit": ("audit", "verify"),
    "usage": ("usage",),
    "pin": ("pin",),
    "unpin": ("unpin",),
    "restore": ("restore",),
    "maintain": ("maintain",),
    "jobs": ("jobs", "status"),
    "run_jobs": ("jobs", "run"),
    "wait_jobs": ("jobs", "wait"),
    "retry_jobs": ("jobs", "retry"),
    "foresee": ("foresee",),
    "entities": ("entities",),
    "entity": ("entity",),
    "doctor": ("doctor",),
}
# library method -> REST operation ids (all of them must exist)
REST: dict[str, set[str]] = {
    name: {name}
    for name in CLI
    if name not in ("purge_expired", "warm", "run_jobs", "wait_jobs", "retry_jobs", "assess")
} | {
    "forget": {"forget", "forget_owner"},  # one id; or an owner's memories by session or time
    "consolidate": {"consolidate"},
}
PROBES = {"health", "ready", "metrics"}  # REST operations of the server, not of the library
# library method -> MCP tool
MCP: dict[str, str] = {
    "retain": "memory_write",
    "recall": "memory_search",
    "update": "memory_update",
    "forget": "memory_delete",
    "feedback": "memory_feedback",
    "history": "memory_history",
    "summarize": "memory_summarize",
    "reflect": "memory_reflect",
    "observe": "session_append",
    "window": "session_window",
    "pin": "memory_pin",
    "unpin": "memory_unpin",
    "restore": "memory_restore",
    "foresee": "memory_foresee",
    "entities": "memory_entities",
    "entity": "memory_entity",
    "doctor": "memory_doctor",
}
_MAINTENANCE = (
    "maintenance across all owners: expired turns are already hidden from every read, "
    "purging only reclaims space (a server purges by itself every "
    "wm_purge_interval_seconds)"
)
_ENGINE = "closes the embedded engine; a server's engine lives as long as the server"
_AGENT_TOOLS = (
    "MCP offers the tools an agent needs mid-conversation; this is for people and scripts"
)
_CALLER = (
    "the interface knows its caller (the local user, or the API key it authenticated) and "
    "runs every call as it"
)
_REVIEWER = (
    "a review is a person's decision: an agent that could approve (or turn down) what the "
    "guard held from its own writes, mid-conversation, would defeat the guard; so MCP "
    "offers it (memory_review_decide) only with HINDSIGHT_MCP_REVIEW=true, for a client a "
    "person drives"
)
_HELD = (
    "held memories are kept from agents on purpose: a quarantined one reads as an attack; "
    "memory_review_list comes with HINDSIGHT_MCP_REVIEW=true, for a client a person drives"
)
_AUDITOR = (
    "the audit log is for auditors and people, not agents mid-conversation; memory_audit "
    "comes with HINDSIGHT_MCP_REVIEW=true"
)
_WARM = (
    "loads this process's own indexes: a server warms itself as it starts (warm_owners), "
    "and no caller's request should pay for another owner's"
)
_QUEUE = (
    "runs the job queue in the caller's own process: a server runs its queue itself, in a "
    "worker thread"
)
_ASSESS = (
    "runs the LLM check in the caller's own process, a few model calls long: a server "
    "queues it on every write that holds or writes a low-trust memory and runs it in its "
    "worker thread, and its verdicts show in the review queue"
)
# (interface, library method) -> why it is deliberately not there
ABSENT: dict[tuple[str, str], str] = {
    **{(interface, "as_principal"): _CALLER for interface in INTERFACES},
    (
        "cli",
        "consolidate",
    ): "'session close' consolidates the window (close_session is consolidate)",
    ("cli", "close"): "each command opens and closes the engine itself",
    ("rest", "close"): _ENGINE,
    ("rest", "purge_expired"): _MAINTENANCE,
    ("client", "purge_expired"): "not on the REST API, which the client calls",
    ("mcp", "close"): _ENGINE,
    ("mcp", "purge_expired"): _MAINTENANCE,
    ("mcp", "maintain"): "maintenance across all owners, for people, scripts and the server's "
    "schedule (maintain_interval_seconds), not an agent mid-conversation",
    ("mcp", "get"): "memory_search returns whole memories with their ids; " + _AGENT_TOOLS,
    ("mcp", "list_memories"): _AGENT_TOOLS + " (paging through everything)",
    ("mcp", "stats"): _AGENT_TOOLS + " (store sizes and counts)",
    ("mcp", "owners"): _AGENT_TOOLS + " (an agent knows whose memory it works with)",
    ("mcp", "export"): _AGENT_TOOLS + " (bulk data out: an agent's context would drown in it)",
    ("mcp", "import_records"): _AGENT_TOOLS + " (bulk data in)",
    ("mcp", "sessions"): _AGENT_TOOLS + " (an agent knows its own session id)",
    ("mcp", "consolidate"): "session_append consolidates a full window, memory_summarize the rest",
    ("mcp", "close_session"): "memory_summarize consolidates the session's window first",
    ("mcp", "review_queue"): _HELD,
    ("mcp", "approve"): _REVIEWER,
    ("mcp", "reject"): _REVIEWER,
    ("mcp", "audit"): _AUDITOR,
    ("mcp", "verify_audit"): _AUDITOR + " (a check of the whole log's hash chain)",
    ("mcp", "usage"): _AGENT_TOOLS + " (token counts and bills)",
    **{(interface, "warm"): _WARM for interface in ("rest", "mcp", "client")},
    **{
        (i, op): _QUEUE
        for i in ("rest", "mcp", "client")
        for op in ("run_jobs", "wait_jobs", "retry_jobs")
    },
    ("mcp", "jobs"): _AGENT_TOOLS + " (the state of background work)",
    **{(i, "assess"): _ASSESS for i in ("rest", "mcp", "client")},
}


def library_operations() -> set[str]:
    return {
        name
        for name, _ in inspect.getmembers(Hindsight, inspect.isfunction)
        if not name.startswith("_")
    }


def _commands(group: click.Group, ctx: click.Context, prefix: tuple[str, ...] = ()) -> set[Any]:
    found: set[tuple[str, ...]] = set()
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        found.add((*prefix, name))
        if isinstance(command, click.Group):
            found |= _commands(command, ctx, (*prefix, name))
    return found


def _rest_operations(hs: Hindsight) -> set[str]:
    schema = create_app(hs, mcp=False).openapi()
    return {op["operationId"] for path in schema["paths"].values() for op in path.values()}


def _mcp_tools(hs: Hindsight) -> set[str]:
    tools = anyio.run(create_server(hs).list_tools)
    return {tool.name for tool in tools}


def _exposed(interface: str, hs: Hindsight) -> Callable[[str], bool]:
    """Whether a library method is exposed on ``interface``."""
    if interface == "cli":
        commands = _commands(cli, click.Context(cli))
        return lambda name: name in CLI and CLI[name] in commands
    if interface == "rest":
        operations = _rest_operations(hs)
        return lambda name: name in REST and REST[name] <= operations
    if interface == "mcp":
        tools = _mcp_tools(hs)
        return lambda name: name in MCP and MCP[name] in tools
    return lambda name: (
        callable(getattr(Client, name, None)) and callable(getattr(AsyncClient, name, None))
    )


@pytest.mark.parametrize("interface", INTERFACES)
def test_every_library_operation_is_exposed_or_deliberately_absent(
    interface: str, hs: Hindsight
) -> None:
    exposed = _exposed(interface, hs)
    missing = []
    for name in sorted(library_operations()):
        absent = (interface, name) in ABSENT
        if exposed(name) == absent:
            state = "exposed but listed as absent" if absent else "missing"
            missing.append(f"{name}: {state}")
    assert missing == [], f"{interface}: {missing}"


def test_no_mapping_names_an_operation_the_library_lacks() -> None:
    known = library_operations()
    stale = {*CLI, *REST, *MCP, *(name for _, name in ABSENT)} - known
    assert stale == set()
    assert all(reason.strip() for reason in ABSENT.values())


def test_every_rest_operation_and_mcp_tool_stands_for_a_library_operation(hs: Hindsight) -> None:
    mapped = {op for ops in REST.values() for op in ops}
    assert _rest_operations(hs) - PROBES == mapped
    assert _mcp_tools(hs) == set(MCP.values())


def _parameters(fn: Callable[..., Any]) -> list[tuple[str, Any, Any, Any]]:
    """Each parameter's name, kind, default and annotation, without ``self``."""
    params = list(inspect.signature(fn).parameters.values())[1:]
    return [(p.name, p.kind, p.default, p.annotation) for p in params]


@pytest.mark.parametrize("client", [Client, AsyncClient])
def test_the_clients_take_the_librarys_arguments(client: type[Any]) -> None:
    for name in sorted(library_operations() - {n for i, n in ABSENT if i == "client"}):
        assert _parameters(getattr(client, name)) == _parameters(getattr(Hindsight, name)), name
        assert getattr(client, name).__doc__, name


# (MCP tool, library parameter) -> the tool's own name for it, or why it has none
MCP_PARAMETERS: dict[tuple[str, str], str] = {
    ("memory_search", "owners"): "=owner",
    ("memory_search", "kinds"): "=kind",
    ("memory_search", "include_history"): _AGENT_TOOLS + " (superseded values are history)",
    ("memory_search", "min_confidence"): _AGENT_TOOLS + " (results are ranked already)",
    ("memory_search", "token_budget"): "k bounds what an agent reads; budgets are for packers",
    ("memory_write", "messages"): "an agent writes what was just said, one text at a time",
    ("memory_write", "confidence"): "what an agent writes is weighed by its source, not set",
    ("memory_update", "confidence"): _AGENT_TOOLS + " (confidence is the store's to keep)",
    ("memory_update", "query_hints"): _AGENT_TOOLS,
    ("memory_update", "status"): _AGENT_TOOLS + " (memory_delete forgets)",
    ("memory_update", "expires_at"): _AGENT_TOOLS + " (memory_write sets one as it writes)",
    ("memory_delete", "owner"): "one memory by id; bulk forgets are for people, with a preview",
    ("memory_delete", "session_id"): "as for owner",
    ("memory_delete", "since"): "as for owner",
    ("memory_delete", "until"): "as for owner",
    ("memory_delete", "source"): "as for owner",
    ("memory_delete", "principal"): "as for owner",
    ("memory_delete", "dry_run"): "a preview is for a person deciding what goes; an agent "
    "forgets the one memory it names",
    ("session_append", "metadata"): _AGENT_TOOLS,
    ("session_append", "tool_name"): "role 'tool' turns name their tool in the text",
}


def library_parameters(method: Callable[..., Any]) -> list[str]:
    """A library method's parameters without ``self``, its typed ``**options`` (a
    recall's) read as the options they stand for."""
    names = []
    for p in list(inspect.signature(method).parameters.values())[1:]:
        if p.kind is p.VAR_KEYWORD:
            (options,) = get_args(get_type_hints(method)[p.name])
            names += list(get_type_hints(options))
        else:
            names.append(p.name)
    return names


def test_mcp_tools_take_the_librarys_parameters_or_say_why_not(hs: Hindsight) -> None:
    tools = {t.name: t for t in anyio.run(create_server(hs).list_tools)}
    problems = []
    for method, tool in MCP.items():
        given = set(tools[tool].input_schema["properties"])
        for name in library_parameters(getattr(Hindsight, method)):
            said = MCP_PARAMETERS.get((tool, name))
            own = said[1:] if said and said.startswith("=") else name
            if own in given:
                given.discard(own)
            elif said is None or said.startswith("="):
                problems.append(f"{tool} lacks {name}")
        problems += [f"{tool} has {extra}, which {method} lacks" for extra in sorted(given)]
    assert problems == []
    listed = {tool for tool, _ in MCP_PARAMETERS}
    assert listed <= set(MCP.values()) and all(r.strip() for r in MCP_PARAMETERS.values())


def test_the_client_takes_the_librarys_parameters(hs: Hindsight) -> None:
    for name in sorted(library_operations()):
        for client in (Client, AsyncClient):
            if callable(getattr(client, name, None)):
                library = inspect.signature(getattr(Hindsight, name)).parameters
                remote = inspect.signature(getattr(client, name)).parameters
                assert list(remote) == list(library), f"{client.__name__}.{name}"
