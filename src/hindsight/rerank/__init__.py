"""Rerankers. ``registry.create(name, settings)`` builds one by name (None for ``none``).

Built in: ``none`` (the default), ``http`` (a rerank endpoint:
:mod:`hindsight.rerank.http`), ``llm`` (the configured LLM: :mod:`hindsight.rerank.llm`)
and ``onnx`` (a cross-encoder in a folder: :mod:`hindsight.rerank.onnx`). A plugin
registers more under ``reranker.<name>`` (see :mod:`hindsight.registry`); options
(``HINDSIGHT_PROVIDER_OPTIONS='{"reranker.http": {...}}'``) may give ``base_url`` and
``model`` over the settings'. A setting a provider needs and lacks is a
:class:`~hindsight.errors.ValidationError` naming it, when the engine is made. How a
ranking moves a recall's order: :mod:`hindsight.rerank.step`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from hindsight.errors import ValidationError
from hindsight.registry import Options, no_options
from hindsight.rerank.base import Ranking, Reranker, registry
from hindsight.rerank.step import RerankStep, blend

if TYPE_CHECKING:
    from hindsight.config import Settings

DEFAULT_PROVIDER: Final = "none"
_OPTIONS: Final = frozenset({"base_url", "model"})


def _none(settings: Settings, options: Options) -> Reranker | None:
    no_options("reranker", DEFAULT_PROVIDER, options)
    return None


def _http(settings: Settings, options: Options) -> Reranker | None:
    from hindsight.rerank.http import HTTPReranker

    if unknown := sorted(set(options) - _OPTIONS):
        raise ValidationError(f"reranker 'http' takes base_url and model, not {unknown}")
    base_url = str(options.get("base_url") or settings.rerank_base_url or "")
    if not base_url:
        raise ValidationError(
            "HINDSIGHT_RERANKER=http needs HINDSIGHT_RERANK_BASE_URL: the server's base URL, "
            "to which /rerank is added (e.g. http://127.0.0.1:8080)"
        )
    key = settings.rerank_api_key
    return HTTPReranker(
        base_url,
        model=str(options.get("model") or settings.rerank_model or "") or None,
        api_key=None if key is None else key.get_secret_value(),
        timeout=settings.rerank_timeout,
    )


def _llm(settings: Settings, options: Options) -> Reranker | None:
    from hindsight.rerank.llm import LLMReranker

    no_options("reranker", "llm", options)
    if not settings.llm_configured:
        raise ValidationError(
            "HINDSIGHT_RERANKER=llm needs an LLM: set HINDSIGHT_LLM_PROVIDER "
            "(and HINDSIGHT_LLM_MODEL, or HINDSIGHT_LLM_MODELS for the rerank operation)"
        )
    return LLMReranker()


def _onnx(settings: Settings, options: Options) -> Reranker | None:
    from hindsight.rerank.onnx import ONNXReranker

    no_options("reranker", "onnx", options)
    directory = settings.rerank_model_dir
    if directory is None:
        raise ValidationError(
            "HINDSIGHT_RERANKER=onnx needs HINDSIGHT_RERANK_MODEL_DIR: a folder with a "
            "cross-encoder's model.onnx and tokenizer.json"
        )
    if not directory.is_dir():
        raise ValidationError(f"HINDSIGHT_RERANK_MODEL_DIR={directory}: not a folder")
    return ONNXReranker(directory)


registry.register(DEFAULT_PROVIDER, _none)
registry.register("http", _http)
registry.register("llm", _llm)
registry.register("onnx", _onnx)

__all__ = ["DEFAULT_PROVIDER", "Ranking", "RerankStep", "Reranker", "blend", "registry"]
