"""The Advanced DaemonSet controller: one daemon pod per eligible node, rolled out per the update strategy."""

from kruise.manager.cachefields import WORKLOAD
from kruise.manager.context import ControllerSetup
from kruise.manager.controllers.daemonset.controller import NAME, build

SETUP = ControllerSetup(NAME, build, kinds=("DaemonSet.apps.kruise.io",), pod_fields=WORKLOAD)
