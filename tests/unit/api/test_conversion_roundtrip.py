"""Round trips through api.conversion are the identity, for generated objects of every covered kind.

Objects are hand-built JSON: the fields each conversion touches (with right values, odd values and
absent) mixed with arbitrary other fields, labels and annotations, so both the mapped paths and the
pass-through are exercised.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kruise.api.conversion import STASH_ANNOTATION, convert, convertible
from tests.unit.api.conftest import load_seed_objects

GROUP = "apps.kruise.io"
POLICY_GROUP = "policy.kruise.io"
KINDS = (
    "DaemonSet",
    "SidecarSet",
    "BroadcastJob",
    "AdvancedCronJob",
    "CloneSet",
    "StatefulSet",
    "ImagePullJob",
    "ImageListPullJob",
    "NodeImage",
    "ContainerRecreateRequest",
    "PodUnavailableBudget",
    "UnitedDeployment",
    "PersistentPodState",
    "ResourceDistribution",
    "WorkloadSpread",
)
GROUPS = {"PodUnavailableBudget": POLICY_GROUP}

names = st.text("abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=8)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**31), 2**31 - 1),
    st.text(max_size=6),
    st.sampled_from(["20%", "1"]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(names, inner, max_size=3)),
    max_leaves=8,
)

label_keys = st.sampled_from(
    [
        "app",
        "apps.kruise.io/sidecarset-custom-version",
        "apps.kruise.io/cloneset-scaling-exclude-preparing-delete",
    ]
)
annotation_keys = st.sampled_from(
    [
        "note",
        "daemonset.kruise.io/progressive-create-pod",
        "apps.kruise.io/image-predownload-parallelism",
        "apps.kruise.io/image-predownload-timeout-seconds",
        "apps.kruise.io/image-predownload-min-updated-ready-pods",
        "crr.apps.kruise.io/sync-container-statuses",
        "crr.apps.kruise.io/unready-acquired",
    ]
)
meta_values = st.sampled_from(
    [
        "true",
        "false",
        "",
        "5",
        "007",
        "20%",
        "abc",
        "-3",
        "99999999999",
        "v2",
        "2024-05-01T10:00:00Z",
        "2024-05-01T12:00:00.5+02:00",
        '[{"name":"app","ready":true,"restartCount":1,"containerID":"containerd://x"}]',
        '[{"name":"app","restartCount":2,"extra":1}]',
        "[1]",
        "DELETE,EVICT",
        "UPDATE, RESIZE,",
    ]
)


def optional(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A dict holding any subset of `fields`."""
    return st.fixed_dictionaries({}, optional=fields)


