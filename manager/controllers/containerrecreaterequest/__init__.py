"""The ContainerRecreateRequest controller: the manager's half of a CRR (kruise-daemon kills containers).

`controller.py` wires the informers and the workqueue; `reconciler.py` holds the per-request rules
(completion, unready acquisition and release, the `active` label, TTL deletion).
"""

from kruise.api import features
from kruise.manager.cachefields import POD_META, POD_RUNNING
from kruise.manager.context import ControllerSetup
from kruise.manager.controllers.containerrecreaterequest.controller import NAME, build

SETUP = ControllerSetup(
    NAME,
    build,
    gate=features.KRUISE_DAEMON,
    kinds=("ContainerRecreateRequest.apps.kruise.io",),
    pod_fields=(*POD_META, *POD_RUNNING, "spec.containers"),
)
