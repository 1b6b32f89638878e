"""Settings: one typed object, read once, prefix ``HINDSIGHT_``."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from hindsight.validate import time_zone

#: The package's version (``hindsight.__version__``).
VERSION: Final = "0.1.0"


def default_home() -> Path:
    """The platform's per-user data directory for hindsight."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local"))
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share"))
    return base / "hindsight"


class Settings(BaseSettings):
    """Every knob of the embedded engine; environment variables override defaults."""

    model_config = SettingsConfigDict(env_prefix="HINDSIGHT_", extra="ignore")

    home: Path = Field(default_factory=default_home)
    # PostgreSQL with pgvector instead of the embedded SQLite file, as a libpq URL
    # (postgresql://user:password@host:5432/db); caches stay under ``home``
    database_url: str | None = Field(default=None, repr=False)  # may hold a password
    # working memory in Redis (redis://host:6379/0), shared by every server, instead of
    # in the database
    redis_url: str | None = Field(default=None, repr=False)  # may hold a password
    # a PostgreSQL statement that runs longer is cancelled (a stuck database or lock wait
    # fails the call instead of holding it and every call behind it)
    statement_timeout_seconds: float = Field(default=30.0, gt=0)
    # PostgreSQL connections each server keeps (made as needed): its requests read side by
    # side on them. Size the database's max_connections for servers x this (and spares)
    database_pool_size: int = Field(default=8, ge=2)
    # hot standbys of that database (one URL, or several separated by spaces) that take
    # recall's reads; writes and every other read stay on the primary, and a request
    # reads its own writes (see hindsight.store.replicas)
    database_read_url: Annotated[list[str], NoDecode] = Field(default_factory=list, repr=False)
    # a standby whose replay lags further behind than this is passed over (the primary
    # answers) until it has caught up
    database_read_max_lag_seconds: float = Field(default=10.0, gt=0)
    # the embedding model (hindsight.embed): "minilm" (bundled, offline), "openai" (any
    # server of OpenAI's /embeddings protocol: OpenAI, Ollama, vLLM, LM Studio, TEI) or
    # "onnx" (a sentence-transformers ONNX export in embedding_model_dir); a plugin may
    # add more. Vectors record their model: changing it needs `hindsight reembed`
    embedding_provider: str = "minilm"
    embedding_base_url: str | None = None  # e.g. http://127.0.0.1:11434/v1
    embedding_model: str | None = None
    # sent as "Authorization: Bearer"; never stored, logged or shown in a repr
    embedding_api_key: SecretStr | None = Field(default=None, repr=False)
    # asked of the model (OpenAI's text-embedding-3 shorten their vectors); else its own
    embedding_dimensions: int | None = Field(default=None, gt=0)
    embedding_model_dir: Path | None = None
    embedding_timeout_seconds: float = Field(default=30.0, gt=0)
    # retries of a call after a connection error, a timeout, 429 or 5xx, backing off;
    # then the endpoint is down: writes queue their vectors, recall drops the dense channel
    embedding_max_retries: int = Field(default=3, ge=0, le=10)
    embedding_retry_base_seconds: float = Field(default=0.5, ge=0)
    # once down, calls fail at once for this long instead of each waiting out its retries
    embedding_down_seconds: float = Field(default=10.0, ge=0)
    # texts sent in one request
    embedding_batch_size: int = Field(default=64, gt=0, le=2_048)
    extractor: str = "heuristic"
    # write checkpoints in force, by registered name, in the order they review a write
    checkpoints: list[str] = Field(default_factory=list)
    # each provider's own options, by "<kind>.<name>" (see hindsight.registry), e.g.
    # HINDSIGHT_PROVIDER_OPTIONS='{"extractor.my-llm": {"model": "m"}}'; may hold keys
    provider_options: dict[str, dict[str, Any]] = Field(default_factory=dict, repr=False)

    # the guard (hindsight.guard): on by default; off keeps provenance and trust only
    guard: bool = True
    # how far each source is believed, 0..1: a memory's trust is the least of its
    # source's, its writer's key's and its sources' (a derived memory); its confidence
    # never exceeds it. Given ones replace these defaults source by source.
    trust: dict[str, float] = Field(default_factory=dict)
    # at or above this trust a source speaks for the user: its words are not scanned
    # for attacks and it may correct what it said before
    trusted_at: float = Field(default=0.9, ge=0.0, le=1.0)
    # an untrusted memory that reads as an attack: "quarantine" holds it for review (not
    # recalled), "flag" keeps it active with its flags (recall still withholds it)
    on_unsafe: Literal["quarantine", "flag"] = "quarantine"
    # secrets (API keys, card numbers, passwords) in any memory: "redact" replaces them
    # before anything is indexed, "refuse" refuses the write
    on_secret: Literal["redact", "refuse"] = "redact"
    # untrusted memories this close (cosine) to a trusted one are checked against it
    conflict_similarity: float = Field(default=0.3, ge=-1.0, le=1.0)
    # ... and a sentence of one this close to a sentence of the trusted one speaks of its
    # slot: giving it a value of its own without restating the trusted one's is a dispute
    slot_similarity: float = Field(default=0.35, ge=-1.0, le=1.0)
    # ... and this close to a held claim, repeat it (held too: repetition is not evidence)
    repeat_similarity: float = Field(default=0.6, ge=-1.0, le=1.0)
    # ... or this close, from the writer and source that made it (one voice rewording)
    same_voice_similarity: float = Field(default=0.45, ge=-1.0, le=1.0)

    # a webhook told of each write the guard holds or refuses (hindsight.guard.notify);
    # with a secret, each body is signed (HMAC-SHA256)
    review_webhook_url: str | None = None
    review_webhook_secret: str | None = Field(default=None, repr=False)
    # offer the review queue and the audit log as MCP tools too (memory_review_list,
    # memory_review_decide, memory_audit): off by default, since an agent that could
    # approve what the guard held from its own writes would defeat it; on for an MCP
    # client a person drives
    mcp_review: bool = False
    # a held memory a reviewer rejects: "keep" it as rejected history, or "forget" it
    on_reject: Literal["keep", "forget"] = "keep"
    # the audit log: every write, forget and review decision, in its transaction; and
    # every recall (who recalled which ids), unless audit_recalls is off
    audit: bool = True
    audit_recalls: bool = True
    audit_retention_days: int = Field(default=365, gt=0)

    # input limits
    max_content_chars: int = Field(default=32_000, gt=0)
    max_metadata_bytes: int = Field(default=16_384, gt=0)
    # turns one retain may carry: each is extracted and embedded (~1 ms of CPU), so a
    # request is bounded in work as well as in bytes
    max_turns_per_write: int = Field(default=1_000, gt=0)

    # write path
    dedupe_similarity: float = Field(default=0.92, ge=0.0, le=1.0)
    wm_max_turns: int = Field(default=10, gt=0)
    wm_max_tokens: int = Field(default=4_000, gt=0)
    wm_ttl_seconds: int = Field(default=86_400, gt=0)
    wm_purge_interval_seconds: float = Field(default=600.0, gt=0)  # servers delete expired turns
    # how long a write's request_id (idempotency key) is remembered; a retry within it
    # stores nothing twice
    request_ttl_seconds: int = Field(default=86_400, gt=0)

    # feedback (hindsight.lifecycle.feedback): each mark moves confidence this fraction of the way
    # toward its cap (useful) or toward 0 (not useful)
    feedback_step: float = Field(default=0.2, gt=0.0, le=1.0)

    # read path
    # keyword index: neighbouring turns indexed with a turn (see store.TextIndexing)
    context_turns: int = Field(default=2, ge=0, le=10)
    context_chars: int = Field(default=300, ge=0)
    context_weight: float = Field(default=0.5, ge=0.0, le=1.0)
    fusion: Literal["rrf", "minmax"] = "minmax"  # see BENCHMARKS.md
    rrf_k: int = Field(default=60, gt=0)
    candidates: int = Field(default=100, gt=0)
    # recall's entity channel: memories linked to the people, places and things the
    # query names, and one hop further (hindsight.entities); see BENCHMARKS.md
    entity_channel: bool = False
    recency_half_life_days: float = Field(default=30.0, gt=0)
    # the users' time zone: whose days "yesterday" and "8 May" are in what is retained,
    # and in a query when a recall names no time zone of its own
    timezone: str = "UTC"
    hnsw_threshold: int = Field(default=20_000, gt=0)
    # recall results kept this long (0: not cached): in Redis with redis_url (shared by
    # every server), else in this process, at most recall_cache_entries of them (and
    # recall_cache_megabytes). Keyed on
    # each owner's change count in the database, so any write to an owner, by any
    # process, retires its entries (see hindsight.recall.cache)
    recall_cache_seconds: int = Field(default=300, ge=0)
    recall_cache_entries: int = Field(default=4_096, gt=0)
    recall_cache_megabytes: int = Field(default=64, gt=0)  # in process: of JSON text (~MB)
    # keyword-index documents a process keeps in memory, over all owners (~1 KB each);
    # past it, the owners searched longest ago are let go and rebuilt or loaded when next
    # searched
    keyword_cache_docs: int = Field(default=1_000_000, gt=0)
    # vectors the embedded store's index keeps in memory, over all owners (exact search:
    # 1.5 KB each at 384-d); past it, as above (PostgreSQL keeps vectors in the database)
    vector_cache_vectors: int = Field(default=1_000_000, gt=0)
    # change-log entries kept for indexes to catch up; one further behind rebuilds
    log_keep: int = Field(default=1_000_000, gt=0)

    # where vectors are kept and searched (hindsight.store.vectors): "auto" (the one the
    # database fits: "local" on SQLite, "pgvector" on PostgreSQL), "local", "pgvector",
    # "qdrant" (a Qdrant server at qdrant_url) or "qdrant-edge" (Qdrant's engine in this
    # process, its shards under qdrant_path); or a plugin's name (entry point
    # "vectors.<name>" in the group hindsight.plugins)
    vector_backend: str = "auto"
    qdrant_url: str | None = None  # http://qdrant:6333
    qdrant_api_key: str | None = Field(default=None, repr=False)
    qdrant_timeout_seconds: float = Field(default=10.0, gt=0)
    qdrant_path: Path | None = None  # qdrant-edge's shards; by default home / "qdrant"
    qdrant_collection: str = Field(default="hindsight", pattern=r"^[A-Za-z0-9_-]+$")
    # HNSW of a Qdrant collection: edges a node (m), candidates while building
    # (ef_construct); and candidates an HNSW search keeps, in Qdrant and pgvector
    # (hnsw_ef; at least twice k in pgvector)
    qdrant_hnsw_m: int = Field(default=16, ge=4)
    qdrant_hnsw_ef_construct: int = Field(default=100, ge=4)
    hnsw_ef: int = Field(default=200, ge=1)
    # qdrant-edge builds HNSW only when asked (it blocks the process): once this many
    # vectors of a shard are not in its index, the next catch-up builds it (0: never by
    # itself; 'hindsight vectors optimize' always can)
    qdrant_optimize_after: int = Field(default=20_000, ge=0)

    # the lifecycle (hindsight.lifecycle): an unused memory's confidence is multiplied by
    # decay_per_week for each week since it was last used (1.0: no decay); with
    # decay_counts_recall a recall counts as use too (off: a stale value a question keeps
    # returning then never fades; BENCHMARKS.md, a simulated year). Decay ranks, never deletes.
    decay_per_week: float = Field(default=0.98, gt=0.0, le=1.0)
    decay_counts_recall: bool = False
    # the maintenance pass archives an active, unpinned memory whose decayed confidence is
    # under archive_below and that went unused for archive_after_days; verbatim turns too
    # with archive_episodes, once every memory derived from them is archived
    archive_below: float = Field(default=0.3, ge=0.0, le=1.0)
    archive_after_days: float = Field(default=90.0, gt=0)
    archive_episodes: bool = False
    # days an owner's memories are kept, by owner glob (the most specific match wins; null:
    # kept until forgotten), e.g. HINDSIGHT_RETENTION='{"session:*": 30, "user:*": null}'
    retention: dict[str, int | None] = Field(default_factory=dict)
    # servers run the maintenance pass this often (one server at a time on a shared database)
    # a server loads the indexes of this many owners (those that changed last) as it
    # starts, in the background, for at most warm_seconds: their first recalls then cost
    # what later ones do (0: none)
    warm_owners: int = Field(default=100, ge=0)
    warm_seconds: float = Field(default=300.0, gt=0)
    maintain_interval_seconds: float = Field(default=3_600.0, gt=0)

    # servers (REST and MCP): see hindsight.access for the key file's format
    api_keys_file: Path | None = None
    # Host names (host, host:port, host:* for any port) the server answers; by default
    # the loopback names when no key file is set (against DNS rebinding), any with keys
    allowed_hosts: list[str] | None = None
    request_timeout_seconds: float = Field(default=30.0, gt=0)
    max_request_bytes: int = Field(default=4_000_000, gt=0)

    # the LLM layer (hindsight.llm): "none" (the default) keeps every path offline;
    # "openai" (chat completions: OpenAI, vLLM, Ollama's /v1, LM Studio, llama.cpp server)
    # and "anthropic" (Messages API) are built in, a plugin may add more
    llm_provider: str = "none"
    llm_base_url: str | None = None  # e.g. http://127.0.0.1:11434/v1; the vendor's by default
    llm_model: str | None = None
    # else OPENAI_API_KEY / ANTHROPIC_API_KEY, read when the provider is made; never
    # stored, logged or shown in a repr
    llm_api_key: SecretStr | None = Field(default=None, repr=False)
    # a model per operation (extract, summarize, reflect, query, assess, rerank), over llm_model
    llm_models: dict[str, str] = Field(default_factory=dict)
    llm_timeout_seconds: float = Field(default=60.0, gt=0)
    # retries of a call after a connection error, a timeout, 429 or 5xx (not other 4xx),
    # with exponential backoff and jitter from this base, or as Retry-After says (capped)
    llm_max_retries: int = Field(default=3, ge=0, le=10)
    llm_retry_base_seconds: float = Field(default=0.5, ge=0)
    llm_retry_max_wait_seconds: float = Field(default=30.0, ge=0)
    llm_concurrency: int = Field(default=4, gt=0)  # calls in flight per provider
    llm_max_tokens: int = Field(default=1_024, gt=0)
    # USD per million tokens by model, for cost: {"m": {"prompt": 0.15, "completion": 0.6}}
    llm_prices: dict[str, dict[str, float]] = Field(default_factory=dict)
    # tokens (prompt + completion) each owner may use per UTC day; past it LLM work waits
    llm_daily_token_budget: int | None = Field(default=None, gt=0)
    # LLM extraction (hindsight.jobs): with a provider set, each retain queues a job per
    # this many turns; what the model is less sure of than llm_min_confidence is not kept
    llm_extract: bool = True
    llm_extract_turns: int = Field(default=12, gt=0, le=100)
    llm_min_confidence: float = Field(default=0.6, ge=0, le=1)
    # with a provider set, summarize and reflect queue the model's summary and lessons
    # too; a lesson the model rates no more important than this is not kept
    llm_reflect_importance: float = Field(default=0.7, ge=0, le=1)
    # the LLM check (hindsight.guard.assess): with a provider set, a write that holds a
    # memory or writes one below trusted_at queues a job that judges it against the
    # owner's trusted memories; the model may hold what contradicts them, never release
    llm_assess: bool = True
    # a job is tried this many times (transport failures, backing off) before it fails
    llm_job_attempts: int = Field(default=5, gt=0, le=50)
    llm_job_lease_seconds: float = Field(default=300.0, gt=0)
    # a worker thread runs the queue in every engine with a provider set (a server's
    # too); off, jobs wait for `hindsight jobs wait` or Hindsight.run_jobs()
    llm_worker: bool = True
    # query understanding: recall(expand=...) by default; a recall waits for the model
    # at most this long, then searches the question alone
    llm_expand: bool = False
    llm_expand_timeout_seconds: float = Field(default=10.0, gt=0)

    # rerank (hindsight.rerank): "none" (the default), "http" (POST {base}/rerank, as
    # Cohere, Jina, Text Embeddings Inference and vLLM serve), "llm" (the configured LLM
    # scores the candidates) or "onnx" (a cross-encoder export in rerank_model_dir); a
    # plugin may add more. The best rerank_candidates results (never fewer than the k asked
    # for) are reranked; each one's score becomes rerank_weight of the reranker's (scaled
    # to 0..1 over them) and the rest the engine's own (scaled by the best); 1 replaces it.
    # A reranker that fails or takes over rerank_timeout seconds is not waited for: the
    # recall keeps the engine's order and its explanation says why
    reranker: str = "none"
    rerank_base_url: str | None = None  # e.g. http://127.0.0.1:8080 (TEI), .../v1 (vLLM)
    rerank_model: str | None = None  # sent as "model" (TEI serves one and needs none)
    rerank_api_key: SecretStr | None = Field(default=None, repr=False)  # sent as Bearer
    rerank_model_dir: Path | None = None  # "onnx": model.onnx (or onnx/model.onnx), tokenizer.json
    rerank_candidates: int = Field(default=20, gt=0, le=200)
    rerank_weight: float = Field(default=0.7, ge=0.0, le=1.0)
    rerank_timeout: float = Field(default=2.0, gt=0)  # seconds

    # tests relax durability where durability is not what they test
    sqlite_synchronous: str = Field(default="NORMAL", pattern="^(OFF|NORMAL|FULL)$")

    @field_validator("database_url")
    @classmethod
    def _postgres_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("postgresql://", "postgres://")):
            raise ValueError("must be a PostgreSQL URL: postgresql://user:password@host/db")
        return value

    @field_validator("database_read_url", mode="before")
    @classmethod
    def _read_urls(cls, value: Any) -> Any:
        urls = value.split() if isinstance(value, str) else value
        for url in urls if isinstance(urls, list) else ():
            if not str(url).startswith(("postgresql://", "postgres://")):
                raise ValueError(f"must be PostgreSQL URLs separated by spaces, not {url!r}")
        return urls

    @field_validator("review_webhook_url")
    @classmethod
    def _webhook_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return value

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("must be a Redis URL: redis://host:6379/0")
        return value

    @field_validator("qdrant_url")
    @classmethod
    def _qdrant_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL: http://qdrant:6333")
        return value

    @field_validator("llm_base_url", "embedding_base_url", "rerank_base_url")
    @classmethod
    def _llm_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return value

    @field_validator("llm_models")
    @classmethod
    def _llm_models(cls, value: dict[str, str]) -> dict[str, str]:
        known = {"extract", "summarize", "reflect", "query", "assess", "rerank"}
        if unknown := sorted(set(value) - known):
            raise ValueError(f"unknown operations {unknown}: one of {', '.join(sorted(known))}")
        return value

    @field_validator("llm_prices")
    @classmethod
    def _llm_prices(cls, value: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
        for model, price in value.items():
            if set(price) != {"prompt", "completion"} or min(price.values()) < 0:
                raise ValueError(
                    f"price of {model!r} must be {{'prompt': x, 'completion': y}}, USD per "
                    "million tokens, not negative"
                )
        return value

    @field_validator("trust")
    @classmethod
    def _trust(cls, value: dict[str, float]) -> dict[str, float]:
        from hindsight.models import Source

        known = {s.value for s in Source}
        for name, level in value.items():
            if name not in known:
                raise ValueError(f"unknown source {name!r}: one of {', '.join(sorted(known))}")
            if not 0 <= level <= 1:
                raise ValueError(f"trust of {name!r} must lie between 0 and 1")
        return value

    @field_validator("retention")
    @classmethod
    def _retention(cls, value: dict[str, int | None]) -> dict[str, int | None]:
        for pattern, days in value.items():
            if not pattern.strip():
                raise ValueError("an owner pattern must not be empty")
            if days is not None and (isinstance(days, bool) or days <= 0):
                raise ValueError(f"days of {pattern!r} must be a positive number or null")
        return value

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        time_zone(value)  # its ValidationError is a ValueError: pydantic reports it
        return value

    @model_validator(mode="after")
    def _rerank_in_time(self) -> Settings:
        if self.reranker != "none" and self.rerank_timeout >= self.request_timeout_seconds:
            raise ValueError(
                f"rerank_timeout ({self.rerank_timeout:g} s) must be shorter than "
                f"request_timeout_seconds ({self.request_timeout_seconds:g} s): a recall "
                "falls back to its own order within the request's time"
            )
        return self

    @property
    def llm_configured(self) -> bool:
        """Whether an LLM is configured at all (the provider is not ``none``)."""
        return self.llm_provider != "none"

    @property
    def database_path(self) -> Path:
        return self.home / "hindsight.db"

    @property
    def index_dir(self) -> Path:
        return self.home / "index"

    @property
    def qdrant_dir(self) -> Path:
        """Where qdrant-edge keeps its shards, one folder a collection."""
        return self.qdrant_path or self.home / "qdrant"
