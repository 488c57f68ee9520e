"""``python -m reqfold.reference.chat``: the stdio chat front end.

Only a launcher at the documented path; the shell is
`reqfold.reference.shells.chat`. Importing this module imports nothing, so
the top of `reqfold.reference` stays pure.
"""

if __name__ == "__main__":
    from reqfold.reference.shells.chat import main

    raise SystemExit(main())
