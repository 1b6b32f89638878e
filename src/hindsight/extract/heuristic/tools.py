"""Tool results: a failure with its error line, or a short summary of what came back."""

from __future__ import annotations

from dataclasses import replace

from hindsight.extract.base import Extracted
from hindsight.extract.heuristic.wording import hit, regex
from hindsight.models import Kind, Tag

_FAILURE = regex(
    r"\b(?:error|errno|exception|traceback|failed|failure|fatal|panic|denied|refused|forbidden|"
    r"unauthori[sz]ed|timed?[\s-]?out|not found|segmentation fault|unreachable|aborted)\b|"
    r"\b\w+(?:Error|Exception)\b|\bexit(?:ed)? (?:with )?(?:code|status) ?[:=]? ?-?[1-9]\d*|"
    r"\bnon-zero exit|\b(?:HTTP(?:/\d(?:\.\d)?)?|status(?: code)?) ?[:=]? ?[45]\d\d\b|"
    r"[\"']?(?:success|ok)[\"']? ?[:=] ?false\b"
)
_NOT_FAILURE = regex(
    r"[\"']?(?:errors?|exception|failures?)[\"']?\s*[:=]\s*(?:null|none|nil|false|\"\"|''|"
    r"\[\]|\{\}|0\b)|\b(?:0|no) (?:errors?|failures?|failed)\b|\bfailed[:=] ?0\b"
)
_EXCEPTION_LINE = regex(r"^[\w.]*(?:Error|Exception|Exit|Timeout)\w*\b")


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


def failed(text: str) -> bool:
    """Whether a tool's output reports a failure ("error": null and "0 failed" do not)."""
    return bool(_FAILURE.search(_NOT_FAILURE.sub(" ", text)))


def read(content: str, name: str | None) -> list[Extracted]:
    """A failure with its error line, or a short summary of a result ("Tool weather
    returned: ...", or "A tool returned: ..." when the turn names none)."""
    lines = [line.strip() for line in content.splitlines() if line.strip()]
    if not lines:
        return []
    tool, said = (name, f"Tool {name}") if name else ("tool", "A tool")
    if not failed(content):
        line = _clip(lines[0], 120)
        hints = (tool, f"{tool} result")
        found = hit(Kind.TOOL_RESULT, f"{said} returned: {line}", 0.4, hints=hints)
        return [replace(e, tool=tool, detail=line) for e in found]
    errors = [ln for ln in lines if _EXCEPTION_LINE.match(ln)] or [ln for ln in lines if failed(ln)]
    # a traceback ends with its exception; otherwise the first error line says most
    line = errors[-1] if errors and "traceback" in content.lower() else (errors or lines)[0]
    line = _clip(line, 160)
    found = hit(Kind.TOOL_RESULT, f"{said} failed: {line}", 0.9, hints=(tool, f"{tool} error"))
    return [replace(e, tags=(Tag.TOOL_FAILURE,), tool=tool, detail=line) for e in found]
