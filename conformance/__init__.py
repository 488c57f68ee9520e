"""reqfold's conformance suite: judging other implementations of the contract.

One sub-package per tool, each with its command-line shell (``cli.py``)
beside its engine, so the folder tree is the architecture:

- `conformance.adapters`: the adapter protocol's transports (a child
  process over stdio, or the reference in process);
- `conformance.codec`: the codec vectors, their runner and the differential
  properties (``reqfold vectors``);
- `conformance.check`: the offline log checker (``reqfold check``);
- `conformance.harness`: scenarios that drive a harness and the checks that
  judge its behaviour;
- `conformance.run`: ``reqfold run``, every part above against one
  implementation, with one verdict;
- `conformance.report`: the reports of a run (JSON, JUnit, Markdown,
  HTML) and ``reqfold compare``;
- `conformance.pytest_plugin`: the same checks as items of another
  project's pytest run (``pytest --reqfold-impl CMD``).

`rules` (the rule registry parsed from docs/spec.md), `errors` and
`strategies` are shared. The suite imports `reference` (the oracle) and
`fakes` (the provider); neither imports the suite.
"""
