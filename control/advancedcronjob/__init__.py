"""AdvancedCronJob logic without I/O: schedule arithmetic, the due run, children and the reconcile plan."""

from kruise.control.advancedcronjob.plan import (
    Deletion,
    DeletionReason,
    Outcome,
    Plan,
    decide_concurrency,
    plan_reconcile,
    template_kind,
)

__all__ = [
    "Deletion",
    "DeletionReason",
    "Outcome",
    "Plan",
    "decide_concurrency",
    "plan_reconcile",
    "template_kind",
]
