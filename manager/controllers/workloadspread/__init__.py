"""The WorkloadSpread controller: recomputes each WorkloadSpread's subset status from the pods of its
target workload (the webhook only books creations and deletions in it) and writes
`controller.kubernetes.io/pod-deletion-cost` on those pods so a scale-in removes over-quota pods and
later subsets first. Gate WorkloadSpread, as upstream.

`controller.py` wires the informers and the workqueue; `reconciler.py` holds one pass; the rules are
in `kruise.control.workloadspread`.
"""

from kruise.api import features
from kruise.manager.cachefields import WORKLOAD
from kruise.manager.context import ControllerSetup
from kruise.manager.controllers.workloadspread.controller import NAME, build

SETUP = ControllerSetup(
    NAME, build, gate=features.WORKLOAD_SPREAD, kinds=("WorkloadSpread.apps.kruise.io",), pod_fields=WORKLOAD
)
