"""One object of every Kruise kind whose versions differ between the API sets, as a user writes it at
v1alpha1 (the version kruise-py's components talk), with a status a controller might have written.

Fields are chosen where the v1alpha1 ↔ v1beta1 conversion does more than rename apiVersion (CloneSet's
in-place type and disablePVCReuse, DaemonSet's daemonSetHash, SidecarSet's spec.namespace, UnitedDeployment's
subsetReplicas, WorkloadSpread's node-selector terms and condition reasons, PersistentPodState's
topology keys, ResourceDistribution's namespace list), so a lossy round trip shows.
"""

from __future__ import annotations

from typing import Any

NS = "switch"
POD = "crr-target"
TEMPLATE = {
    "metadata": {"labels": {"app": "sw"}},
    "spec": {"containers": [{"name": "main", "image": "nginx:alpine"}]},
}
SELECTOR = {"matchLabels": {"app": "sw"}}
JOB_TEMPLATE = {"spec": {"containers": [{"name": "main", "image": "busybox:1.36"}], "restartPolicy": "Never"}}


def _obj(kind: str, name: str, spec: dict[str, Any], status: dict[str, Any], *, namespaced: bool = True):
    group = "policy.kruise.io" if kind == "PodUnavailableBudget" else "apps.kruise.io"
    meta: dict[str, Any] = {
        "name": name,
        "labels": {"made-on": "1.9", "kind": kind.lower()},
        "annotations": {"note": f"{kind} written on the 1.9 set"},
    }
    if namespaced:
        meta["namespace"] = NS
    return {"apiVersion": f"{group}/v1alpha1", "kind": kind, "metadata": meta, "spec": spec}, status