def with_extra(base: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """`base` plus up to two arbitrary keys no schema has (prefixed ``x-``: a drawn key such as ``images``
    would otherwise stand in for a real field the base left out, with a value of the wrong type)."""
    extra_keys = names.map(lambda name: f"x-{name}")
    return st.tuples(base, st.dictionaries(extra_keys, json_values, max_size=2)).map(
        lambda p: {**p[1], **p[0]}
    )


def metadata() -> st.SearchStrategy[dict[str, Any]]:
    return with_extra(
        st.fixed_dictionaries(
            {"name": names},
            optional={
                "labels": st.dictionaries(label_keys, meta_values, min_size=1, max_size=3),
                "annotations": st.dictionaries(annotation_keys, meta_values, min_size=1, max_size=4),
                "resourceVersion": st.integers(1, 999).map(str),
            },
        )
    )


int_or_string = st.one_of(st.integers(0, 100), st.sampled_from(["20%", "50%", "3"]))
maybe_bool = st.one_of(st.none(), st.booleans())

DAEMONSET = {
    "v1alpha1": optional(
        updateStrategy=optional(
            type=st.sampled_from(["RollingUpdate", "OnDelete"]),
            rollingUpdate=with_extra(
                optional(
                    rollingUpdateType=st.sampled_from(["Standard", "Surging", "InPlaceIfPossible"]),
                    partition=int_or_string,
                    maxUnavailable=int_or_string,
                )
            ),
        ),
        burstReplicas=int_or_string,
    ),
    "v1beta1": optional(
        updateStrategy=optional(
            rollingUpdate=optional(
                rollingUpdateType=st.sampled_from(["Standard", "InPlaceIfPossible"]), partition=int_or_string
            )
        ),
        scaleStrategy=with_extra(optional(partitionedScaling=maybe_bool)),
    ),
}
DAEMONSET_STATUS = {
    "v1alpha1": optional(daemonSetHash=names, numberReady=st.integers(0, 9)),
    "v1beta1": optional(updateRevision=names, numberReady=st.integers(0, 9)),
}

SIDECARSET = {
    "v1alpha1": optional(
        namespace=st.one_of(names, st.just("")),
        namespaceSelector=optional(matchLabels=st.dictionaries(names, names, max_size=2)),
        containers=st.lists(optional(name=names, image=names), max_size=2),
    ),
    "v1beta1": optional(
        customVersion=st.one_of(names, st.just("")),
        namespaceSelector=optional(matchLabels=st.dictionaries(names, names, max_size=2)),
    ),
}

ACJ_TEMPLATE = optional(
    jobTemplate=optional(spec=st.dictionaries(names, json_values, max_size=2)),
    broadcastJobTemplate=optional(spec=st.dictionaries(names, json_values, max_size=2)),
    imageListPullJobTemplate=optional(spec=optional(images=st.lists(names, max_size=2))),
)
ADVANCEDCRONJOB = {
    version: optional(schedule=st.just("*/1 * * * *"), template=ACJ_TEMPLATE)
    for version in ("v1alpha1", "v1beta1")
}

BROADCASTJOB = {
    version: optional(
        parallelism=int_or_string,
        completionPolicy=optional(
            type=st.sampled_from(["Always", "Never"]), ttlSecondsAfterFinished=st.integers(0, 9)
        ),
    )
    for version in ("v1alpha1", "v1beta1")
}

IN_PLACE_ALPHA = optional(gracePeriodSeconds=st.integers(0, 30))
IN_PLACE_BETA = optional(
    gracePeriodSeconds=st.integers(0, 30),
    imagePreDownloadParallelism=int_or_string,
    imagePreDownloadTimeoutSeconds=st.integers(-5, 600),
    imagePreDownloadMinUpdatedReadyPods=st.integers(0, 5),
)
CLONESET = {
    "v1alpha1": optional(
        replicas=st.integers(0, 9),
        scaleStrategy=with_extra(
            optional(
                disablePVCReuse=maybe_bool,
                podsToDelete=st.lists(names, max_size=2),
                maxUnavailable=int_or_string,
            )
        ),
        updateStrategy=with_extra(
            optional(
                type=st.sampled_from(["ReCreate", "InPlaceIfPossible", "InPlaceOnly", "OnDelete"]),
                partition=int_or_string,
                maxSurge=int_or_string,
                paused=st.booleans(),
                inPlaceUpdateStrategy=IN_PLACE_ALPHA,
            )
        ),
    ),
    "v1beta1": optional(
        replicas=st.integers(0, 9),
        scaleStrategy=with_extra(
            optional(
                enablePVCReuse=maybe_bool,
                excludePreparingDelete=maybe_bool,
                podsToDelete=st.lists(names, max_size=2),
            )
        ),
        updateStrategy=with_extra(
            optional(
                type=st.sampled_from(["RollingUpdate", "OnDelete"]),
                rollingUpdate=with_extra(
                    optional(
                        podUpdatePolicy=st.sampled_from(["ReCreate", "InPlaceIfPossible", "InPlaceOnly"]),
                        partition=int_or_string,
                        paused=st.booleans(),
                        inPlaceUpdateStrategy=IN_PLACE_BETA,
                    )
                ),
            )
        ),
    ),
}

STS_ROLLING = optional(
    partition=st.integers(0, 9),
    maxUnavailable=int_or_string,
    podUpdatePolicy=st.sampled_from(["ReCreate", "InPlaceIfPossible"]),
    unorderedUpdate=optional(priorityStrategy=st.dictionaries(names, json_values, max_size=1)),
    minReadySeconds=st.integers(0, 300),
)
STS_ALPHA = optional(
    replicas=st.integers(0, 9),
    serviceName=names,
    podManagementPolicy=st.sampled_from(["OrderedReady", "Parallel"]),
    updateStrategy=optional(type=st.sampled_from(["RollingUpdate", "OnDelete"]), rollingUpdate=STS_ROLLING),
)
STATEFULSET = {
    "v1alpha1": STS_ALPHA,
    "v1beta1": st.tuples(
        STS_ALPHA,
        optional(
            volumeClaimUpdateStrategy=optional(type=st.sampled_from(["OnPodRollingUpdate", "OnDelete"])),
            reserveOrdinals=st.lists(int_or_string, max_size=3),
            lifecycle=optional(preDelete=optional(finalizersHandler=st.lists(names, max_size=1))),
            scaleStrategy=optional(maxUnavailable=int_or_string),
            persistentVolumeClaimRetentionPolicy=optional(
                whenDeleted=st.sampled_from(["Retain", "Delete"]),
                whenScaled=st.sampled_from(["Retain", "Delete"]),
            ),
            ordinals=optional(start=st.integers(0, 5)),
        ),
    ).map(lambda p: {**p[0], **p[1]}),
}
STATEFULSET_STATUS = {
    "v1alpha1": optional(replicas=st.integers(0, 9), updateRevision=names),
    "v1beta1": optional(
        replicas=st.integers(0, 9),
        updatedReadyReplicas=st.integers(0, 9),
        updatedAvailableReplicas=st.integers(0, 9),
        volumeClaims=st.lists(
            optional(volumeClaimName=names, compatibleReplicas=st.integers(0, 3)), max_size=2
        ),
    ),
}

PULL_TEMPLATE = optional(
    parallelism=int_or_string,
    selector=optional(names=st.lists(names, max_size=2)),
    pullPolicy=optional(timeoutSeconds=st.integers(1, 600), backoffLimit=st.integers(0, 3)),
    completionPolicy=optional(type=st.sampled_from(["Always", "Never"])),
    sandboxConfig=optional(labels=st.dictionaries(names, names, max_size=2)),
)
IMAGEPULLJOB = {
    version: st.tuples(PULL_TEMPLATE, optional(image=names)).map(lambda p: {**p[0], **p[1]})
    for version in ("v1alpha1", "v1beta1")
}
IMAGELISTPULLJOB = {
    version: st.tuples(PULL_TEMPLATE, optional(images=st.lists(names, max_size=3))).map(
        lambda p: {**p[0], **p[1]}
    )
    for version in ("v1alpha1", "v1beta1")
}


def node_image(reference: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    image = with_extra(
        optional(
            pullSecrets=st.lists(reference, max_size=2),
            tags=st.lists(optional(tag=names, version=st.integers(0, 3)), max_size=2),
        )
    )
    return optional(images=st.dictionaries(names, image, max_size=2))


NODEIMAGE = {
    "v1alpha1": node_image(optional(namespace=names, name=names)),
    "v1beta1": node_image(optional(namespace=names, name=names, mode=st.sampled_from(["batch", ""]))),
}

CRR_SPEC = optional(
    podName=names,
    containers=st.lists(
        optional(name=names, preStop=optional(exec=optional(command=st.lists(names)))), max_size=2
    ),
    strategy=optional(
        failurePolicy=st.sampled_from(["Fail", "Ignore"]), unreadyGracePeriodSeconds=st.integers(0, 9)
    ),
)
CRR = {version: CRR_SPEC for version in ("v1alpha1", "v1beta1")}
SNAPSHOT_ENTRY = optional(
    name=names,
    ready=st.booleans(),
    restartCount=st.integers(0, 5),
    containerID=st.sampled_from(["", "docker://a"]),
)
# metav1.Condition: type, status and lastTransitionTime are required by the CRD schema, so an object
# without them never reaches a conversion.
CONDITION = with_extra(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["PreRecreateGrace", "Other"]),
            "status": st.sampled_from(["True", "False"]),
            "lastTransitionTime": st.sampled_from(["2024-05-01T10:00:00Z", "2024-05-01T10:00:00.25+01:00"]),
        }
    )
)
CRR_STATUS = {
    "v1alpha1": optional(phase=st.sampled_from(["Pending", "Recreating", "Succeeded"]), message=names),
    "v1beta1": optional(
        phase=st.sampled_from(["Pending", "Recreating", "Succeeded"]),
        containerStatusSnapshot=st.lists(SNAPSHOT_ENTRY, max_size=2),
        conditions=st.lists(CONDITION, max_size=2),
    ),
}

