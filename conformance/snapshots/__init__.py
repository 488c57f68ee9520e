"""Regression snapshots: what an implementation did, kept and compared between runs.

`normalize` masks what differs between identical runs (times, generated
ids, the run's folder, transport headers) and keeps the rest in order;
`where` names the first changed member of two serializations; `extension`
is the syrupy extension that serializes and stores snapshots (also used by
the project's golden tests); `store` is a folder of them; `evidence` and
`recorder` connect a scenario run's evidence to ``reqfold run
--snapshot-dir``. docs/snapshots.md.

Importing `normalize` or `where` needs nothing beyond the standard
library; the other modules import syrupy.
"""
