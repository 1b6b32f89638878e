"""The TypeScript client (clients/typescript) is typed from a snapshot of the OpenAPI
schema; this fails when the app's schema moves away from that snapshot."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("openapi_script", ROOT / "scripts/openapi.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_typescript_clients_schema_snapshot_is_the_apps_schema() -> None:
    script = _script()
    snapshot = json.loads(script.SNAPSHOT.read_text(encoding="utf-8"))
    assert script.schema() == snapshot, (
        "the REST API's schema changed: run `python scripts/openapi.py`, then "
        "`npm run generate` in clients/typescript, and fix the client where tsc complains"
    )


def test_the_snapshot_is_written_as_the_script_writes_it() -> None:
    script = _script()
    text = script.SNAPSHOT.read_text(encoding="utf-8")
    assert script.dumps(json.loads(text)) == text
