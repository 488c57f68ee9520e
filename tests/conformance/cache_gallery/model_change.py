"""The user switches model in the middle of the session."""

from minimal import Context, Harness, main


class SwitchesModel(Harness):
    def model_for(self, ctx: Context) -> str:
        return "deepseek-reasoner" if ctx.turn >= 2 else "deepseek-chat"


if __name__ == "__main__":
    main(SwitchesModel())
