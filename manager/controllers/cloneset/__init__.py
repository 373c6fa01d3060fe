"""The CloneSet controller: pods created, scaled and updated (in place where possible) per CloneSet."""

from kruise.manager.cachefields import WORKLOAD
from kruise.manager.context import ControllerSetup
from kruise.manager.controllers.cloneset.controller import NAME, build

SETUP = ControllerSetup(NAME, build, kinds=("CloneSet.apps.kruise.io",), pod_fields=WORKLOAD)
