"""``python -m reqfold.reference.adapter``: the codec adapter.

Only a launcher at the documented path; the shell is
`reqfold.reference.shells.adapter`. Importing this module imports nothing, so
the top of `reqfold.reference` stays pure.
"""

if __name__ == "__main__":
    from reqfold.reference.shells.adapter import main

    raise SystemExit(main())
