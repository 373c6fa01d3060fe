"""`kubectl kruise`: the kubectl plugin for OpenKruise workloads (kruise-tools' command set).

`rollout status|pause|resume|restart|history|undo` and `scaledown`; see docs/kubectl-kruise.md.
"""

from kruise.cli.kubectl_kruise.app import main

__all__ = ["main"]
