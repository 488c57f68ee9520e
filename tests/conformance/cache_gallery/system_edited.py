"""A line appended to the system prompt once the session has grown."""

from minimal import BASE_SYSTEM, Context, Harness, main


class GrowingSystem(Harness):
    def system(self, ctx: Context) -> str:
        if ctx.turn >= 2:
            return BASE_SYSTEM + "Be extra careful now, as the change is large.\n"
        return BASE_SYSTEM


if __name__ == "__main__":
    main(GrowingSystem())