PUB_SPEC = optional(
    selector=optional(matchLabels=st.dictionaries(names, names, max_size=1)),
    maxUnavailable=int_or_string,
    targetRef=optional(apiVersion=st.just("apps/v1"), kind=st.just("Deployment"), name=names),
)
PUB = {
    "v1alpha1": PUB_SPEC,
    "v1beta1": st.tuples(
        PUB_SPEC,
        optional(
            protectOperations=st.lists(st.sampled_from(["DELETE", "UPDATE", "EVICT", "RESIZE"]), max_size=3),
            protectTotalReplicas=st.integers(0, 50),
            ignoredPodSelector=optional(matchLabels=st.dictionaries(names, names, max_size=1)),
        ),
    ).map(lambda p: {**p[0], **p[1]}),
}
PUB_ANNOTATIONS = optional(
    note=names,
    **{
        "kruise.io/pub-protect-operations": st.sampled_from(["DELETE", "UPDATE,EVICT", " RESIZE , ", ""]),
        "pub.kruise.io/protect-total-replicas": st.sampled_from(["3", "0", "+7", ""]),
    },
)

UD_SUBSET_STATUS = with_extra(
    optional(
        name=st.one_of(st.sampled_from(["a", "b", "c"]), st.just("")),
        replicas=st.integers(0, 5),
        readyReplicas=st.integers(0, 5),
        partition=st.integers(0, 5),
        conditions=st.lists(optional(type=st.just("Schedulable"), status=st.just("False")), max_size=1),
    )
)
SUBSET_NAME_COUNTS = st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.integers(0, 5), max_size=3)
UD_STATUS_COMMON = optional(
    replicas=st.integers(0, 9),
    currentRevision=names,
    subsetStatuses=st.lists(UD_SUBSET_STATUS, max_size=3),
    conditions=st.lists(optional(type=st.just("SubsetProvisioned"), status=st.just("True")), max_size=1),
)
UNITEDDEPLOYMENT = {
    version: optional(
        replicas=st.integers(0, 9),
        selector=optional(matchLabels=st.dictionaries(names, names, max_size=1)),
        template=optional(cloneSetTemplate=optional(spec=st.dictionaries(names, json_values, max_size=2))),
        topology=optional(subsets=st.lists(optional(name=names, replicas=int_or_string), max_size=2)),
        updateStrategy=optional(type=st.just("Manual"), manualUpdate=optional(partitions=SUBSET_NAME_COUNTS)),
    )
    for version in ("v1alpha1", "v1beta1")
}
UNITEDDEPLOYMENT_STATUS = {
    "v1alpha1": st.tuples(
        UD_STATUS_COMMON,
        optional(
            subsetReplicas=SUBSET_NAME_COUNTS,
            updateStatus=optional(
                updatedRevision=st.one_of(names, st.just("")), currentPartitions=SUBSET_NAME_COUNTS
            ),
        ),
    ).map(lambda p: {**p[0], **p[1]}),
    "v1beta1": st.tuples(UD_STATUS_COMMON, optional(updatedRevision=st.one_of(names, st.just("")))).map(
        lambda p: {**p[0], **p[1]}
    ),
}


