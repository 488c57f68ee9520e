"""Reports of a ``reqfold run`` or ``reqfold probe``: one model, one
renderer per format.

Sans-IO: `model` builds a `RunReport` (plain data) from what a run
produced (its checks, the implementation's identity, the scenarios'
evidence, the expected failures); `reproduction` and `traces` derive the
parts of it that need the scenario or its evidence (`traces` reads the
captured requests to draw each cache trace, and judges nothing); each
renderer turns a report into text (`json_report`, `junit`, `markdown`,
`html`); `compare` compares two JSON reports. Writing files and printing
is the job of the shells: `writing` (the report options and files both
tools share), `conformance.run.cli`, `conformance.probe.cli`, and
``reqfold compare`` in `conformance.report.cli`.
"""
