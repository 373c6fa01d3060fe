"""The NodeImage controller: one NodeImage per Ready node, named after it, carrying its labels.

`controller.py` wires the informers and the workqueue; `reconciler.py` holds the per-node logic.
"""

from kruise.api import features
from kruise.manager.context import ControllerSetup
from kruise.manager.controllers.nodeimage.controller import NAME, build

SETUP = ControllerSetup(NAME, build, gate=features.KRUISE_DAEMON, kinds=("NodeImage.apps.kruise.io",))
