"""The ImageListPullJob controller: one ImagePullJob per listed image, and their statuses added up.

Each pass creates an ImagePullJob (owned, `<list job>-<random>`, the list job's template plus the
image) for every image without one, replaces jobs built from an older template, deletes jobs of
images that left the list, and writes desired/active/completed/succeeded/failedImageStatuses. A list
job that is not `Never` completes when every image completed and is deleted
`ttlSecondsAfterFinished` later. The ImagePullJob controller does the pulling (same gate).

`controller.py` wires the informers and the workqueue; `reconciler.py` holds one pass.
"""

from kruise.api import features
from kruise.manager.context import ControllerSetup
from kruise.manager.controllers.imagelistpulljob.controller import NAME, build

SETUP = ControllerSetup(
    NAME, build, gate=features.IMAGE_PULL_JOB_GATE, kinds=("ImageListPullJob.apps.kruise.io",)
)
