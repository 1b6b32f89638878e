"""Telling a reviewer: a signed webhook when the guard holds a write or refuses one.

With ``Settings.review_webhook_url`` set, each write the guard held (quarantined or
sent to review) or refused is posted there as JSON, from a thread of its own, so a
slow or dead receiver never slows a write. The body names the owner and the memories'
ids, statuses, flags and conflicts (a refusal: its reason), never their text, which
the reviewer reads in the queue (a hold's reason quotes it, so it is not sent).
Headers: ``X-Hindsight-Event`` (``held`` or ``refused``), ``X-Hindsight-Delivery`` (a
unique id: a receiver drops a repeat) and, with ``review_webhook_secret``,
``X-Hindsight-Signature: sha256=<hex HMAC-SHA256 of the body>``. A delivery that
fails (no connection, 429 or 5xx) is retried with backoff and jitter, then dropped
with a warning in the log.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import queue
import random
import threading
import time
import urllib.error
import urllib.request
import uuid
from typing import Any, Final

_log = logging.getLogger("hindsight.guard.notify")
_STOP: Final = object()


class Notifier:
    """Posts events to one webhook, in order, off the caller's thread."""

    def __init__(
        self,
        url: str,
        secret: str | None = None,
        *,
        attempts: int = 4,
        timeout: float = 5.0,
        backoff: float = 0.5,
    ) -> None:
        self.url, self._secret = url, secret
        self.attempts, self.timeout, self.backoff = attempts, timeout, backoff
        self._queue: queue.Queue[object] = queue.Queue(maxsize=10_000)
        self._thread = threading.Thread(target=self._run, name="hindsight-webhook", daemon=True)
        self._thread.start()

    def send(self, event: str, payload: dict[str, Any]) -> None:
        """Queue an event; never blocks a write (a full queue drops it, with a warning)."""
        try:
            self._queue.put_nowait((event, payload))
        except queue.Full:
            _log.warning("review webhook queue full: %s event dropped", event)

    def close(self, timeout: float = 10.0) -> None:
        """Deliver what is queued (for at most ``timeout`` seconds), then stop."""
        self._queue.put(_STOP)
        self._thread.join(timeout)

    def _run(self) -> None:
        while (item := self._queue.get()) is not _STOP:
            assert isinstance(item, tuple)
            event: str = item[0]
            payload: dict[str, Any] = item[1]
            self._deliver(event, payload)

    def _deliver(self, event: str, payload: dict[str, Any]) -> None:
        body = json.dumps({"event": event, **payload}, ensure_ascii=False).encode("utf-8")
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "hindsight",
            "X-Hindsight-Event": event,
            "X-Hindsight-Delivery": uuid.uuid4().hex,
        }
        if self._secret:
            mac = hmac.new(self._secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
            headers["X-Hindsight-Signature"] = f"sha256={mac}"
        for attempt in range(self.attempts):
            request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    if response.status < 300:
                        return
            except urllib.error.HTTPError as exc:
                if exc.code != 429 and exc.code < 500:
                    _log.warning("review webhook refused the %s event: HTTP %s", event, exc.code)
                    return
            except (urllib.error.URLError, OSError) as exc:
                _log.info("review webhook unreachable (attempt %d): %s", attempt + 1, exc)
            time.sleep(self.backoff * 2**attempt * (0.5 + random.random()))
        _log.warning("review webhook: %s event dropped after %d attempts", event, self.attempts)
