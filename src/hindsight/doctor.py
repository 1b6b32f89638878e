"""``hindsight doctor``: what the engine is configured with, what the store holds of each
embedding version, and whether each endpoint answers.

One report, made here for every interface (:meth:`hindsight.Hindsight.doctor`, the
``hindsight doctor`` command, ``GET /v1/doctor``, MCP's ``memory_doctor``)::

    {"ok": true,        # every check that ran passed
     "embedding": {"provider", "model", "dimension", "remote", "base_url",
                   "bound": {"model", "dimension"} or None,    # what the store is bound to
                   "versions": [{"model", "dimension", "memories", "current"}],
                   "to_embed",         # memories without a vector of the current version
                   "switch_pending",   # vectors of another version remain: reembed
                   "check"},
     "reranker": {"name", "model", "base_url", "model_dir", "check"},
     "llm": {"provider", "model", "models", "base_url", "check"},
     "store": {"database", "path" or "host" and "replicas", "vectors", "qdrant_url", "check"}}

A check is one cheap real call, given :data:`CHECK_SECONDS` at most and no retry: the
embedding model embeds a short text, the reranker ranks one, the LLM answers with one
token, a Qdrant server lists its collections. It is ``{"ok", "ms", "error"}`` (the
error's first line), or None when it did not run (``check_endpoints=False``, or nothing
to call: no reranker, a reranker that is the LLM, vectors kept in the database).

Never a key, password or token: URLs keep only their scheme, host, port and path, and
every text is cleared of the configured secrets and of any URL's user and password.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit, urlunsplit

from hindsight import embed
from hindsight.errors import EmbeddingError, ValidationError, VectorsUnavailableError
from hindsight.rerank import registry as rerankers
from hindsight.store import open_store

if TYPE_CHECKING:
    from hindsight.config import Settings
    from hindsight.embed import Embeddings
    from hindsight.rerank import Reranker
    from hindsight.store import Store

CHECK_SECONDS: Final = 5.0
_PROBE: Final = "hindsight doctor"
_USERINFO: Final = re.compile(r"(?<=//)[^/@\s]*@")
_SECRET_OPTION: Final = re.compile(r"key|token|secret|password", re.IGNORECASE)


def report(
    settings: Settings,
    *,
    store: Store,
    embedder: Embeddings,
    reranker: Reranker | None,
    check_endpoints: bool = True,
) -> dict[str, Any]:
    """The report of an engine's parts (see the module's docstring)."""
    llm = _llm(settings, check_endpoints)  # first: an unknown provider is a bad setting
    parts = {
        "embedding": _embedding(settings, store, embedder, check_endpoints),
        "reranker": _reranker(settings, reranker, check_endpoints),
        "llm": llm,
        "store": _store(settings, store, check_endpoints),
    }
    ok = all(part["check"] is None or part["check"]["ok"] for part in parts.values())
    cleared: dict[str, Any] = _cleared({"ok": ok, **parts}, _secrets(settings))
    return cleared


def diagnose(settings: Settings, *, check_endpoints: bool = True) -> dict[str, Any]:
    """The report of what ``settings`` configure, without opening an engine: it works
    when the engine would refuse to open (the embedding model changed, a re-embedding
    was interrupted). A bad setting raises the error that names it."""
    store = open_store(settings)
    embedder: Embeddings | None = None
    reranker: Reranker | None = None
    try:
        embedder = embed.from_settings(settings)
        reranker = rerankers.create(settings.reranker, settings)
        return report(
            settings,
            store=store,
            embedder=embedder,
            reranker=reranker,
            check_endpoints=check_endpoints,
        )
    finally:
        if reranker is not None:
            reranker.close()
        if embedder is not None:
            embedder.close()
        store.close()


def public_url(url: str | None) -> str | None:
    """``url`` without its user, password, query and fragment."""
    if url is None:
        return None
    parts = urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    try:
        port = parts.port
    except ValueError:  # not a number: say nothing of it
        port = None
    netloc = host if port is None else f"{host}:{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


# -- the parts ----------------------------------------------------------------------------------
def _embedding(
    settings: Settings, store: Store, embedder: Embeddings, check: bool
) -> dict[str, Any]:
    model = embedder.model_id
    binding = store.embedding_binding()
    # a model that learns its dimension by answering has the store's, when bound to it
    dimension = embedder.dimension or (binding[1] if binding and binding[0] == model else None)
    result = None
    if check:
        result, answered = _check_embedding(settings, embedder)
        dimension = dimension or answered
    stored = store.vector_versions()
    versions = [
        {"model": m, "dimension": d, "memories": n, "current": (m, d) == (model, dimension)}
        for (m, d), n in sorted(stored.items(), key=lambda item: (-item[1], item[0]))
    ]
    current = stored.get((model, dimension or 0), 0)
    return {
        "provider": settings.embedding_provider,
        "model": model,
        "dimension": dimension,
        "remote": embedder.remote,
        "base_url": public_url(settings.embedding_base_url) if embedder.remote else None,
        "bound": None if binding is None else {"model": binding[0], "dimension": binding[1]},
        "versions": versions,
        "to_embed": store.stats().memories - current,
        "switch_pending": (binding is not None and binding[0] != model)
        or any(not v["current"] for v in versions),
        "check": result,
    }


def _check_embedding(settings: Settings, embedder: Embeddings) -> tuple[dict[str, Any], int | None]:
    """The check, and the dimension the model answered. A remote model is asked through
    a copy made from the settings, with one try and a short timeout."""
    answered: list[int] = []
    made: list[Embeddings] = []

    def call() -> None:
        probe = embedder
        if embedder.remote:
            probe = embed.from_settings(_quick(settings))
            made.append(probe)
        answered.append(len(probe.encode_query(_PROBE)))
        if embedder.dimension and answered[0] != embedder.dimension:
            raise EmbeddingError(
                f"the model answered {answered[0]}-d vectors; {embedder.model_id} is "
                f"{embedder.dimension}-d: the server's model changed?"
            )

    try:
        return _timed(call), answered[0] if answered else None
    finally:
        for probe in made:
            probe.close()


def _reranker(settings: Settings, reranker: Reranker | None, check: bool) -> dict[str, Any]:
    uses_llm = reranker is not None and reranker.name == "llm"
    options = settings.provider_options.get(f"reranker.{settings.reranker}", {})
    model = (settings.llm_models.get("rerank") or settings.llm_model) if uses_llm else None
    directory = settings.rerank_model_dir
    return {
        "name": settings.reranker,
        "model": model or options.get("model") or settings.rerank_model,
        "base_url": public_url(options.get("base_url") or settings.rerank_base_url),
        "model_dir": None if directory is None else str(directory),
        # the LLM reranker's endpoint is the LLM's, checked there
        "check": None
        if reranker is None or uses_llm or not check
        else _timed(lambda: reranker.rank(_PROBE, [_PROBE], owner="system:hindsight-doctor")),
    }


def _llm(settings: Settings, check: bool) -> dict[str, Any]:
    from hindsight.llm import CompletionRequest, Message, registry
    from hindsight.llm.http import HTTPProvider

    if settings.llm_provider not in registry.names():
        raise ValidationError(
            f"HINDSIGHT_LLM_PROVIDER={settings.llm_provider!r} is no LLM provider; known: "
            f"{', '.join(registry.names())}"
        )
    if not settings.llm_configured:
        return {"provider": "none", "model": None, "models": {}, "base_url": None, "check": None}
    provider = registry.create(settings.llm_provider, _quick(settings))
    try:
        base = provider.transport.base_url if isinstance(provider, HTTPProvider) else None
        ask = CompletionRequest((Message("user", "Answer OK."),), max_tokens=1)
        result = _timed(lambda: provider.complete(ask)) if check else None
    finally:
        provider.close()
    return {
        "provider": settings.llm_provider,
        "model": provider.model,
        "models": dict(settings.llm_models),
        "base_url": public_url(base or settings.llm_base_url),
        "check": result,
    }


def _store(settings: Settings, store: Store, check: bool) -> dict[str, Any]:
    described = store.describe()
    qdrant = settings.qdrant_url if described["vectors"] == "qdrant" else None
    return {
        **described,
        "qdrant_url": public_url(qdrant),
        "check": _timed(lambda: _qdrant_answers(settings)) if check and qdrant else None,
    }


def _qdrant_answers(settings: Settings) -> None:
    import httpx  # the qdrant extra's client depends on it

    key = settings.qdrant_api_key
    response = httpx.get(
        f"{str(settings.qdrant_url).rstrip('/')}/collections",
        headers={"api-key": key} if key else {},
        timeout=min(CHECK_SECONDS, settings.qdrant_timeout_seconds),
    )
    if response.status_code >= 400:
        raise VectorsUnavailableError(
            f"Qdrant answered {response.status_code}: {response.text[:200]}"
        )


# -- helpers ----------------------------------------------------------------------------------
def _quick(settings: Settings) -> Settings:
    """``settings`` with one try and a short timeout for the embedding model and the LLM."""
    return settings.model_copy(
        update={
            "embedding_timeout_seconds": min(CHECK_SECONDS, settings.embedding_timeout_seconds),
            "embedding_max_retries": 0,
            "embedding_down_seconds": 0.0,
            "llm_timeout_seconds": min(CHECK_SECONDS, settings.llm_timeout_seconds),
            "llm_max_retries": 0,
        }
    )


def _timed(call: Callable[[], object]) -> dict[str, Any]:
    started = time.perf_counter()
    error = None
    try:
        call()
    except Exception as exc:  # whatever a provider (or a plugin) raised is the answer
        text = str(exc).strip()
        error = text.splitlines()[0] if text else type(exc).__name__
    ms = round((time.perf_counter() - started) * 1000, 1)
    return {"ok": error is None, "ms": ms, "error": error}


def _secrets(settings: Settings) -> list[str]:
    """Every configured secret: keys, tokens, passwords in provider options."""
    values = [
        s.get_secret_value()
        for s in (settings.embedding_api_key, settings.rerank_api_key, settings.llm_api_key)
        if s is not None
    ]
    values += [settings.qdrant_api_key or "", settings.review_webhook_secret or ""]
    values += [os.environ.get(name, "") for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")]
    for options in settings.provider_options.values():
        values += [str(v) for k, v in options.items() if _SECRET_OPTION.search(k)]
    # longest first, so that no part of a longer secret is left behind
    return sorted({v for v in values if len(v) >= 4}, key=len, reverse=True)


def _cleared(value: Any, secrets: list[str]) -> Any:
    """``value`` with every secret and every URL's user and password taken out of its text."""
    if isinstance(value, dict):
        return {k: _cleared(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_cleared(v, secrets) for v in value]
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, "***")
        return _USERINFO.sub("", value)
    return value
