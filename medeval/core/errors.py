"""Error types of medeval. The CLI and the pages show ``str(error)`` to the user,
so every message says what is wrong and what to do."""


class MedevalError(Exception):
    """An error a user can act on (bad input, missing model, unknown name)."""


class InputError(MedevalError):
    """Bad input file: names the file, the row (1-based, header = row 1 for CSV) and the fix."""

    def __init__(self, message: str, *, file: str | None = None, row: int | None = None, fix: str | None = None):
        self.file, self.row, self.fix, self.detail = file, row, fix, message
        from medeval.core.i18n import _  # (the words around the message, in the reader's language)

        text = message
        if file:
            text = (_("{file}, row {row}: {message}").format(file=file, row=row, message=message) if row is not None
                    else _("{file}: {message}").format(file=file, message=message))
        if fix:
            text = _("{text} -- {fix}").format(text=text, fix=fix)
        super().__init__(text)


class PermissionDenied(MedevalError):
    """The current user's role may not do this."""
