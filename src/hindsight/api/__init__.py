"""The REST API (FastAPI): thin handlers over :class:`hindsight.Hindsight`.

Needs the ``server`` extra. :func:`create_app` builds the app; ``hindsight serve`` runs it.
"""

from __future__ import annotations

from hindsight.api.app import create_app, is_loopback, keyring_for

__all__ = ["create_app", "is_loopback", "keyring_for"]
