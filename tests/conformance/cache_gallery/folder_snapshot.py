"""The project's folder listing and git status snapshotted into the opening."""

import os

from minimal import BASE_SYSTEM, Context, Harness, main


class FolderSnapshot(Harness):
    def system(self, ctx: Context) -> str:
        files = sorted(os.listdir(ctx.workdir))
        tree = "".join(f"├── {name}\n" for name in files)
        status = "".join(f"?? {name}\n" for name in files if name.endswith(".new"))
        return (
            "<env>\nProject folder:\n"
            + tree
            + "git status:\n"
            + (status or "clean\n")
            + "</env>\n"
            + BASE_SYSTEM
        )


if __name__ == "__main__":
    main(FolderSnapshot())
