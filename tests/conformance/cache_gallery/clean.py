"""Clean: the opening composed once, the conversation only ever extended."""

from minimal import Harness, main

if __name__ == "__main__":
    main(Harness())
