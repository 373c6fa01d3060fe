"""The container-launch-priority controller: releases barrier keys so containers start in order.

kruise-webhook gave every container of an ordered pod an env var read from ConfigMap
`<pod>-barrier`, key `p_<priority>`; the kubelet cannot start a container until its key exists.
This controller creates the ConfigMap (owned by the pod), adds the key of the highest pending
priority, waits until those containers are Ready, then the next — and finally marks the pod
`apps.kruise.io/container-launch-priority-completed: "true"` so it is never looked at again.

`controller.py` wires the pod and ConfigMap informers; `reconciler.py` holds the per-pod step.
"""

from kruise.manager.cachefields import POD_META
from kruise.manager.context import ControllerSetup
from kruise.manager.controllers.containerlaunchpriority.controller import NAME, build

SETUP = ControllerSetup(
    NAME,
    build,
    pod_fields=(
        *POD_META,
        "spec.containers",
        "status.conditions",
        "status.containerStatuses.name",
        "status.containerStatuses.ready",
    ),
)
