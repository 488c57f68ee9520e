"""The reference's shells: everything that does I/O around the pure core.

The codec adapter and the harness adapter (JSON-RPC over stdio), the stdio
chat front end, and JSONL persistence of the session log. The top of
`reqfold.reference` holds only pure modules (no I/O, no clock); the
documented commands ``python -m reqfold.reference.adapter``,
``...harness_adapter`` and ``...chat`` are launchers there that run the
shells here.
"""
