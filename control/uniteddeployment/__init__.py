"""UnitedDeployment logic without I/O: the replica split, child workloads per subset, status."""

from kruise.control.uniteddeployment.plan import plan_children
from kruise.control.uniteddeployment.revision import plan_history

__all__ = ["plan_children", "plan_history"]
