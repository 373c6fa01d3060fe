"""CloneSet at scale: 0 -> N pods, then an in-place update of all N, timed end to end.

The machinery (sandbox, manager client at QPS 20 / burst 30, write counting, the machine-readable
last line `writes_per_pod_scale=<x> writes_per_pod_update=<y> scale_ready_s=<t1> update_ready_s=<t2>`)
is shared with the other pod-creating workloads: `benchmarks.workloads`.

Run on demand: `.venv/bin/python -m benchmarks cloneset --pods 200` or
`.venv/bin/python -m benchmarks.bench_cloneset --pods 1000 --qps 20 --burst 30`.
"""

from __future__ import annotations

import sys

from benchmarks import workloads
from benchmarks.workloads import IMAGE, NAME, NAMESPACE, Obj, Workload, status_of
from kruise.api.keys import CONDITION_KRUISE_POD_READY
from kruise.kube.resources import CLONESETS
from kruise.manager.controllers import cloneset


def manifest(replicas: int) -> Obj:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": NAME, "namespace": NAMESPACE},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": NAME}},
            "updateStrategy": {"type": "InPlaceIfPossible", "maxUnavailable": "20%"},
            "template": {
                "metadata": {"labels": {"app": NAME}},
                # kruise-webhook adds this gate to every pod a kruise workload creates; the sandbox
                # runs without kruise, so the template carries it and the pods come out the same
                "spec": {
                    "containers": [{"name": "app", "image": IMAGE}],
                    "readinessGates": [{"conditionType": CONDITION_KRUISE_POD_READY}],
                },
            },
        },
    }


def scaled(obj: Obj, replicas: int) -> bool:
    s = status_of(obj)
    return s.get("readyReplicas") == replicas and s.get("availableReplicas") == replicas


def updated(obj: Obj, replicas: int, generation: int) -> bool:
    s = status_of(obj)
    return (
        s.get("observedGeneration") == generation
        and s.get("updatedReadyReplicas") == replicas
        and s.get("currentRevision") == s.get("updateRevision")
    )


WORKLOAD = Workload("CloneSet", CLONESETS, cloneset.SETUP, manifest, scaled, updated)


def main(argv: list[str] | None = None) -> None:
    workloads.main(WORKLOAD, argv, __doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
