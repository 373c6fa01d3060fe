"""The one exception family the plugin shows to people.

Every module raises its own subclass with kubectl's or kruise-tools' sentence; the entry point
prints any of them as `error: <text>` and exits 1, so no message is ever lost in a traceback.
"""


class PluginError(Exception):
    """A failure whose text is the message for the user."""


class ExitStatus(Exception):
    """The command handed the work to another program; exit with that program's status."""

    def __init__(self, code: int) -> None:
        super().__init__(f"exit status {code}")
        self.code = code
