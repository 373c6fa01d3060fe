"""The BroadcastJob controller: one pod of the job's template on every eligible node."""

from kruise.manager.cachefields import WORKLOAD
from kruise.manager.context import ControllerSetup
from kruise.manager.controllers.broadcastjob.controller import NAME, build

SETUP = ControllerSetup(NAME, build, kinds=("BroadcastJob.apps.kruise.io",), pod_fields=WORKLOAD)
