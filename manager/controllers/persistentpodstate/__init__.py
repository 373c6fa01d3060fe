"""The PersistentPodState controller: records where each StatefulSet pod ran (node, topology labels,
kept annotations) so the pod webhook can steer a recreated pod of the same name back there.

It also keeps the PersistentPodState that a StatefulSet asks for through the
`kruise.io/auto-generate-persistent-pod-state` annotations. No feature gate, as upstream 1.9 (the
controller runs whenever the kind is served).

`controller.py` wires the informers and the workqueue; `reconciler.py` holds one pass.
"""

from kruise.manager.cachefields import WORKLOAD
from kruise.manager.context import ControllerSetup
from kruise.manager.controllers.persistentpodstate.controller import NAME, build

SETUP = ControllerSetup(NAME, build, kinds=("PersistentPodState.apps.kruise.io",), pod_fields=WORKLOAD)
