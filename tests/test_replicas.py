"""Read replicas: recall reads a real hot standby (made with pg_basebackup from the test
server), writes and migrations stay on the primary, a request reads its own writes, and a
standby that lags or fails gives way to the primary."""

from __future__ import annotations

import os
import pwd
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
import pytest
from pydantic import ValidationError as SettingsError

from hindsight import Hindsight
from hindsight.config import Settings
from hindsight.embed import Embeddings


def _bin(name: str) -> str:
    from pgserver._commands import POSTGRES_BIN_PATH

    return str(POSTGRES_BIN_PATH / name)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _with_host(url: str, host: str, port: int) -> str:
    """``url`` (pgserver's: a socket directory as its host) at another socket and port."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k not in ("host", "port")]
    query += [("host", host), ("port", str(port))]
    return urlunsplit(parts._replace(query=urlencode(query)))


class Standby:
    """A hot standby of the test server, in a folder of its own, run as the server's user."""

    def __init__(self, primary: str, folder: Path) -> None:
        self.primary = primary
        self.folder = folder
        self.port = _free_port()
        self.user = "pgserver" if os.geteuid() == 0 else None  # postgres will not run as root
        parts = dict(parse_qsl(urlsplit(primary).query))
        folder.mkdir(mode=0o700)
        if self.user:
            entry = pwd.getpwnam(self.user)
            os.chown(folder, entry.pw_uid, entry.pw_gid)
            for parent in folder.parents:  # the server's user walks down to it
                parent.chmod(parent.stat().st_mode | 0o055)
        self._run(
            _bin("pg_basebackup"),
            *("-D", str(folder), "-R", "-X", "stream", "-U", "postgres"),
            "--checkpoint=fast",  # else it waits for a spread checkpoint: minutes on a busy server
            *("-h", parts.get("host", "localhost"), "-p", parts.get("port", "5432")),
        )
        self.url = _with_host(primary, str(folder), self.port)

    def _run(self, *args: str) -> None:
        done = subprocess.run(args, capture_output=True, text=True, user=self.user, timeout=300)
        assert done.returncode == 0, f"{args[0]} failed: {done.stderr}"

    def start(self) -> None:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=''"
        log = str(self.folder / "log.txt")
        self._run(_bin("pg_ctl"), "-D", str(self.folder), "-w", "-l", log, "-o", options, "start")

    def stop(self) -> None:
        self._run(_bin("pg_ctl"), "-D", str(self.folder), "-m", "immediate", "-w", "stop")

    def sql(self, statement: str) -> object:
        with psycopg.connect(self.url, autocommit=True) as conn:
            return conn.execute(statement).fetchone()

    def caught_up(self) -> None:
        """Wait until the standby has replayed all the primary has written."""
        with psycopg.connect(self.primary, autocommit=True) as conn:
            (target,) = conn.execute("SELECT pg_current_wal_lsn()").fetchone() or ()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            done = self.sql(f"SELECT pg_last_wal_replay_lsn() >= '{target}'::pg_lsn")
            if done == (True,):
                return
            time.sleep(0.05)
        raise AssertionError("the standby did not catch up in 30 s")


@pytest.fixture(scope="module")
def standby(postgres_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Standby]:
    node = Standby(postgres_server, tmp_path_factory.mktemp("replica") / "data")
    node.start()
    yield node
    node.stop()


def _engine(home: Path, url: str, embedder: Embeddings, **settings: object) -> Hindsight:
    return Hindsight(
        Settings(home=home, database_url=url, **settings),  # type: ignore[arg-type]
        embedder=embedder,
    )


def _replica_of(standby: Standby, database_url: str) -> str:
    """The standby's URL for the test's schema (the same search path as ``database_url``)."""
    parts = urlsplit(database_url)
    host = urlsplit(standby.url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k not in ("host", "port")]
    query += [(k, v) for k, v in parse_qsl(host.query) if k in ("host", "port")]
    return urlunsplit(parts._replace(query=urlencode(query)))


