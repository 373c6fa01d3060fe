"""The NodePodProbe controller: one NodePodProbe per node (created with it, deleted with it), pod
entries of gone or replaced pods pruned, and the probe results kruise-daemon writes into its status
carried into each pod: the probe's `podConditionType` condition and the marker policy's labels and
annotations.

Upstream runs it under PodProbeMarkerGate and KruiseDaemon; a ControllerSetup holds one gate, and
PodProbeMarkerGate is forced off whenever KruiseDaemon is (`kruise.api.features`), so gating on it
alone is the same thing — as the ImagePullJob controller does with ImagePullJobGate.

`controller.py` wires the informers and the workqueue; `reconciler.py` holds one pass over a node.
"""

from kruise.api import features
from kruise.manager.cachefields import POD_META, POD_RUNNING
from kruise.manager.context import ControllerSetup
from kruise.manager.controllers.nodepodprobe.controller import NAME, build

SETUP = ControllerSetup(
    NAME,
    build,
    gate=features.POD_PROBE_MARKER_GATE,
    kinds=("NodePodProbe.apps.kruise.io",),
    pod_fields=(*POD_META, *POD_RUNNING, "spec.containers"),
)
