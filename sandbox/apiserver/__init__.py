"""The API emulator: an HTTP server that speaks the Kubernetes REST API.

`ApiServer` is the entry point; see docs/sandbox.md ("API emulator") for what it implements and
where it deliberately simplifies.
"""

from kruise.sandbox.apiserver.server import ApiServer

__all__ = ["ApiServer"]
