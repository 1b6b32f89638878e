"""``hindsight serve`` (REST API and MCP over HTTP) and ``hindsight mcp`` (MCP over stdio)."""

from __future__ import annotations

import importlib.util

import click

from hindsight.cli.base import App, echo
from hindsight.cli.group import cli
from hindsight.errors import MissingExtraError


def _require_server_extra() -> None:
    """A missing server dependency is an install line, not a traceback."""
    for module, package in (
        ("fastapi", "fastapi"),
        ("uvicorn", "uvicorn"),
        ("mcp", "mcp"),
        ("prometheus_client", "prometheus-client"),
    ):
        if importlib.util.find_spec(module) is None:
            raise MissingExtraError("server", package)


@cli.command()
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Interface to listen on. Beyond loopback, HINDSIGHT_API_KEYS_FILE is required.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="TCP port to listen on.",
)
@click.pass_obj
def serve(app: App, host: str, port: int) -> None:
    """Serve the REST API, MCP over streamable HTTP at /mcp, and the console at /ui/.

    On loopback with no key file every caller is trusted. With
    HINDSIGHT_API_KEYS_FILE set, each request needs 'Authorization: Bearer <key>'
    and stays within the key's owners. OpenAPI docs are at /docs, metrics at /metrics.
    """
    _require_server_extra()
    import uvicorn

    from hindsight.api import create_app, keyring_for

    keyring = keyring_for(app.settings(), host=host)
    app.worker = True  # the server runs the LLM job queue
    hs = app.engine
    api = create_app(hs, keyring=keyring)
    access = f"on ({len(keyring)} keys)" if keyring is not None else "off (trusted loopback)"
    echo(f"hindsight serving http://{host}:{port} (MCP at /mcp); access control {access}", err=True)
    uvicorn.run(api, host=host, port=port, log_level="info", server_header=False)


@cli.command()
@click.pass_obj
def mcp(app: App) -> None:
    """Serve MCP over stdin and stdout, for a local MCP client.

    The client runs as the principal 'mcp' (the local user's scopes and trust), so
    what its agent writes is reviewed at the CLI ('hindsight review'), not by it.
    Configure your client to run 'hindsight mcp'; see the README for snippets.
    """
    _require_server_extra()
    from hindsight import mcpserver

    app.worker = True  # a long-lived server: it runs the LLM job queue
    mcpserver.run_stdio(app.engine)
