"""Advanced StatefulSet at scale: 0 -> N pods (Parallel), then an in-place update of all N.

Same machinery and last line as the CloneSet benchmark (`benchmarks.workloads`); the set is defaulted
as kruise-webhook would, and its template carries the gates the webhook and the in-place policy need
(`KruisePodReady`, `InPlaceUpdateReady`). Run: `.venv/bin/python -m benchmarks statefulset --pods 200`.
"""

from __future__ import annotations

import sys

from benchmarks import workloads
from benchmarks.workloads import IMAGE, NAME, NAMESPACE, Obj, Workload, status_of
from kruise.api import statefulset as api
from kruise.api.keys import CONDITION_INPLACE_UPDATE_READY, CONDITION_KRUISE_POD_READY
from kruise.kube.resources import ADVANCED_STATEFULSETS
from kruise.manager.controllers import statefulset


def manifest(replicas: int) -> Obj:
    body = {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": NAME, "namespace": NAMESPACE},
        "spec": {
            "replicas": replicas,
            "serviceName": NAME,
            # ordered creation would time readiness one pod at a time; Parallel compares with CloneSet
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": NAME}},
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": "20%"},
            },
            "template": {
                "metadata": {"labels": {"app": NAME}},
                "spec": {
                    "containers": [{"name": "app", "image": IMAGE}],
                    "readinessGates": [
                        {"conditionType": CONDITION_INPLACE_UPDATE_READY},
                        {"conditionType": CONDITION_KRUISE_POD_READY},
                    ],
                },
            },
        },
    }
    model = api.StatefulSet.model_validate(body)
    api.set_defaults(model)
    return model.model_dump(by_alias=True, exclude_none=True)


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


WORKLOAD = Workload("StatefulSet", ADVANCED_STATEFULSETS, statefulset.SETUP, manifest, scaled, updated)


def main(argv: list[str] | None = None) -> None:
    workloads.main(WORKLOAD, argv, __doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
