"""``python -m reqfold.reference.harness_adapter``: the harness adapter.

Only a launcher at the documented path; the shell is
`reqfold.reference.shells.harness_adapter`. Importing this module imports nothing, so
the top of `reqfold.reference` stays pure.
"""

if __name__ == "__main__":
    from reqfold.reference.shells.harness_adapter import main

    raise SystemExit(main())
