"""Providers by name: one small registry that built-ins and plugins register into alike."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from hindsight.errors import ValidationError

T = TypeVar("T")


class Registry(Generic[T]):
    """Factories of one kind of provider (embedders, extractors, ...), by name."""

    def __init__(self, what: str) -> None:
        self._what = what
        self._factories: dict[str, Callable[[], T]] = {}

    def register(self, name: str, factory: Callable[[], T]) -> None:
        self._factories[name] = factory

    def names(self) -> list[str]:
        return sorted(self._factories)

    def create(self, name: str) -> T:
        try:
            factory = self._factories[name]
        except KeyError:
            raise ValidationError(
                f"unknown {self._what} {name!r}; known: {', '.join(self.names())}"
            ) from None
        return factory()
