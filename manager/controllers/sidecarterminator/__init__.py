"""The SidecarTerminator controller: stops the sidecars of a Job-like pod once its main containers are
done, so the pod can complete (feature gate SidecarTerminator, alpha, off by default, as upstream).

`controller.py` wires the pod informer and the workqueue; `reconciler.py` holds one pass; the rules
(which pods, which containers, the ContainerRecreateRequest, the image swap on virtual-kubelet
nodes, the terminal status) are `kruise.control.sidecarterminator.termination`.
"""

from kruise.api import features
from kruise.manager.cachefields import POD_META, POD_RUNNING
from kruise.manager.context import ControllerSetup
from kruise.manager.controllers.sidecarterminator.controller import NAME, build

SETUP = ControllerSetup(
    NAME,
    build,
    gate=features.SIDECAR_TERMINATOR,
    pod_fields=(*POD_META, *POD_RUNNING, "spec.containers", "spec.initContainers", "spec.restartPolicy"),
)
