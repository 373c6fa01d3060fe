"""The Advanced StatefulSet controller: pods with stable identity and storage, scaled in ordinal
order (or in parallel) and rolled to new revisions by recreation or in place."""

from kruise.manager.cachefields import WORKLOAD
from kruise.manager.context import ControllerSetup
from kruise.manager.controllers.statefulset.controller import NAME, build

SETUP = ControllerSetup(NAME, build, kinds=("StatefulSet.apps.kruise.io",), pod_fields=WORKLOAD)
