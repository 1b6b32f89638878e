"""Architecture rules that keep the seams clean."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
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
            "History",
            "HistoryEvent",
            "Kind",
            "Memory",
            "MissingExtraError",
            "NotFoundError",
            "PermissionDeniedError",
            "Principal",
            "PluginError",
            "Provenance",
            "RecallRequest",
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


BASE_ONLY = textwrap.dedent(
    """
    import sys
    # the packages the extras bring, and what they bring in turn, as if not installed
    for name in ("anyio", "fastapi", "starlette", "uvicorn", "mcp", "httpx", "httpx2",
                 "prometheus_client", "psycopg", "redis", "tokenizers", "huggingface_hub",
                 "fastapi_offline", "schemathesis", "hypothesis"):
        sys.modules[name] = None
    from hindsight.cli import cli
    home = ["--home", sys.argv[1]]
    for args in (["retain", "--owner", "user:a", "I live in Paris."],
                 ["recall", "--owner", "user:a", "--json", "where does she live?"],
                 ["session", "add", "--owner", "user:a", "--session", "s", "hello"],
                 ["summarize", "--owner", "user:a", "--session", "s"],
                 ["reflect", "--owner", "user:a"], ["jobs", "list"],
                 ["jobs", "run", "purge-expired"], ["stats"], ["export", "--owner", "user:a"],
                 ["usage"]):
        try:
            cli([*home, *args], standalone_mode=False)
        except SystemExit as exit:
            assert not exit.code, (args, exit.code)
    # an LLM provider over HTTP needs the llm extra, and says so
    from hindsight import MissingExtraError, Settings
    from hindsight.llm import registry
    try:
        registry.create("openai", Settings(home=sys.argv[1]))
        raise AssertionError("made without httpx")
    except MissingExtraError as exc:
        assert "pip install '.[llm]'" in str(exc), exc
    """
)


def test_the_base_install_runs_without_any_extra(tmp_path: Path) -> None:
    """What `pip install agent-hindsight` gives must work with none of the extras' packages
    (anyio once came in through tokenizers' dependencies, and the CLI needed it)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", BASE_ONLY, str(tmp_path)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Paris" in done.stdout


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_graph() -> dict[str, set[str]]:
    """Each module of the package and the modules it imports: at the top, under
    TYPE_CHECKING or inside a function alike. An import of a package's face (an
    ``__init__`` that defines no class or function) is not an edge: it hands names on,
    and is drawn by what it names."""
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    faces = {
        name
        for name, p in paths.items()
        if p.name == "__init__.py"
        and not any(
            isinstance(n, ast.ClassDef | ast.FunctionDef) for n in ast.parse(p.read_text()).body
        )
    }
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        edges = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [
                    f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in paths else node.module
                    for a in node.names
                ]
            else:
                continue
            edges.update(t for t in targets if t in paths and t not in faces and t != name)
        graph[name] = edges
    return graph


def test_no_import_circle_between_modules() -> None:
    graph = _module_graph()
    done: set[str] = set()
    circles = []

    def visit(node: str, trail: list[str]) -> None:
        if node in trail:
            circles.append(" -> ".join([*trail[trail.index(node) :], node]))
            return
        if node in done:
            return
        for nxt in sorted(graph[node]):
            visit(nxt, [*trail, node])
        done.add(node)

    for node in sorted(graph):
        visit(node, [])
    assert circles == []


def test_no_module_is_over_600_lines_and_the_top_level_holds_at_most_15() -> None:
    """Rooms a newcomer reads in one sitting, and a top level that shows the packages."""
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > 600
    }
    assert long == {}
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 15, top
