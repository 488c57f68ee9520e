"""reqfold's conformance suite: judging other implementations of the contract.

One sub-package per tool, each with its command-line shell (``cli.py``)
beside its engine, so the folder tree is the architecture:

- `reqfold.conformance.adapters`: the adapter protocol's transports (a child
  process over stdio, or the reference in process);
- `reqfold.conformance.codec`: the codec vectors, their runner and the differential
  properties (``reqfold vectors``);
- `reqfold.conformance.check`: the offline log checker (``reqfold check``);
- `reqfold.conformance.harness`: scenarios that drive a harness and the checks that
  judge its behaviour;
- `reqfold.conformance.run`: ``reqfold run``, every part above against one
  implementation, with one verdict;
- `reqfold.conformance.report`: the reports of a run (JSON, JUnit, Markdown,
  HTML) and ``reqfold compare``;
- `reqfold.conformance.pytest_plugin`: the same checks as items of another
  project's pytest run (``pytest --reqfold-impl CMD``).

`rules` (the rule registry parsed from docs/spec.md), `errors` and
`strategies` are shared. The suite imports `reference` (the oracle) and
`fakes` (the provider); neither imports the suite.
"""
