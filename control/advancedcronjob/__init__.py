"""AdvancedCronJob logic without I/O: schedule arithmetic, the due run, children and the reconcile plan."""

from kruise.control.advancedcronjob.plan import plan_reconcile

__all__ = ["plan_reconcile"]
