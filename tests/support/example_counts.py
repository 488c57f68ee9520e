"""Example counts for @given tests that ask for more or fewer than the
profile's default, scaled with the profile loaded.

A test states its count under the `dev` profile; `ci` and `thorough`
(tests/conftest.py) multiply it as they multiply their own default, so
`HYPOTHESIS_PROFILE=thorough` runs every property longer, not only the ones
that set nothing (docs/test-suite.md).
"""

from __future__ import annotations

from hypothesis import settings


def scaled_examples(under_dev: int, profile: settings | None = None) -> int:
    """`under_dev` times the profile's default (the loaded one's unless
    given) over the `dev` profile's."""
    dev = settings.get_profile("dev").max_examples
    loaded = profile if profile is not None else settings()
    return max(1, under_dev * loaded.max_examples // dev)
