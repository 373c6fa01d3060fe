"""What every command prints the kubectl way: the name printer's dry-run suffixes and the
`Error from server (Reason): message` form of an apiserver refusal."""

from __future__ import annotations

from kruise.kube.errors import ApiError

DRY_RUN_SUFFIX = {"none": "", "client": " (dry run)", "server": " (server dry run)"}


def api_error_text(err: ApiError) -> str:
    """kubectl's `Error from server (Reason): message`; a transport failure (code 0) as is."""
    if err.code == 0:
        return err.message
    return f"Error from server ({err.reason or 'Unknown'}): {err.message}"


def error_line(text: str) -> str:
    """Apiserver answers are already `Error from server (...)`; anything else gets `error: `."""
    return f"{text}\n" if text.startswith("Error from server") else f"error: {text}\n"