OBJECTS: list[tuple[dict[str, Any], dict[str, Any]]] = [
    _obj(
        "CloneSet",
        "cs",
        {
            "replicas": 2,
            "selector": SELECTOR,
            "template": TEMPLATE,
            "scaleStrategy": {"disablePVCReuse": True},
            "updateStrategy": {"type": "InPlaceIfPossible", "partition": 1, "maxSurge": 1},
        },
        {
            "replicas": 2,
            "readyReplicas": 1,
            "updatedReplicas": 1,
            "observedGeneration": 1,
            "updateRevision": "r1",
        },
    ),
    _obj(
        "ContainerRecreateRequest",
        "crr",
        {"podName": POD, "containers": [{"name": "main"}], "strategy": {"failurePolicy": "Ignore"}},
        {"phase": "Recreating", "containerRecreateStates": [{"name": "main", "phase": "Recreating"}]},
    ),
    _obj(
        "PodUnavailableBudget",
        "pub",
        {"selector": {"matchLabels": {"app": "pub"}}, "maxUnavailable": 1},
        {
            "unavailableAllowed": 1,
            "currentAvailable": 2,
            "desiredAvailable": 1,
            "totalReplicas": 2,
            "observedGeneration": 1,
        },
    ),
    _obj(
        "UnitedDeployment",
        "ud",
        {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "ud"}},
            "template": {
                "advancedStatefulSetTemplate": {
                    "metadata": {"labels": {"app": "ud"}},
                    "spec": {
                        "selector": {"matchLabels": {"app": "ud"}},
                        "template": {**TEMPLATE, "metadata": {"labels": {"app": "ud"}}},
                    },
                }
            },
            "topology": {
                "subsets": [
                    {
                        "name": "a",
                        "replicas": 1,
                        "nodeSelectorTerm": {
                            "matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]
                        },
                    },
                    {"name": "b"},
                ]
            },
        },
        {"replicas": 2, "readyReplicas": 1, "subsetReplicas": {"a": 1, "b": 1}, "observedGeneration": 1},
    ),
    _obj(
        "PersistentPodState",
        "pps",
        {
            "targetRef": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "sts"},
            "requiredPersistentTopology": {"nodeTopologyKeys": ["kubernetes.io/hostname"]},
            "persistentPodStateRetentionPolicy": "WhenDeleted",
        },
        {"observedGeneration": 1, "podStates": {"sts-0": {"nodeName": "n1"}}},
    ),
    _obj(
        "ResourceDistribution",
        "rd",
        {
            "resource": {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "shared"},
                "data": {"k": "v"},
            },
            "targets": {"includedNamespaces": {"list": [{"name": NS}]}},
        },
        {"desired": 1, "succeeded": 1, "failed": 0, "observedGeneration": 1},
        namespaced=False,
    ),
    _obj(
        "WorkloadSpread",
        "ws",
        {
            "targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "cs"},
            "subsets": [
                {
                    "name": "a",
                    "maxReplicas": 1,
                    "requiredNodeSelectorTerm": {
                        "matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]
                    },
                },
                {"name": "b"},
            ],
        },
        {
            "observedGeneration": 1,
            "subsetStatuses": [
                {
                    "name": "a",
                    "missingReplicas": 0,
                    "conditions": [
                        {
                            "type": "SchedulingFailed",
                            "status": "False",
                            "lastTransitionTime": "2026-01-01T00:00:00Z",
                        }
                    ],
                }
            ],
        },
    ),
    _obj(
        "DaemonSet",
        "ds",
        {
            "selector": SELECTOR,
            "template": TEMPLATE,
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"type": "Standard", "partition": 1},
            },
        },
        {
            "daemonSetHash": "h1",
            "desiredNumberScheduled": 1,
            "currentNumberScheduled": 1,
            "numberMisscheduled": 0,
            "numberReady": 1,
            "updatedNumberScheduled": 1,
            "observedGeneration": 1,
        },
    ),
    _obj(
        "SidecarSet",
        "sidecars",
        {
            "namespace": NS,
            "selector": {"matchLabels": {"app": "sw"}},
            "containers": [{"name": "sidecar", "image": "busybox:1.36", "command": ["sleep", "3600"]}],
        },
        {"matchedPods": 0, "updatedPods": 0, "readyPods": 0, "updatedReadyPods": 0, "latestRevision": "r1"},
        namespaced=False,
    ),
    _obj(
        "BroadcastJob",
        "bcj",
        {"parallelism": 1, "template": JOB_TEMPLATE, "completionPolicy": {"type": "Always"}},
        {"active": 1, "succeeded": 0, "failed": 0, "desired": 1, "phase": "running"},
    ),
    _obj(
        "AdvancedCronJob",
        "acj",
        {"schedule": "*/5 * * * *", "template": {"jobTemplate": {"spec": {"template": JOB_TEMPLATE}}}},
        {"type": "Job"},
    ),
    _obj(
        "ImagePullJob",
        "ipj",
        {"image": "nginx:1.25", "parallelism": 1, "completionPolicy": {"type": "Never"}},
        {"desired": 1, "active": 1, "succeeded": 0, "failed": 0},
    ),
    _obj(
        "ImageListPullJob",
        "ilpj",
        {"images": ["nginx:1.25", "busybox:1.36"], "completionPolicy": {"type": "Never"}},
        {"desired": 2, "active": 2, "completed": 0, "succeeded": 0},
    ),
    _obj(
        "NodeImage",
        "node-a",
        {
            "images": {
                "nginx": {
                    "tags": [{"tag": "1.25", "version": 1, "pullPolicy": {"ttlSecondsAfterFinished": 300}}]
                }
            }
        },
        {"desired": 1, "pulling": 1, "succeeded": 0, "failed": 0, "waiting": 0},
        namespaced=False,
    ),
]
"""(object without status, status to write through /status) per kind."""


PLURALS = {
    "CloneSet": "clonesets",
    "ContainerRecreateRequest": "containerrecreaterequests",
    "PodUnavailableBudget": "podunavailablebudgets",
    "UnitedDeployment": "uniteddeployments",
    "PersistentPodState": "persistentpodstates",
    "ResourceDistribution": "resourcedistributions",
    "WorkloadSpread": "workloadspreads",
    "DaemonSet": "daemonsets",
    "SidecarSet": "sidecarsets",
    "BroadcastJob": "broadcastjobs",
    "AdvancedCronJob": "advancedcronjobs",
    "ImagePullJob": "imagepulljobs",
    "ImageListPullJob": "imagelistpulljobs",
    "NodeImage": "nodeimages",
}
