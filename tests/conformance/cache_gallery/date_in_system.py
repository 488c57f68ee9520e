"""Today's date near the end of the system prompt: a resume next day breaks."""

from minimal import BASE_SYSTEM, Context, Harness, main


class DatedSystem(Harness):
    def system(self, ctx: Context) -> str:
        return BASE_SYSTEM + f"Current date: {ctx.today.isoformat()}\n"


if __name__ == "__main__":
    main(DatedSystem())