def topology_term(key: str) -> st.SearchStrategy[dict[str, Any]]:
    return with_extra(st.fixed_dictionaries({key: st.lists(names, max_size=2)}))


def persistent_pod_state(key: str) -> st.SearchStrategy[dict[str, Any]]:
    return optional(
        targetRef=optional(apiVersion=st.just("apps/v1"), kind=st.just("StatefulSet"), name=names),
        persistentPodAnnotations=st.lists(optional(key=names), max_size=2),
        requiredPersistentTopology=topology_term(key),
        preferredPersistentTopology=st.lists(
            with_extra(optional(weight=st.integers(0, 100), preference=topology_term(key))), max_size=2
        ),
        persistentPodStateRetentionPolicy=st.sampled_from(["WhenScaled", "WhenDeleted"]),
    )


PERSISTENTPODSTATE = {
    "v1alpha1": persistent_pod_state("nodeTopologyKeys"),
    "v1beta1": persistent_pod_state("keys"),
}
PERSISTENTPODSTATE_STATUS = {
    version: optional(
        observedGeneration=st.integers(0, 9),
        podStates=st.dictionaries(names, optional(nodeName=names, annotations=st.dictionaries(names, names))),
    )
    for version in ("v1alpha1", "v1beta1")
}


def resource_distribution(selector: str) -> st.SearchStrategy[dict[str, Any]]:
    namespaces = optional(list=st.lists(optional(name=names), max_size=2))
    return optional(
        resource=optional(
            apiVersion=st.just("v1"), kind=st.just("Secret"), data=st.dictionaries(names, names)
        ),
        targets=with_extra(
            optional(
                allNamespaces=st.booleans(),
                includedNamespaces=namespaces,
                excludedNamespaces=namespaces,
                **{selector: optional(matchLabels=st.dictionaries(names, names, max_size=1))},
            )
        ),
    )


