"""Error types of medeval. The CLI and the pages show ``str(error)`` to the user,
so every message says what is wrong and what to do."""


class MedevalError(Exception):
    """An error a user can act on (bad input, missing model, unknown name)."""


class InputError(MedevalError):
    """Bad input file: names the file, the row (1-based, header = row 1 for CSV) and the fix."""

    def __init__(self, message: str, *, file: str | None = None, row: int | None = None, fix: str | None = None):
        self.file, self.row, self.fix, self.detail = file, row, fix, message
        where = ""
        if file:
            where = f"{file}"
            if row is not None:
                where += f", row {row}"
            where += ": "
        text = where + message
        if fix:
            text += f" -- {fix}"
        super().__init__(text)


class PermissionDenied(MedevalError):
    """The current user's role may not do this."""
