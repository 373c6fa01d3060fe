"""The SidecarSet controller: status of the pods a SidecarSet was injected into, and the in-place rollout
of a changed sidecar image into them (cold upgrade). Wiring in `controller`, one pass in `reconciler`."""

from kruise.manager.cachefields import WORKLOAD
from kruise.manager.context import ControllerSetup
from kruise.manager.controllers.sidecarset.controller import NAME, build

SETUP = ControllerSetup(NAME, build, kinds=("SidecarSet.apps.kruise.io",), pod_fields=WORKLOAD)
