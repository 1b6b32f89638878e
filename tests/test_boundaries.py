"""Architecture rules that keep the seams clean."""

from __future__ import annotations

import ast
from pathlib import Path

import hindsight

PACKAGE = Path(hindsight.__file__).parent
DRIVERS = {"sqlite3", "psycopg", "psycopg2", "asyncpg", "redis", "usearch"}
SQL_WORDS = ("SELECT ", "INSERT INTO", "DELETE FROM", "CREATE TABLE", "UPDATE memories")


def _imports(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_no_driver_or_sql_outside_the_storage_package() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if "store" in path.relative_to(PACKAGE).parts:
            continue
        source = path.read_text()
        if bad := _imports(ast.parse(source)) & DRIVERS:
            offenders.append(f"{path.name} imports {sorted(bad)}")
        offenders.extend(f"{path.name} holds SQL ({w!r})" for w in SQL_WORDS if w in source)
    assert offenders == []


def test_public_surface_is_pinned() -> None:
    assert sorted(hindsight.__all__) == sorted(
        [
            "UNSET",
            "AccessError",
            "AsyncClient",
            "AuthenticationError",
            "Client",
            "ConflictError",
            "EmbeddingError",
            "EmbeddingMismatchError",
            "ExtractionError",
            "Explanation",
            "ForgetReceipt",
            "Hindsight",
            "HindsightError",
            "Kind",
            "Memory",
            "MissingExtraError",
            "NotFoundError",
            "PermissionDeniedError",
            "Principal",
            "PluginError",
            "Provenance",
            "RecallResult",
            "RetainResult",
            "Settings",
            "Source",
            "Status",
            "Tag",
            "StoreError",
            "StoreTimeoutError",
            "Turn",
            "ValidationError",
            "WriteRefusedError",
            "__version__",
        ]
    )
    for name in hindsight.__all__:
        assert hasattr(hindsight, name), name
