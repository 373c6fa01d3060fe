"""The UnitedDeployment controller: one child workload per topology subset, replicas split between them.

`controller.py` wires the informers and the workqueue; `reconciler.py` holds the per-object pass,
`children.py` reads and writes the child workloads, `adaptive.py` the Adaptive strategy's part.
"""

from kruise.manager.cachefields import WORKLOAD
from kruise.manager.context import ControllerSetup
from kruise.manager.controllers.uniteddeployment.controller import NAME, build

SETUP = ControllerSetup(NAME, build, kinds=("UnitedDeployment.apps.kruise.io",), pod_fields=WORKLOAD)
