"""Judging a harness's behaviour: scenarios, the driver that plays them, the checks.

`scenarios` loads the scenario files (data, ``conformance/scenarios/``),
`driver` plays one through a harness adapter with the fake provider and
returns its `evidence`, `checks` and `stability` judge the evidence into
`results` (every check names its rules), and `runner` runs them all with a
served fake and restarts a broken adapter. docs/scenarios.md is the catalogue.
"""
