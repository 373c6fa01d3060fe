"""The ResourceDistribution controller: copies a Secret or ConfigMap into target namespaces.

Each pass writes the resource into every target namespace (created, or updated when its content
differs), deletes the copies it controls in namespaces that stopped being targets, and reports
desired/succeeded/failed and six conditions (a same-named object it does not control is
`ConflictOccurred`; a listed namespace that does not exist is `NamespaceNotExists`). Copies are
controlled by the distribution, so deleting it garbage-collects them. Gate ResourceDistributionGate.

`controller.py` wires the informers and the workqueue; `reconciler.py` holds one pass.
"""

from kruise.api import features
from kruise.manager.context import ControllerSetup
from kruise.manager.controllers.resourcedistribution.controller import NAME, build

SETUP = ControllerSetup(
    NAME,
    build,
    gate=features.RESOURCE_DISTRIBUTION_GATE,
    kinds=("ResourceDistribution.apps.kruise.io",),
)