def resource_distribution_status(failed: str) -> st.SearchStrategy[dict[str, Any]]:
    condition = with_extra(
        optional(
            type=st.sampled_from(["ConflictOccurred", "NamespaceNotExists"]),
            status=st.sampled_from(["True", "False"]),
            reason=names,
            **{failed: st.lists(names, max_size=2)},
        )
    )
    return optional(
        desired=st.integers(0, 9), failed=st.integers(0, 9), conditions=st.lists(condition, max_size=2)
    )


RESOURCEDISTRIBUTION = {
    "v1alpha1": resource_distribution("namespaceLabelSelector"),
    "v1beta1": resource_distribution("namespaceSelector"),
}
RESOURCEDISTRIBUTION_STATUS = {
    "v1alpha1": resource_distribution_status("failedNamespace"),
    "v1beta1": resource_distribution_status("failedNamespaces"),
}


def workload_spread(required: str, preferred: str) -> st.SearchStrategy[dict[str, Any]]:
    subset = with_extra(
        optional(
            name=names,
            maxReplicas=int_or_string,
            tolerations=st.lists(optional(key=names, operator=st.just("Exists")), max_size=1),
            **{
                required: optional(matchExpressions=st.lists(optional(key=names), max_size=1)),
                preferred: st.lists(optional(weight=st.integers(1, 100)), max_size=2),
            },
        )
    )
    return optional(
        targetRef=optional(apiVersion=st.just("apps/v1"), kind=st.just("Deployment"), name=names),
        subsets=st.lists(subset, max_size=3),
        scheduleStrategy=optional(type=st.sampled_from(["Fixed", "Adaptive"])),
    )


