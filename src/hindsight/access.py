"""Who may read and write which owners: API keys and their scopes.

Keys live in a JSON file (``HINDSIGHT_API_KEYS_FILE``)::

    {"keys": [{"name": "alice-app", "key": "...",          # or "sha256": "<hex digest>"
               "read": ["user:alice", "shared:team-a"],
               "write": ["user:alice"],
               "trust": 0.5,                                   # optional, default 1
               "audit": false,                                 # optional, default false
               "review": false,                                # optional, default false
               "admin": false}]}                               # optional, default false

A scope entry names an owner exactly, or ends in ``*`` to cover every owner
that starts with what precedes it (``"user:*"``, ``"*"``). ``trust`` caps how far what
the key writes is believed (see :mod:`hindsight.guard`); ``audit`` lets it read the
audit log of the owners it may read. The roles: ``review`` lets it approve and reject
what the guard held of the owners it may write; ``admin`` is a reviewer that may also
undo a rejection. Whatever its roles, a key never approves what it wrote itself: the
writer is not the reviewer (:mod:`hindsight.guard.review`). Only digests are kept
in memory; a presented key is hashed and compared with every digest in constant
time, so neither timing nor logs reveal a key.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from hindsight.errors import AuthenticationError, PermissionDeniedError, ValidationError

_HEX: Final = frozenset("0123456789abcdef")
_FIELDS: Final = ("name", "key", "sha256", "read", "write", "trust", "audit", "review", "admin")
LOOPBACK_HOSTS: Final = ("127.0.0.1", "localhost", "[::1]")
"""The names a server on loopback is reached by."""


def loopback_hosts() -> list[str]:
    """``host`` and ``host:*`` (any port) for each loopback name: the ``Host`` headers a
    server without keys answers, against DNS rebinding."""
    return [h for host in LOOPBACK_HOSTS for h in (host, f"{host}:*")]


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


def _covers(scope: tuple[str, ...], owner: str) -> bool:
    return any(
        owner.startswith(entry[:-1]) if entry.endswith("*") else owner == entry for entry in scope
    )


@dataclass(frozen=True)
class Principal:
    """A caller and the owners it may read and write: an API key's, or :data:`TRUSTED`.

    Every library operation runs as one (:meth:`hindsight.Hindsight.as_principal`),
    and checks its access there, once, whatever interface it came through.
    """

    name: str
    read: tuple[str, ...]
    write: tuple[str, ...]
    trust: float = 1.0  # what it writes is believed at most this far (hindsight.guard)
    audit: bool = False  # may read the audit log of the owners it reads
    review: bool = False  # may approve and reject held memories of the owners it writes
    admin: bool = False  # a reviewer that may also undo a rejection

    @property
    def reviews(self) -> bool:
        """Whether it may decide on held memories (an admin is a reviewer too)."""
        return self.review or self.admin

    def can_read(self, owner: str) -> bool:
        # writing an owner implies reading it: a writer must see what it dedupes against
        return _covers(self.read, owner) or _covers(self.write, owner)

    def can_write(self, owner: str) -> bool:
        return _covers(self.write, owner)

    def check_read(self, owners: str | Iterable[str]) -> None:
        for owner in [owners] if isinstance(owners, str) else owners:
            if not self.can_read(owner):
                raise PermissionDeniedError(f"key {self.name!r} may not read owner {owner!r}")

    def check_write(self, owners: str | Iterable[str]) -> None:
        for owner in [owners] if isinstance(owners, str) else owners:
            if not self.can_write(owner):
                raise PermissionDeniedError(f"key {self.name!r} may not write owner {owner!r}")

    def check_review(self) -> None:
        """What approving or rejecting a held memory needs: ``"review": true``."""
        if not self.reviews:
            raise PermissionDeniedError(
                f"key {self.name!r} may not decide on held memories: that needs a key with "
                '"review": true (and another key than the one that wrote them)'
            )

    def check_read_all(self) -> None:
        """What a question about every owner at once needs: a key that reads ``*``."""
        if "*" not in (*self.read, *self.write):
            raise PermissionDeniedError(
                f"key {self.name!r} may not read every owner; give an owner"
            )

    def check_write_all(self) -> None:
        """What work over every owner at once needs: a key that writes ``*``."""
        if "*" not in self.write:
            raise PermissionDeniedError(f"key {self.name!r} may not write every owner")


# Local single-user use: the library, the CLI, a server on loopback with no keys configured.
TRUSTED: Final = Principal(
    name="local", read=("*",), write=("*",), audit=True, review=True, admin=True
)
# An agent behind the stdio MCP server: local's scopes and trust, but not local, so that
# a person (``local``, at the CLI) reviews what the agent wrote, and it cannot itself.
LOCAL_AGENT: Final = Principal(name="mcp", read=("*",), write=("*",), audit=True)
RESERVED_NAMES: Final = frozenset({TRUSTED.name, LOCAL_AGENT.name})
"""Principal names the library gives itself: no key may take one (a writer is known by name)."""


class KeyRing:
    """The configured API keys; ``authenticate`` turns a bearer token into a Principal."""

    def __init__(self, entries: Iterable[tuple[bytes, Principal]]) -> None:
        self._entries = list(entries)
        if not self._entries:
            raise ValidationError("the API key file lists no keys")

    def __len__(self) -> int:
        return len(self._entries)

    @classmethod
    def load(cls, path: str | Path) -> KeyRing:
        """Read and check a key file; every problem names the entry and field."""
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ValidationError(f"cannot read API key file {path}: {exc.strerror}") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValidationError(f"API key file {path} is not valid JSON: {exc}") from None
        return cls.parse(data, where=str(path))

    @classmethod
    def parse(cls, data: Any, *, where: str = "API key file") -> KeyRing:
        if not isinstance(data, Mapping) or not isinstance(data.get("keys"), list):
            raise ValidationError(f'{where}: expected {{"keys": [...]}}')
        entries: list[tuple[bytes, Principal]] = []
        names: set[str] = set()
        for i, entry in enumerate(data["keys"]):
            at = f"{where}: keys[{i}]"
            if not isinstance(entry, Mapping):
                raise ValidationError(f"{at} must be an object")
            unknown = set(entry) - {*_FIELDS}
            if unknown:
                raise ValidationError(f"{at} has unknown fields: {', '.join(sorted(unknown))}")
            name = entry.get("name")
            if not isinstance(name, str) or not name.strip():
                raise ValidationError(f"{at}.name must be a non-empty string")
            if name in names:
                raise ValidationError(f"{at}.name {name!r} is used twice")
            if name in RESERVED_NAMES:
                raise ValidationError(
                    f"{at}.name {name!r} is the library's own principal: give the key another"
                )
            names.add(name)
            entries.append((_entry_digest(entry, at), _principal(entry, name, at)))
        return cls(entries)

    def authenticate(self, token: str | None) -> Principal:
        """The principal whose key is ``token``; AuthenticationError otherwise."""
        if not token:
            raise AuthenticationError("an API key is required: send 'Authorization: Bearer <key>'")
        presented = _digest(token)
        found: Principal | None = None
        for digest, principal in self._entries:  # no early exit: constant time in the key
            if hmac.compare_digest(digest, presented):
                found = principal
        if found is None:
            raise AuthenticationError("the API key is not valid")
        return found


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or None."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or any(c.isspace() for c in token):
        return None
    return token


def _entry_digest(entry: Mapping[str, Any], at: str) -> bytes:
    key, sha = entry.get("key"), entry.get("sha256")
    if (key is None) == (sha is None):
        raise ValidationError(f"{at} needs exactly one of 'key' or 'sha256'")
    if key is not None:
        if not isinstance(key, str) or len(key) < 16:
            raise ValidationError(f"{at}.key must be a string of at least 16 characters")
        if any(c.isspace() for c in key):  # a header cannot carry it: a pasting mistake
            raise ValidationError(f"{at}.key must not contain spaces or line breaks")
        return _digest(key)
    if not isinstance(sha, str) or len(sha) != 64 or not set(sha.lower()) <= _HEX:
        raise ValidationError(f"{at}.sha256 must be 64 hexadecimal characters")
    return bytes.fromhex(sha)


def _principal(entry: Mapping[str, Any], name: str, at: str) -> Principal:
    scopes: dict[str, tuple[str, ...]] = {}
    for field in ("read", "write"):
        value = entry.get(field, [])
        if not isinstance(value, list) or not all(isinstance(s, str) and s for s in value):
            raise ValidationError(f"{at}.{field} must be a list of owners or prefixes ending in *")
        for scope in value:
            if "*" in scope[:-1]:
                raise ValidationError(f"{at}.{field}: '*' may only end a scope, not {scope!r}")
        scopes[field] = tuple(value)
    trust = entry.get("trust", 1.0)
    if isinstance(trust, bool) or not isinstance(trust, int | float) or not 0 <= trust <= 1:
        raise ValidationError(f"{at}.trust must be a number between 0 and 1")
    roles = {role: entry.get(role, False) for role in ("audit", "review", "admin")}
    for role, value in roles.items():
        if not isinstance(value, bool):
            raise ValidationError(f"{at}.{role} must be true or false")
    return Principal(
        name=name,
        read=scopes["read"],
        write=scopes["write"],
        trust=float(trust),
        audit=roles["audit"],
        review=roles["review"],
        admin=roles["admin"],
    )
