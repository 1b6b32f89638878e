"""Models a user brings: embeddings over HTTP (OpenAI's protocol, a real loopback
server) and from a local sentence-transformers ONNX folder; outages, slow and malformed
answers, and the store's binding to the model."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from embed_servers import MODEL, EmbeddingServer, embedding_server, over_http
from llm_servers import Reply
from pydantic import SecretStr

from hindsight import EmbeddingError, EmbeddingMismatchError, Hindsight, Settings, ValidationError
from hindsight.embed import Embeddings, from_settings
from hindsight.embed.openai import OpenAIEmbeddings
from hindsight.errors import EmbeddingUnavailableError
from hindsight.jobs import reembed

TEXTS = ["The cat sleeps on the sofa.", "Stock prices fell.", "I love jazz.", "Paris", "tea"]


@pytest.fixture
def http(embedder: Embeddings) -> Iterator[EmbeddingServer]:
    with embedding_server(embedder, key="sk-test") as server:
        yield server


_MADE: list[OpenAIEmbeddings] = []


@pytest.fixture(autouse=True)
def _closed() -> Iterator[None]:
    yield
    while _MADE:
        _MADE.pop().close()


def _provider(server: EmbeddingServer, **more: object) -> OpenAIEmbeddings:
    options: dict[str, object] = {"retry_base": 0.0, "max_retries": 1, "cooldown": 0.0}
    options.update(more)
    options.setdefault("api_key", "sk-test")
    _MADE.append(OpenAIEmbeddings(base_url=server.url, model=MODEL, **options))  # type: ignore[arg-type]
    return _MADE[-1]


# -- the protocol -------------------------------------------------------------------------------
def test_http_vectors_are_the_models_placed_by_index(
    http: EmbeddingServer, embedder: Embeddings
) -> None:
    provider = _provider(http, batch_size=2)
    vectors = provider.encode_documents(TEXTS)
    assert np.allclose(vectors, embedder.encode_documents(TEXTS), atol=1e-6)
    assert provider.dimension == 384 and provider.model_id == f"openai:{MODEL}"
    assert [s.body["input"] for s in http.seen] == [TEXTS[0:2], TEXTS[2:4], TEXTS[4:]]
    assert {s.path for s in http.seen} == {"/v1/embeddings"}
    assert {s.headers["authorization"] for s in http.seen} == {"Bearer sk-test"}
    assert all("dimensions" not in s.body and s.body["model"] == MODEL for s in http.seen)
    assert np.allclose(provider.encode_query("tea"), vectors[4], atol=1e-6)
    assert "sk-test" not in repr(provider)


def test_dimensions_are_asked_for_and_named(http: EmbeddingServer) -> None:
    provider = _provider(http, dimensions=384)
    provider.encode_documents(["x"])
    assert http.seen[-1].body["dimensions"] == 384
    assert provider.model_id == f"openai:{MODEL}@384"


def test_a_wrong_key_names_its_setting(http: EmbeddingServer) -> None:
    provider = _provider(http, api_key="wrong")
    with pytest.raises(EmbeddingError, match=r"HINDSIGHT_EMBEDDING_API_KEY.*401"):
        provider.encode_documents(["x"])


def _item(index: object, vector: object) -> dict[str, object]:
    return {"object": "embedding", "index": index, "embedding": vector}


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ([_item(0, [0.1, 0.2])], "1 embeddings for 2 texts"),
        ([_item(0, [0.1, 0.2]), _item(0, [0.3, 0.4])], "missing or repeated index"),
        ([_item(0, [0.1, 0.2]), {"embedding": [0.3, 0.4]}], "missing or repeated index"),
        ([_item(0, [0.1, 0.2]), _item(2, [0.3, 0.4])], "missing or repeated index"),
        ([_item(0, [0.1, "x"]), _item(1, [0.3, 0.4])], "not a list of finite numbers"),
        ([_item(0, "AAAA"), _item(1, [0.3, 0.4])], "not a list of finite numbers"),
        ([_item(0, [0.1, 0.2]), _item(1, [0.3])], "different lengths"),
        (None, "no embeddings for 2 texts"),
    ],
)
def test_a_malformed_answer_is_refused_never_a_wrong_vector(
    http: EmbeddingServer, data: object, says: str
) -> None:
    http.script(Reply({"object": "list", "data": data}))
    with pytest.raises(EmbeddingError, match=says) as caught:
        _provider(http).encode_documents(["a", "b"])
    assert not isinstance(caught.value, EmbeddingUnavailableError)  # not retried as an outage


def test_another_dimension_than_the_models_is_refused(http: EmbeddingServer) -> None:
    provider = _provider(http)
    provider.encode_documents(["a"])
    http.script(Reply({"data": [_item(0, [0.1, 0.2])]}))
    with pytest.raises(EmbeddingError, match=r"2-d vectors.*384-d"):
        provider.encode_documents(["b"])


def test_5xx_is_retried_then_answered(http: EmbeddingServer) -> None:
    http.script(Reply({"error": {"message": "loading"}}, 503))
    assert _provider(http).encode_documents(["a"]).shape == (1, 384)
    assert len(http.seen) == 2


def test_a_slow_or_stopped_endpoint_is_unavailable(http: EmbeddingServer) -> None:
    http.delay = 1.0
    with pytest.raises(EmbeddingUnavailableError, match=r"no answer within 0.2 s"):
        _provider(http, timeout=0.2).encode_documents(["a"])
    http.delay = 0.0
    http.stop()
    provider = _provider(http, cooldown=60.0)
    with pytest.raises(EmbeddingUnavailableError, match="cannot connect"):
        provider.encode_documents(["a"])
    http.start()
    with pytest.raises(EmbeddingUnavailableError, match="down moments ago"):  # no wait again
        provider.encode_documents(["a"])


# -- settings -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("update", "error", "says"),
    [
        ({"embedding_provider": "nope"}, ValidationError, "HINDSIGHT_EMBEDDING_PROVIDER='nope'"),
        ({"embedding_provider": "openai"}, EmbeddingError, "HINDSIGHT_EMBEDDING_BASE_URL"),
        (
            {"embedding_provider": "openai", "embedding_base_url": "http://127.0.0.1:9/v1"},
            EmbeddingError,
            "HINDSIGHT_EMBEDDING_MODEL",
        ),
        ({"embedding_provider": "onnx"}, EmbeddingError, "HINDSIGHT_EMBEDDING_MODEL_DIR"),
    ],
)
def test_a_bad_setting_names_itself(
    tmp_path: Path, update: dict[str, object], error: type[Exception], says: str
) -> None:
    with pytest.raises(error, match=says):
        from_settings(Settings(home=tmp_path).model_copy(update=update))


def test_a_folder_without_a_model_is_an_error_not_the_bundled_one(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, embedding_provider="onnx", embedding_model_dir=tmp_path)
    with pytest.raises(EmbeddingError, match=r"HINDSIGHT_EMBEDDING_MODEL_DIR=.*no model.onnx"):
        Hindsight(settings)


# -- the store's binding, outages -----------------------------------------------------------------
def test_a_bound_store_opens_without_calling_the_endpoint(
    settings: Settings, http: EmbeddingServer
) -> None:
    configured = over_http(settings, http, embedding_api_key=SecretStr("sk-test"))
    with Hindsight(configured) as hs:
        hs.retain("user:alice", "I love jazz.")
        assert hs.stats().embedding_model == f"openai:{MODEL}" and hs.stats().dimension == 384
    http.stop()
    with Hindsight(configured) as hs:  # the endpoint is down: the store knows the dimension
        (hit, *_) = hs.recall("user:alice", "jazz")
        assert "jazz" in hit.memory.content
        assert hit.explanation.unavailable == ["dense"]
        assert set(hit.explanation.channels) == {"bm25"}


def test_a_new_store_needs_the_endpoint_to_learn_the_dimension(
    settings: Settings, http: EmbeddingServer
) -> None:
    http.stop()
    with pytest.raises(EmbeddingUnavailableError, match="HINDSIGHT_EMBEDDING_DIMENSIONS"):
        Hindsight(over_http(settings, http, embedding_api_key=SecretStr("sk-test")))


@pytest.mark.backends
def test_a_retain_during_an_outage_is_kept_and_its_vectors_queued(
    settings: Settings, http: EmbeddingServer
) -> None:
    configured = over_http(settings, http, embedding_api_key=SecretStr("sk-test"))
    with Hindsight(configured) as hs:
        hs.retain("user:alice", "My sister lives in Lyon.")
        http.stop()
        done = hs.retain("user:alice", "I play the cello every Sunday.")
        assert done.episodes  # kept
        (hit, *_) = hs.recall("user:alice", "cello")  # by its words, at once
        assert "cello" in hit.memory.content and hit.explanation.unavailable == ["dense"]
        queue = hs.jobs()
        assert [j.operation for j in queue.jobs] == ["embed"] and queue.counts["pending"] == 1
        assert hs.run_jobs() == 1  # still down: it waits, its tries not counted
        assert hs.jobs().jobs[0].state == "pending" and hs.jobs().jobs[0].attempts == 0
    http.start()
    later = datetime.now(UTC) + timedelta(seconds=31)  # when the job is due again
    with Hindsight(configured, clock=lambda: later) as hs:  # no LLM configured
        assert hs.wait_jobs(timeout=30)["done"] == 1
        (hit, *_) = hs.recall("user:alice", "which instrument does she play?")
        assert "cello" in hit.memory.content
        assert "dense" in hit.explanation.channels and not hit.explanation.unavailable


def test_changing_the_model_is_refused_then_reembedded(
    settings: Settings, http: EmbeddingServer, embedder: Embeddings
) -> None:
    with Hindsight(settings, embedder=embedder) as hs:
        hs.retain("user:alice", "I love jazz.")
        total = hs.stats().memories
    configured = over_http(settings, http, embedding_api_key=SecretStr("sk-test"))
    with pytest.raises(EmbeddingMismatchError, match=f"openai:{MODEL}.*hindsight reembed"):
        Hindsight(configured)
    assert reembed(configured) == total
    with Hindsight(configured) as hs:
        (hit, *_) = hs.recall("user:alice", "what music does she enjoy?")
        assert "jazz" in hit.memory.content and "dense" in hit.explanation.channels
    renamed = configured.model_copy(update={"embedding_model": "other"})
    with pytest.raises(EmbeddingMismatchError, match="openai:other"):
        Hindsight(renamed)  # another model name is another model


# -- a local folder --------------------------------------------------------------------------------
def minilm_folder(into: Path, *, pooling: str = "pooling_mode_mean_tokens") -> Path:
    """The bundled model laid out as sentence-transformers exports one."""
    data = resources.files("hindsight.embed") / "data"
    folder = into / "my-minilm"
    (folder / "onnx").mkdir(parents=True)
    (folder / "1_Pooling").mkdir()
    (folder / "2_Normalize").mkdir()
    with resources.as_file(data / "minilm-l6-q8.onnx") as path:
        shutil.copy(path, folder / "onnx" / "model.onnx")
    vocab = (data / "minilm-vocab.txt").read_text(encoding="utf-8").splitlines()
    tokenizer = {
        "version": "1.0",
        "truncation": {"max_length": 512},
        "normalizer": {"type": "BertNormalizer", "lowercase": True},
        "model": {
            "type": "WordPiece",
            "unk_token": "[UNK]",
            "vocab": {p: i for i, p in enumerate(vocab)},
        },
    }
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer), encoding="utf-8")
    (folder / "sentence_bert_config.json").write_text('{"max_seq_length": 256}')
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {
            "idx": 1,
            "name": "1",
            "path": "1_Pooling",
            "type": "sentence_transformers.models.Pooling",
        },
        {
            "idx": 2,
            "name": "2",
            "path": "2_Normalize",
            "type": "sentence_transformers.models.Normalize",
        },
    ]
    (folder / "modules.json").write_text(json.dumps(modules))
    (folder / "1_Pooling" / "config.json").write_text(
        json.dumps({"word_embedding_dimension": 384, pooling: True})
    )
    return folder


def test_an_onnx_folder_gives_the_bundled_models_vectors(
    tmp_path: Path, embedder: Embeddings
) -> None:
    settings = Settings(
        home=tmp_path, embedding_provider="onnx", embedding_model_dir=minilm_folder(tmp_path)
    )
    local = from_settings(settings)
    assert local.model_id == "onnx:my-minilm" and local.dimension == 384
    texts = [*TEXTS, "word " * 600]  # truncated at max_seq_length, as the bundled one
    assert np.array_equal(local.encode_documents(texts), embedder.encode_documents(texts))
    with Hindsight(settings) as hs:
        hs.retain("user:alice", "I love jazz.")
        (hit, *_) = hs.recall("user:alice", "what music does she enjoy?")
        assert "jazz" in hit.memory.content and hs.stats().embedding_model == "onnx:my-minilm"


def test_an_onnx_folder_pools_as_its_config_says(tmp_path: Path, embedder: Embeddings) -> None:
    folder = minilm_folder(tmp_path, pooling="pooling_mode_cls_token")
    local = from_settings(
        Settings(home=tmp_path, embedding_provider="onnx", embedding_model_dir=folder)
    )
    assert not np.allclose(local.encode_documents(TEXTS), embedder.encode_documents(TEXTS))


def test_an_onnx_folder_refuses_another_tokenizer(tmp_path: Path) -> None:
    folder = minilm_folder(tmp_path)
    (folder / "tokenizer.json").write_text(json.dumps({"model": {"type": "BPE", "vocab": {}}}))
    settings = Settings(home=tmp_path, embedding_provider="onnx", embedding_model_dir=folder)
    with pytest.raises(EmbeddingError, match="BPE tokenizer; only WordPiece"):
        from_settings(settings)


# -- the command line and the servers ----------------------------------------------------------
def test_the_cli_keeps_a_retain_through_an_outage_and_drains_it(
    tmp_path: Path, http: EmbeddingServer
) -> None:
    from click.testing import CliRunner

    from hindsight.cli import cli

    env = {
        "HINDSIGHT_EMBEDDING_PROVIDER": "openai",
        "HINDSIGHT_EMBEDDING_BASE_URL": http.url,
        "HINDSIGHT_EMBEDDING_MODEL": MODEL,
        "HINDSIGHT_EMBEDDING_API_KEY": "sk-test",
        "HINDSIGHT_EMBEDDING_MAX_RETRIES": "0",
        "HINDSIGHT_SQLITE_SYNCHRONOUS": "OFF",
    }

    def run(*args: str) -> str:
        result = CliRunner().invoke(cli, ["--home", str(tmp_path), *args], env=env)
        assert result.exit_code == 0, result.output
        return result.stdout

    run("retain", "--owner", "user:alice", "My sister lives in Lyon.")
    http.stop()
    run("retain", "--owner", "user:alice", "I play the cello every Sunday.")
    found = json.loads(run("recall", "--owner", "user:alice", "cello", "--json"))
    hits = found["results"]
    assert "cello" in hits[0]["content"]
    assert hits[0]["explanation"]["unavailable"] == ["dense"]
    http.start()
    assert json.loads(run("jobs", "wait", "--json"))["done"] == 1
    found = json.loads(run("recall", "--owner", "user:alice", "which instrument?", "--json"))
    hits = found["results"]
    assert "dense" in hits[0]["explanation"]["channels"]


def test_mcp_says_which_channel_a_recall_went_without(
    settings: Settings, http: EmbeddingServer
) -> None:
    from hindsight.mcpserver.memory import _why

    configured = over_http(settings, http, embedding_api_key=SecretStr("sk-test"))
    with Hindsight(configured) as hs:
        hs.retain("user:alice", "I love jazz.")
        http.stop()
        (hit, *_) = hs.recall("user:alice", "jazz")
    assert _why(hit).endswith("; without dense (unavailable)")
