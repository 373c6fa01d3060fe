"""BroadcastJob at scale: one pod on each of N simulated nodes, run to completion (no update phase).

Same machinery and last line as the CloneSet benchmark (`benchmarks.workloads`), with
`writes_per_pod_update=n/a update_ready_s=n/a`; `--pods N` starts the sandbox with N nodes and the
scale phase ends when the job is `completed` with N pods succeeded. The template carries the
`KruisePodReady` gate kruise-webhook adds. Run: `.venv/bin/python -m benchmarks broadcastjob --pods 100`.
"""

from __future__ import annotations

import sys

from benchmarks import workloads
from benchmarks.workloads import IMAGE, NAME, NAMESPACE, Obj, Workload, status_of
from kruise.api import broadcastjob as api
from kruise.api.keys import CONDITION_KRUISE_POD_READY
from kruise.kube.resources import BROADCASTJOBS
from kruise.manager.controllers import broadcastjob


def manifest(nodes: int) -> Obj:
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "BroadcastJob",
        "metadata": {"name": NAME, "namespace": NAMESPACE},
        "spec": {
            "completionPolicy": {"type": "Always"},
            "template": {
                "spec": {
                    "containers": [{"name": "app", "image": IMAGE}],
                    "restartPolicy": "Never",
                    "readinessGates": [{"conditionType": CONDITION_KRUISE_POD_READY}],
                },
            },
        },
    }
    model = api.BroadcastJob.model_validate(body)
    api.set_defaults(model)
    return model.model_dump(by_alias=True, exclude_none=True)


def completed(obj: Obj, nodes: int) -> bool:
    s = status_of(obj)
    return s.get("phase") == "completed" and s.get("succeeded") == nodes


WORKLOAD = Workload(
    "BroadcastJob", BROADCASTJOBS, broadcastjob.SETUP, manifest, completed, None, nodes_follow_pods=True,
    scale_phase="run to completion on {pods} nodes",
)  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    workloads.main(WORKLOAD, argv, __doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
