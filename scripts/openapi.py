"""Write the REST API's OpenAPI schema to the TypeScript client's snapshot.

    python scripts/openapi.py            # rewrites clients/typescript/openapi.json
    python scripts/openapi.py --stdout   # prints it

The TypeScript client's types are generated from that snapshot
(``npm run generate`` in clients/typescript), and tests/test_typescript_client.py fails
when the app's schema and the snapshot differ, so the client cannot drift from the server.
``info.version`` is left out: a release is not a change of the API.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

SNAPSHOT = Path(__file__).resolve().parents[1] / "clients/typescript/openapi.json"


def schema() -> dict[str, Any]:
    """The app's OpenAPI schema as served at /openapi.json, without ``info.version``."""
    from hindsight import Hindsight, Settings
    from hindsight.api import create_app

    with tempfile.TemporaryDirectory() as home, Hindsight(Settings(home=Path(home))) as hs:
        document = create_app(hs, mcp=False).openapi()
    document["info"].pop("version", None)
    return document


def dumps(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    text = dumps(schema())
    if "--stdout" in sys.argv[1:]:
        sys.stdout.write(text)
    else:
        SNAPSHOT.write_text(text, encoding="utf-8")
        print(f"wrote {SNAPSHOT}", file=sys.stderr)


if __name__ == "__main__":
    main()
