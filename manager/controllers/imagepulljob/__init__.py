"""The ImagePullJob controller: spreads a job's image over the target nodes' NodeImages.

Each pass reads every target NodeImage from the cache: nodes whose NodeImage carries the job's tag
(owner reference + version) are synced, and their status says pulling, succeeded or failed; up to
`parallelism` minus the active ones get the tag added next (a compare-and-swap PUT of the NodeImage,
so two jobs adding tags to one node never lose each other's). `Always` jobs complete when every
target node finished (or at `activeDeadlineSeconds`) and are deleted `ttlSecondsAfterFinished` later;
`Never` jobs keep adding new nodes. The `apps.kruise.io/deletion-protection` finalizer the webhook
puts on every job is taken off once the job finished or is being deleted.

`controller.py` wires the informers and the workqueue; `reconciler.py` holds one pass over a job.
"""

from kruise.api import features
from kruise.manager.cachefields import POD_META, POD_RUNNING
from kruise.manager.context import ControllerSetup
from kruise.manager.controllers.imagepulljob.controller import NAME, build

SETUP = ControllerSetup(
    NAME,
    build,
    gate=features.IMAGE_PULL_JOB_GATE,
    kinds=("ImagePullJob.apps.kruise.io",),
    pod_fields=(*POD_META, *POD_RUNNING),
)
