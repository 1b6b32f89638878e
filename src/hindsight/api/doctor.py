"""``GET /v1/doctor``: the configuration, the store's embedding versions, the endpoints.

The report of :mod:`hindsight.doctor`, for a key that reads every owner (as the stats
of the whole store are): it names models and hosts, never a key or password.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from hindsight.api.deps import Context, Routes
from hindsight.api.schemas import QueryBool

routes = Routes("/v1", "doctor")


class CheckOut(BaseModel):
    ok: bool
    ms: float = Field(description="How long the call took, in milliseconds.")
    error: str | None = Field(description="The error's first line, when it failed.")


_CHECK = "One cheap call to the endpoint; null when none was made."


class BindingOut(BaseModel):
    model: str
    dimension: int


class EmbeddingVersionOut(BaseModel):
    model: str
    dimension: int
    memories: int = Field(description="Memories holding a vector of this version.")
    current: bool = Field(description="Whether it is the configured model's.")


class EmbeddingOut(BaseModel):
    provider: str
    model: str = Field(description="The model id stored beside each vector.")
    dimension: int | None = Field(description="Null until the model has answered once.")
    remote: bool
    base_url: str | None
    bound: BindingOut | None = Field(description="The model the store is bound to.")
    versions: list[EmbeddingVersionOut]
    to_embed: int = Field(
        description="Memories without a vector of the current version: queued during an "
        "outage of the endpoint, or waiting for 'hindsight reembed'."
    )
    switch_pending: bool = Field(description="Vectors of another model remain: reembed.")
    check: CheckOut | None = Field(description=_CHECK)


class RerankerOut(BaseModel):
    name: str
    model: str | None
    base_url: str | None
    model_dir: str | None
    check: CheckOut | None = Field(description=_CHECK + " The llm reranker is the LLM's.")


class LLMOut(BaseModel):
    provider: str
    model: str | None
    models: dict[str, str] = Field(description="A model per operation, over model.")
    base_url: str | None
    check: CheckOut | None = Field(description=_CHECK)


class ReplicaOut(BaseModel):
    replica: str
    usable: bool
    lag_seconds: float
    behind_floor: bool
    error: str | None = None


class StoreOut(BaseModel):
    database: str = Field(description="sqlite or postgresql.")
    path: str | None = Field(default=None, description="SQLite's file.")
    host: str | None = Field(default=None, description="PostgreSQL's host:port/database.")
    replicas: list[ReplicaOut] = Field(default_factory=list)
    vectors: str = Field(description="The vector backend in use.")
    qdrant_url: str | None
    check: CheckOut | None = Field(description=_CHECK + " Only a Qdrant server has one.")


class DoctorOut(BaseModel):
    ok: bool = Field(description="Every check that ran passed.")
    embedding: EmbeddingOut
    reranker: RerankerOut
    llm: LLMOut
    store: StoreOut


@routes("GET", "/doctor")
async def doctor(ctx: Context, check_endpoints: QueryBool = True) -> DoctorOut:
    """The embedding model, reranker, LLM and store in use, how many memories hold
    vectors of each embedding version, and whether each endpoint answers (one cheap
    call each, a few seconds at most; ``check_endpoints=false`` makes none). Never a key.

    Needs a key that reads every owner (``"*"``).
    """
    found = await ctx.call(ctx.hs.doctor, check_endpoints=check_endpoints)
    return DoctorOut.model_validate(found)