def _found(engine: Hindsight, owner: str, query: str, text: str) -> bool:
    return any(text in r.memory.content for r in engine.recall(owner, query, k=5))


def test_recall_reads_the_standby_and_a_request_reads_its_own_writes(
    standby: Standby, database_url: str, tmp_path: Path, embedder: Embeddings
) -> None:
    replica = _replica_of(standby, database_url)
    with _engine(tmp_path / "b", database_url, embedder) as other:  # another server
        other.retain("user:ann", "Ann's sister lives in Lisbon and teaches piano.")
        with _engine(
            tmp_path / "a",
            database_url,
            embedder,
            database_read_url=replica,
            database_read_max_lag_seconds=300,
        ) as hs:
            standby.caught_up()
            assert _found(hs, "user:ann", "where does Ann's sister live", "Lisbon")
            standby.sql("SELECT pg_wal_replay_pause()")
            try:
                # another server's write, not yet replayed: this server's recall reads the
                # standby, which has not seen it
                other.retain("user:ann", "Ann adopted a greyhound called Biscuit.")
                assert not _found(hs, "user:ann", "what is Ann's dog called", "Biscuit")
                assert other.recall("user:ann", "what is Ann's dog called", k=5)
                # this server's own write: its next recall reads the primary
                hs.retain("user:ann", "Ann's favourite climbing wall is in Porto.")
                assert _found(hs, "user:ann", "which climbing wall does Ann like", "Porto")
                assert _found(hs, "user:ann", "what is Ann's dog called", "Biscuit")
            finally:
                standby.sql("SELECT pg_wal_replay_resume()")
            # every recall was audited, on the primary (a standby refuses writes)
            audited = other.audit("user:ann", action="recall")
            assert len(audited) >= 4


def test_a_standby_that_lags_or_fails_gives_way_to_the_primary(
    standby: Standby, database_url: str, tmp_path: Path, embedder: Embeddings
) -> None:
    replica = _replica_of(standby, database_url)
    with _engine(tmp_path / "b", database_url, embedder) as other:
        other.retain("user:bo", "Bo runs the bakery on Elm Street.")
        standby.caught_up()
        standby.sql("SELECT pg_wal_replay_pause()")
        try:
            other.retain("user:bo", "Bo's bakery closes on Mondays.")
            time.sleep(1.2)  # replay is a second behind what the standby received
            with _engine(
                tmp_path / "a",
                database_url,
                embedder,
                database_read_url=replica,
                database_read_max_lag_seconds=0.5,
            ) as hs:
                assert _found(hs, "user:bo", "when is Bo's bakery closed", "Mondays")
                (status,) = hs.doctor(check_endpoints=False)["store"]["replicas"]
                assert status["lag_seconds"] > 0.5 and not status["usable"]
        finally:
            standby.sql("SELECT pg_wal_replay_resume()")
        standby.caught_up()
        with _engine(tmp_path / "c", database_url, embedder, database_read_url=replica) as hs:
            assert _found(hs, "user:bo", "where is Bo's bakery", "Elm Street")
            standby.stop()
            try:
                # the standby is gone: this recall and the next are answered all the same
                assert _found(hs, "user:bo", "when is Bo's bakery closed", "Mondays")
                assert _found(hs, "user:bo", "where is Bo's bakery", "Elm Street")
                (status,) = hs.doctor(check_endpoints=False)["store"]["replicas"]
                assert not status["usable"] and "error" in status
                assert "@" not in status["replica"]  # where it is, without credentials
                assert status["replica"].endswith(urlsplit(replica).path)
            finally:
                standby.start()


def test_read_urls_must_be_postgresql_urls() -> None:
    with pytest.raises(SettingsError, match="database_read_url"):
        Settings(database_read_url="redis://localhost:6379/0")
    urls = "postgresql://a/db postgresql://b,c/db"  # libpq's several hosts keep their comma
    assert Settings(database_read_url=urls).database_read_url == [  # type: ignore[arg-type]
        "postgresql://a/db",
        "postgresql://b,c/db",
    ]
