"""Providers by name: one small registry that built-ins and plugins register into alike.

A registry holds factories of one kind of provider (embedders, extractors, write
checkpoints, vector backends). A factory is called with the engine's
:class:`~hindsight.config.Settings` and the provider's own options, so a provider can be
given its model, URL or key::

    HINDSIGHT_PROVIDER_OPTIONS='{"extractor.my-llm": {"model": "m", "base_url": "..."}}'

Providers register in code (:meth:`Registry.register`) or as plugins: a distribution
that declares an entry point in the group ``hindsight.plugins``, named
``<kind>.<name>`` and pointing at the factory, is found without being imported until
that provider is asked for::

    [project.entry-points."hindsight.plugins"]
    "extractor.my-llm" = "my_package:make_extractor"

A name registered in code wins over a plugin of the same name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

from hindsight.errors import PluginError, ValidationError

if TYPE_CHECKING:
    from hindsight.config import Settings

T = TypeVar("T")
Options = Mapping[str, Any]
Factory = Callable[["Settings", Options], T]
"""Makes a provider from the settings and its own options (``{}`` when none are given)."""

ENTRY_POINT_GROUP: Final = "hindsight.plugins"


class Registry(Generic[T]):
    """Factories of one kind of provider, by name.

    ``kind`` prefixes the provider's entry points and options (``extractor.heuristic``);
    ``what`` names the kind in error messages (by default, ``kind``).
    """

    def __init__(self, kind: str, what: str | None = None) -> None:
        self.kind = kind
        self._what = what or kind
        self._factories: dict[str, Factory[T]] = {}

    def register(self, name: str, factory: Factory[T]) -> None:
        self._factories[name] = factory

    def names(self) -> list[str]:
        """Providers registered in code and installed as plugins."""
        return sorted({*self._factories, *self._plugins()})

    def create(self, name: str, settings: Settings, options: Options | None = None) -> T:
        """The provider ``name``, made with ``options`` (by default the settings' own
        ``provider_options`` for it)."""
        if options is None:
            options = settings.provider_options.get(f"{self.kind}.{name}", {})
        return self._factory(name)(settings, options)

    def _factory(self, name: str) -> Factory[T]:
        if name in self._factories:
            return self._factories[name]
        plugin = self._plugins().get(name)
        if plugin is None:
            raise ValidationError(
                f"unknown {self._what} {name!r}; known: {', '.join(self.names())}"
            )
        try:
            factory = plugin.load()
        except Exception as exc:  # a plugin's own import failed: say which, keep the cause
            raise PluginError(
                f"plugin {plugin.value!r} ({plugin.name}) failed to load: {exc}"
            ) from exc
        if not callable(factory):
            raise PluginError(f"plugin {plugin.value!r} ({plugin.name}) is not a factory")
        made: Factory[T] = factory
        return made

    def _plugins(self) -> dict[str, EntryPoint]:
        prefix = f"{self.kind}."
        return {
            ep.name.removeprefix(prefix): ep
            for ep in entry_points(group=ENTRY_POINT_GROUP)
            if ep.name.startswith(prefix)
        }


def no_options(kind: str, name: str, options: Options) -> None:
    """Refuse options given to a provider that takes none."""
    if options:
        raise ValidationError(
            f"{kind} {name!r} takes no options, got: {', '.join(sorted(options))}"
        )
