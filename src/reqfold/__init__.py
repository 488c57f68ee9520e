"""reqfold: a conformance suite, with a reference implementation, for
reconstructable, cache-stable LLM harness requests.

Everything installs under this one import name, so nothing clashes with a
user's own project: `reqfold.reference` (the reference implementation),
`reqfold.fakes` (the fake caching provider) and `reqfold.conformance` (the
suite). In the repository the three live in the top-level folders
`reference/`, `fakes/` and `conformance/`; this folder, `src/reqfold/`,
holds links to them (and to `docs/`, which the wheel ships).
"""
