"""Advanced DaemonSet at scale: one pod on each of N simulated nodes, then an in-place update of all N.

Same machinery and last line as the CloneSet benchmark (`benchmarks.workloads`); `--pods N` starts
the sandbox with N nodes. The set is defaulted as kruise-webhook would; its template carries the
`KruisePodReady` gate the webhook adds (the controller adds `InPlaceUpdateReady` itself for
`InPlaceIfPossible`). Run: `.venv/bin/python -m benchmarks daemonset --pods 100`.
"""

from __future__ import annotations

import sys

from benchmarks import workloads
from benchmarks.workloads import IMAGE, NAME, NAMESPACE, Obj, Workload, status_of
from kruise.api import daemonset as api
from kruise.api.keys import CONDITION_KRUISE_POD_READY
from kruise.kube.resources import ADVANCED_DAEMONSETS
from kruise.manager.controllers import daemonset

COUNTERS = ("desiredNumberScheduled", "currentNumberScheduled", "numberReady", "numberAvailable")


def manifest(nodes: int) -> Obj:
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "DaemonSet",
        "metadata": {"name": NAME, "namespace": NAMESPACE},
        "spec": {
            "selector": {"matchLabels": {"app": NAME}},
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": "20%"},
            },
            "template": {
                "metadata": {"labels": {"app": NAME}},
                "spec": {
                    "containers": [{"name": "app", "image": IMAGE}],
                    "readinessGates": [{"conditionType": CONDITION_KRUISE_POD_READY}],
                },
            },
        },
    }
    model = api.DaemonSet.model_validate(body)
    api.set_defaults(model)
    return model.model_dump(by_alias=True, exclude_none=True)


def scaled(obj: Obj, nodes: int) -> bool:
    s = status_of(obj)
    return all(s.get(k) == nodes for k in COUNTERS)


def updated(obj: Obj, nodes: int, generation: int) -> bool:
    s = status_of(obj)
    return (
        s.get("observedGeneration") == generation
        and s.get("updatedNumberScheduled") == nodes
        and all(s.get(k) == nodes for k in COUNTERS)
    )


WORKLOAD = Workload(
    "DaemonSet", ADVANCED_DAEMONSETS, daemonset.SETUP, manifest, scaled, updated, nodes_follow_pods=True,
    scale_phase="0 -> {pods} pods on {pods} nodes",
)  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    workloads.main(WORKLOAD, argv, __doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
