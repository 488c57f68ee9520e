"""Keeping the differential properties' inputs independent of loaded code.

Hypothesis (6.131 and newer) now and then draws a constant it found in the
source of the "local" modules the process has loaded: those outside
site-packages and the standard library. Which modules those are depends on
how reqfold is installed (a checkout's ``conformance/`` is local, a wheel's
is not) and on what else the process imported (a pytest session collects
test modules; a harness project's own code is local too). With the seed
fixed, the inputs, and so the counterexamples a report prints, still moved
with them: one more ``import fakes`` changed the 31st of 40 inputs of a
property.

`without_local_constants` hides those constants while a search runs, so
the same seed gives the same inputs wherever reqfold runs. It reaches into
Hypothesis's internals (the module-level ``_get_local_constants`` its
provider calls). Every part it touches is looked for first: with a
Hypothesis that lacks one, it does nothing and the search runs as
Hypothesis runs it.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from types import ModuleType

SEAM = "_get_local_constants"
PROVIDERS = "hypothesis.internal.conjecture.providers"


def _providers() -> ModuleType | None:
    """Hypothesis's providers module, if it has every part this module uses."""
    try:
        module = importlib.import_module(PROVIDERS)
    except ImportError:  # an older or newer layout: nothing to hide
        return None
    cache = getattr(getattr(module, "CONSTANTS_CACHE", None), "cache", None)
    if not (
        callable(getattr(module, SEAM, None))
        and callable(getattr(module, "Constants", None))
        and callable(getattr(cache, "clear", None))
    ):
        return None
    return module


@contextlib.contextmanager
def without_local_constants() -> Iterator[None]:
    """Within the block, Hypothesis sees no constants of local modules."""
    providers = _providers()
    if providers is None:
        yield
        return
    empty = providers.Constants()
    original = getattr(providers, SEAM)
    cache = providers.CONSTANTS_CACHE.cache
    setattr(providers, SEAM, lambda: empty)
    cache.clear()  # allowed constants cached before, with local ones
    try:
        yield
    finally:
        setattr(providers, SEAM, original)
        cache.clear()
