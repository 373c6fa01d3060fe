"""The one exception family the plugin shows to people.

Every module raises its own subclass with kubectl's or kruise-tools' sentence; the entry point
prints any of them as `error: <text>` and exits 1, so no message is ever lost in a traceback.
"""


class PluginError(Exception):
    """A failure whose text is the message for the user."""
