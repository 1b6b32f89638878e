"""The MCP server: hindsight's memory as tools an LLM agent can call.

A thin adapter over :class:`~hindsight.engine.Hindsight`, on the official MCP SDK
(``mcp`` 2.x, ``pip install '.[server]'``). Every tool checks the
caller's :class:`~hindsight.access.Principal`, runs the library call off the event
loop within ``request_timeout_seconds`` and returns JSON. Errors are mapped once,
in ``_Server.call_tool`` (:mod:`.server`): a hindsight error or a bad argument becomes a
tool error (``isError``) whose text names the argument and what was wrong.

Besides the tools, one prompt: ``briefing`` (an owner, and days ahead), what lies ahead
for the owner as text, which a client offers at the start of a session.

Transports: :func:`run_stdio` (a local client such as a desktop app, as ``mcp``) and
:func:`http_app` (streamable HTTP, mounted at ``/mcp`` by ``hindsight serve``;
API keys from :class:`~hindsight.access.KeyRing`).

The package, by concern: :mod:`.server` builds the server (its instructions, the strict
tool calls) and serves stdio, draining the calls in flight through :mod:`.stdio`;
:mod:`.http` serves streamable HTTP behind API keys. The tools come in groups over
:mod:`.toolbase`: :mod:`.memory` (long-term memory), :mod:`.sessions` (working memory,
summaries and reflections), :mod:`.briefing` (what lies ahead, and the prompt),
:mod:`.entities` (who and what the memories name) and :mod:`.admin` (doctor, review,
audit); :mod:`.arguments` holds their argument types and validates what a client sends.
"""

from __future__ import annotations

from hindsight.errors import MissingExtraError

try:  # every module of the package builds on the SDK: a missing extra is one install line
    import anyio  # noqa: F401
    import mcp.server.mcpserver  # noqa: F401
    import mcp_types  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise MissingExtraError("server", "mcp") from exc

from hindsight.mcpserver.arguments import KindName
from hindsight.mcpserver.http import http_app
from hindsight.mcpserver.server import INSTRUCTIONS, create_server, run_stdio

__all__ = ["INSTRUCTIONS", "KindName", "create_server", "http_app", "run_stdio"]