def workload_spread_status(condition: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    subset = with_extra(
        optional(
            name=names,
            replicas=st.integers(0, 5),
            missingReplicas=st.integers(-1, 5),
            conditions=st.lists(condition, max_size=2),
        )
    )
    subsets = st.lists(subset, max_size=2)
    return optional(
        observedGeneration=st.integers(0, 9),
        subsetStatuses=subsets,
        versionedSubsetStatuses=st.dictionaries(names, subsets, max_size=2),
    )


WS_CONDITION = {
    "type": st.just("Schedulable"),
    "status": st.sampled_from(["True", "False"]),
    "lastTransitionTime": st.just("2024-05-01T10:00:00Z"),
    "reason": st.sampled_from(["", "Unknown", "Full"]),
    "message": st.sampled_from(["", "m"]),
}
WORKLOADSPREAD = {
    "v1alpha1": workload_spread("requiredNodeSelectorTerm", "preferredNodeSelectorTerms"),
    "v1beta1": workload_spread("requiredNodeSelector", "preferredNodeSelector"),
}
WORKLOADSPREAD_STATUS = {
    "v1alpha1": workload_spread_status(optional(**WS_CONDITION)),
    "v1beta1": workload_spread_status(optional(**WS_CONDITION, observedGeneration=st.integers(0, 9))),
}

SPECS = {
    "StatefulSet": STATEFULSET,
    "ImagePullJob": IMAGEPULLJOB,
    "ImageListPullJob": IMAGELISTPULLJOB,
    "NodeImage": NODEIMAGE,
    "ContainerRecreateRequest": CRR,
    "PodUnavailableBudget": PUB,
    "DaemonSet": DAEMONSET,
    "SidecarSet": SIDECARSET,
    "BroadcastJob": BROADCASTJOB,
    "AdvancedCronJob": ADVANCEDCRONJOB,
    "CloneSet": CLONESET,
    "UnitedDeployment": UNITEDDEPLOYMENT,
    "PersistentPodState": PERSISTENTPODSTATE,
    "ResourceDistribution": RESOURCEDISTRIBUTION,
    "WorkloadSpread": WORKLOADSPREAD,
}
STATUSES = {
    "DaemonSet": DAEMONSET_STATUS,
    "StatefulSet": STATEFULSET_STATUS,
    "ContainerRecreateRequest": CRR_STATUS,
    "UnitedDeployment": UNITEDDEPLOYMENT_STATUS,
    "PersistentPodState": PERSISTENTPODSTATE_STATUS,
    "ResourceDistribution": RESOURCEDISTRIBUTION_STATUS,
    "WorkloadSpread": WORKLOADSPREAD_STATUS,
}


def pub_metadata() -> st.SearchStrategy[dict[str, Any]]:
    """PUB annotations must parse (the v1alpha1 webhook rejects others; conversion fails on them)."""
    return st.tuples(metadata(), st.one_of(st.none(), PUB_ANNOTATIONS)).map(
        lambda p: p[0] if p[1] is None else {**p[0], "annotations": p[1]}
    )


def objects(kind: str, version: str) -> st.SearchStrategy[dict[str, Any]]:
    status = STATUSES.get(kind, {}).get(version, st.dictionaries(names, json_values, max_size=2))
    body = optional(spec=with_extra(SPECS[kind][version]), status=status)
    group = GROUPS.get(kind, GROUP)
    meta = pub_metadata() if kind == "PodUnavailableBudget" else metadata()
    return st.tuples(meta, body).map(
        lambda p: {"apiVersion": f"{group}/{version}", "kind": kind, "metadata": p[0], **p[1]}
    )


OTHER = {"v1alpha1": "v1beta1", "v1beta1": "v1alpha1"}
CASES = [(kind, version) for kind in KINDS for version in ("v1alpha1", "v1beta1")]


@pytest.mark.parametrize(("kind", "version"), CASES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_round_trip_is_identity(kind: str, version: str, data: st.DataObject) -> None:
    obj = data.draw(objects(kind, version))
    original = copy.deepcopy(obj)
    group = GROUPS.get(kind, GROUP)
    there = convert(obj, f"{group}/{OTHER[version]}")
    assert there["apiVersion"] == f"{group}/{OTHER[version]}"
    back = convert(there, version)
    assert back == original
    assert obj == original  # the input is not modified


@pytest.mark.parametrize(("kind", "version"), CASES)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_converting_twice_more_still_returns_the_original(
    kind: str, version: str, data: st.DataObject
) -> None:
    """A stash carried through two full round trips neither grows nor goes stale."""
    obj = data.draw(objects(kind, version))
    there = convert(obj, OTHER[version])
    again = convert(convert(there, version), OTHER[version])
    assert again == there
    assert convert(again, version) == obj


@pytest.mark.parametrize("kind", KINDS)
def test_seed_objects_round_trip(kind: str) -> None:
    group = GROUPS.get(kind, GROUP)
    seeds = [o for o in load_seed_objects() if o["kind"] == kind and o["apiVersion"].startswith(f"{group}/")]
    for obj in seeds:
        version = obj["apiVersion"].split("/")[1]
        assert convert(convert(obj, OTHER[version]), version) == obj


def test_stash_is_absent_when_nothing_is_lost() -> None:
    obj = {
        "apiVersion": f"{GROUP}/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "c"},
        "spec": {"replicas": 2, "updateStrategy": {"type": "InPlaceIfPossible", "partition": 1}},
    }
    beta = convert(obj, "v1beta1")
    assert "annotations" not in beta["metadata"]
    assert STASH_ANNOTATION not in json.dumps(convert(beta, "v1alpha1"))


def test_covered_kinds() -> None:
    assert all(convertible(GROUPS.get(kind, GROUP), kind) for kind in KINDS)
    assert not convertible(GROUP, "EphemeralJob")
