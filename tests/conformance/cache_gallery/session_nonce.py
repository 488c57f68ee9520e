"""A per-session hash at the top of the opening: every fresh session loses it."""

from minimal import BASE_SYSTEM, Context, Harness, main


class SessionHash(Harness):
    def system(self, ctx: Context) -> str:
        return f"Session {ctx.session}\n" + BASE_SYSTEM


if __name__ == "__main__":
    main(SessionHash())
