"""The reference chat, but it throws away the first line it reads (as a harness
that is "not running yet" when its first input arrives), and exits 0 at the
end of input like any other run. Its log holds one turn fewer than it was
fed: ``reqfold probe`` must fail CHECK-3, whatever the exit status."""

from __future__ import annotations

from reqfold.reference.shells.chat import Chat, main


class IgnoresFirstLine(Chat):
    dropped = False

    async def read_line(self) -> str:
        line = await super().read_line()
        if not self.dropped and line:
            self.dropped = True
            return await super().read_line()
        return line


raise SystemExit(main(chat=IgnoresFirstLine))
