"""The PodUnavailableBudget controller: keeps each PUB's status true so kruise-webhook can decide.

`controller.py` wires the informers and the workqueue; `reconciler.py` computes and writes a PUB's
status; `workloads.py` finds the pods a PUB covers and how many it expects.
"""

from kruise.manager.cachefields import WORKLOAD
from kruise.manager.context import ControllerSetup
from kruise.manager.controllers.podunavailablebudget.controller import NAME, build

SETUP = ControllerSetup(NAME, build, kinds=("PodUnavailableBudget.policy.kruise.io",), pod_fields=WORKLOAD)
