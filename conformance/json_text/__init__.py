"""JSON text as the suite reads, writes and compares it, below every tool.

The adapters (what goes to an implementation and comes back), the checker
(logs and snapshots) and the codec runner (vectors) share these helpers,
so they live here rather than in any one of them.
"""
