"""Waterfalls and serial hooks: how listeners contribute to a step.

Implements the dispatch semantics the loop's seams share (anchor:
vendored cordis ``events.ts``), which docs/reference-harness.md restates:

- **Waterfall.** Every listener is called as ``listener(context, seed,
  next)`` with the *same* frozen seed. ``await next()`` runs the next
  listener in registration order (with that same seed) and returns its
  result; after the last listener it returns the seed itself. A listener's
  return value is seen only by the listener that called it through
  ``next()``, and the first listener's return value is the waterfall's
  result. Consequences: the prepend pattern ``[mine, *await next()]``
  composes contributions in registration order; the append pattern
  ``[*await next(), mine]`` composes them in reverse; a listener that does
  not call ``next()`` short-circuits the rest; ``prepend=True`` registers a
  listener in front of the others.
- **Serial hook.** Listeners are awaited one after another, in
  registration order, each with the same context; their results are
  collected in that order.

The seed is frozen (`reqfold.reference.loop.freeze`), so a listener that tries to
change it in place raises; a contribution is a *returned* extension.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from typing import Generic, TypeVar

from reqfold.reference.revisions import Revision

C = TypeVar("C")
T = TypeVar("T")
R = TypeVar("R")

Next = Callable[[], Awaitable[T]]
WaterfallListener = Callable[[C, T, Next[T]], Awaitable[T]]
SerialListener = Callable[[C], Awaitable[R]]


class _Registry(Generic[C, R]):
    """Listeners of one seam, in dispatch order, limited to some revisions."""

    def __init__(self, name: str, revisions: Collection[Revision]) -> None:
        self.name = name
        self.revisions = frozenset(revisions)
        self._listeners: list[Callable[..., Awaitable[R]]] = []

    def _add(
        self, listener: Callable[..., Awaitable[R]], prepend: bool, revision: Revision
    ) -> Callable[[], None]:
        if revision not in self.revisions:
            allowed = ", ".join(sorted(r.value for r in self.revisions))
            raise ValueError(
                f"{self.name!r} does not exist in revision {revision.value}"
                f" (only in: {allowed})"
            )
        if prepend:
            self._listeners.insert(0, listener)
        else:
            self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    def __len__(self) -> int:
        return len(self._listeners)


class Waterfall(_Registry[C, T]):
    """A seam whose listeners transform one frozen seed through ``next()``."""

    def __init__(
        self, name: str, revisions: Collection[Revision], revision: Revision
    ) -> None:
        super().__init__(name, revisions)
        self._revision = revision

    def register(
        self, listener: WaterfallListener[C, T], *, prepend: bool = False
    ) -> Callable[[], None]:
        """Add a listener (in front with `prepend`); returns a function removing it.

        Raises ValueError when the seam does not exist in the loop's revision.
        """
        return self._add(listener, prepend, self._revision)

    async def dispatch(self, context: C, seed: T) -> T:
        """Run the chain over `seed` and return the first listener's result."""
        listeners = list(self._listeners)

        async def call(index: int) -> T:
            if index == len(listeners):
                return seed
            return await listeners[index](context, seed, lambda: call(index + 1))

        return await call(0)


class SerialHook(_Registry[C, R]):
    """A seam whose listeners are awaited one after another."""

    def __init__(
        self, name: str, revisions: Collection[Revision], revision: Revision
    ) -> None:
        super().__init__(name, revisions)
        self._revision = revision

    def register(
        self, listener: SerialListener[C, R], *, prepend: bool = False
    ) -> Callable[[], None]:
        """Add a listener (in front with `prepend`); returns a function removing it."""
        return self._add(listener, prepend, self._revision)

    async def dispatch(self, context: C) -> list[R]:
        """Await every listener in order; return their results in that order."""
        return [await listener(context) for listener in list(self._listeners)]
