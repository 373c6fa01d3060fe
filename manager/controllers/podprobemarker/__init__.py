"""The PodProbeMarker controller: puts each marker's probes into the NodePodProbe of every node that
runs a matching pod (active, Initialized, bound), counts those pods in `status.matchedPods`, and on
deletion takes the probes out again before releasing its `kruise.io/node-pod-probe-cleanup`
finalizer. Gate PodProbeMarkerGate, as upstream (it is forced off with KruiseDaemon).

`controller.py` wires the informers and the workqueue; `reconciler.py` holds one pass.
"""

from kruise.api import features
from kruise.manager.cachefields import POD_META, POD_RUNNING
from kruise.manager.context import ControllerSetup
from kruise.manager.controllers.podprobemarker.controller import NAME, build

SETUP = ControllerSetup(
    NAME,
    build,
    gate=features.POD_PROBE_MARKER_GATE,
    kinds=("PodProbeMarker.apps.kruise.io",),
    pod_fields=(*POD_META, *POD_RUNNING, "spec.containers"),
)
