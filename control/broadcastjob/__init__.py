"""BroadcastJob logic without I/O: node fitness, the job's pods, and the reconcile plan."""

from kruise.control.broadcastjob.plan import plan_reconcile

__all__ = ["plan_reconcile"]
