"""The tools' arguments: the types every tool's schema is built from, and the strict check
of what a client sends against them.

Each type is a flat JSON schema with a description for the model. A tool's arguments are
validated strictly (a value of the wrong JSON type is an error naming the argument, never
coerced); the error's text is what the client reads.
"""

from __future__ import annotations

import contextlib
import json
from typing import Annotated, Any, Literal, get_args, get_origin

from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from pydantic import Field
from pydantic import ValidationError as ArgumentsError

# -- argument types: flat JSON schemas, each argument described for the model ---------
KindName = Literal[
    "preference", "fact", "experience", "tool_result", "episode", "summary", "reflection"
]
Role = Literal["user", "assistant", "tool", "system"]

Owner = Annotated[
    str,
    Field(
        description="Whose memory: 'namespace:name', e.g. 'user:alice', 'agent:planner' or "
        "'shared:team-a' (lower-case namespace; name of letters, digits and . _ @ + -)."
    ),
]
MemoryId = Annotated[
    str,
    Field(description="The id of one memory, as returned by memory_search or memory_write."),
]
SessionId = Annotated[
    str,
    Field(
        description="The conversation session's id, e.g. 'chat-2024-05-01' (letters, digits "
        "and . _ : @ + -, at most 128 characters)."
    ),
]
Metadata = Annotated[
    dict[str, Any] | None,
    Field(description='Optional JSON object kept with the memory, e.g. {"topic": "travel"}.'),
]
Since = Annotated[
    str | None,
    Field(
        description="Only memories observed at or after this time: an ISO 8601 date or time, "
        "e.g. '2024-05-01' or '2024-05-01T14:30:00Z'."
    ),
]
RequestId = Annotated[
    str | None,
    Field(
        description="An idempotency key: the same call sent again with it (after a timeout, "
        "say) stores nothing twice."
    ),
]
Until = Annotated[
    str | None,
    Field(description="Only memories observed before this time (ISO 8601, as for since)."),
]


# -- errors: mapped once for every tool ------------------------------------------------
def _describe_arguments(exc: ArgumentsError) -> str:
    problems = []
    for error in exc.errors():
        name = ".".join(str(part) for part in error["loc"]) or "arguments"
        if error["type"] == "missing":
            problems.append(f"argument {name} is required")
        else:
            got = repr(error["input"])
            got = got if len(got) <= 60 else got[:57] + "..."
            problems.append(f"argument {name}: {error['msg']} (got {got})")
    return "ValidationError: " + "; ".join(problems)


def _takes_object(annotation: Any) -> bool:
    """Whether an argument's type admits a JSON object (``metadata``)."""
    if get_origin(annotation) is dict:
        return True
    return any(_takes_object(arg) for arg in get_args(annotation))


def strict_arguments(tool: Tool, arguments: dict[str, Any]) -> dict[str, Any]:
    """The tool's keyword arguments, validated strictly against its own argument model: a
    value of the wrong JSON type (``k: "5"``, ``k: true``, ``useful: 1``) is an error naming
    the argument, never coerced. One leniency is kept from the SDK, for clients known to send
    it: a JSON object argument sent as the text of one (``metadata: '{"a": 1}'``)."""
    fields = tool.fn_metadata.arg_model.model_fields
    unknown = sorted(set(arguments) - set(fields))
    if unknown:
        raise ToolError(
            f"ValidationError: unknown argument(s) {', '.join(unknown)}; "
            f"{tool.name} takes {', '.join(sorted(fields))}"
        )
    given = dict(arguments)
    for name, value in arguments.items():
        if isinstance(value, str) and _takes_object(fields[name].annotation):
            with contextlib.suppress(ValueError, RecursionError):
                decoded = json.loads(value)
                given[name] = decoded if isinstance(decoded, dict) else value
    try:
        model = tool.fn_metadata.arg_model.model_validate(given, strict=True)
    except ArgumentsError as exc:
        raise ToolError(_describe_arguments(exc)) from None
    return model.model_dump_one_level()
