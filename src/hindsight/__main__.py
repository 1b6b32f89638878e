"""``python -m hindsight``: the same as the ``hindsight`` command."""

from __future__ import annotations

from hindsight.cli import main

if __name__ == "__main__":
    main()
