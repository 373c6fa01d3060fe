"""The EphemeralJob controller: adds the job's ephemeral containers to the pods it selects.

Each pass keeps the `apps.kruise.io/ephemeralcontainers-cleanup` finalizer on the job, counts the
selected pods' ephemeral container states into its status, and adds the template's containers
through `pods/ephemeralcontainers` to the next pods, `parallelism` at a time. A finished job is
deleted `ttlSecondsAfterFinished` (default 1800) later. No feature gate, as upstream.

`controller.py` wires the informers and the workqueue; `reconciler.py` holds one pass; the rules
are `kruise.control.ephemeraljob.injection`.
"""

from kruise.manager.cachefields import POD_EPHEMERAL, WORKLOAD
from kruise.manager.context import ControllerSetup
from kruise.manager.controllers.ephemeraljob.controller import NAME, build

SETUP = ControllerSetup(
    NAME, build, kinds=("EphemeralJob.apps.kruise.io",), pod_fields=(*WORKLOAD, *POD_EPHEMERAL)
)
