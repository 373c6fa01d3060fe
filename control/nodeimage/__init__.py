"""NodeImage planning without I/O: `cleanup` (spec pruning, status timeouts) and `modes` (the same pruning
for a v1alpha1 reader that keeps v1beta1 pull secret modes).
"""

from kruise.control.nodeimage.cleanup import plan_status
from kruise.control.nodeimage.modes import plan_spec

__all__ = ["plan_spec", "plan_status"]
