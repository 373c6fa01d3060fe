"""Field mappings of the kinds added in the second round: Advanced StatefulSet, the image pull jobs,
NodeImage, ContainerRecreateRequest and PodUnavailableBudget (policy.kruise.io)."""

from __future__ import annotations

import json

import pytest

from kruise.api.conversion import STASH_ANNOTATION, ConversionError, convert

G = "apps.kruise.io"
P = "policy.kruise.io"


def obj(kind: str, version: str, spec: dict | None = None, group: str = G, **meta: object) -> dict:
    out: dict = {"apiVersion": f"{group}/{version}", "kind": kind, "metadata": {"name": "x", **meta}}
    if spec is not None:
        out["spec"] = spec
    return out


def test_statefulset_v1alpha1_reads_unchanged_as_v1beta1() -> None:
    alpha = obj(
        "StatefulSet",
        "v1alpha1",
        {"replicas": 3, "updateStrategy": {"rollingUpdate": {"partition": 1, "unorderedUpdate": {}}}},
    )
    alpha["status"] = {"replicas": 3, "updateRevision": "r1"}
    beta = convert(alpha, "v1beta1")
    assert beta == {**alpha, "apiVersion": f"{G}/v1beta1"}


def test_statefulset_v1beta1_only_fields_leave_v1alpha1_and_come_back() -> None:
    beta = obj(
        "StatefulSet",
        "v1beta1",
        {
            "replicas": 2,
            "reserveOrdinals": [1, "3-5"],
            "ordinals": {"start": 2},
            "scaleStrategy": {"maxUnavailable": "50%"},
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Retain"},
            "volumeClaimUpdateStrategy": {"type": "OnDelete"},
            "lifecycle": {"preDelete": {"labelsHandler": {"a": "b"}}},
        },
    )
    beta["status"] = {"replicas": 2, "updatedReadyReplicas": 1, "volumeClaims": [{"volumeClaimName": "d"}]}
    alpha = convert(beta, "v1alpha1")
    assert alpha["spec"] == {"replicas": 2}
    assert alpha["status"] == {"replicas": 2}
    assert STASH_ANNOTATION in alpha["metadata"]["annotations"]
    assert convert(alpha, "v1beta1") == beta


def test_statefulset_v1alpha1_edit_of_a_shared_field_keeps_the_v1beta1_only_fields() -> None:
    beta = obj("StatefulSet", "v1beta1", {"replicas": 2, "ordinals": {"start": 5}})
    alpha = convert(beta, "v1alpha1")
    alpha["spec"]["replicas"] = 4
    back = convert(alpha, "v1beta1")
    assert back["spec"] == {"replicas": 4, "ordinals": {"start": 5}}


@pytest.mark.parametrize("kind", ["ImagePullJob", "ImageListPullJob"])
def test_image_pull_jobs_only_change_api_version(kind: str) -> None:
    alpha = obj(kind, "v1alpha1", {"image": "nginx", "parallelism": 2, "pullPolicy": {"backoffLimit": 3}})
    assert convert(alpha, "v1beta1") == {**alpha, "apiVersion": f"{G}/v1beta1"}


def test_nodeimage_pull_secret_mode_is_v1beta1_only() -> None:
    beta = obj(
        "NodeImage",
        "v1beta1",
        {
            "images": {
                "nginx": {"pullSecrets": [{"namespace": "d", "name": "s", "mode": "batch"}], "tags": []}
            }
        },
    )
    alpha = convert(beta, "v1alpha1")
    assert alpha["spec"]["images"]["nginx"]["pullSecrets"] == [{"namespace": "d", "name": "s"}]
    assert convert(alpha, "v1beta1") == beta


def test_nodeimage_pull_secrets_must_be_a_list() -> None:
    with pytest.raises(ConversionError) as err:
        convert(obj("NodeImage", "v1beta1", {"images": {"a": {"pullSecrets": "s"}}}), "v1alpha1")
    assert err.value.field == "spec.images[a].pullSecrets"


SNAPSHOT = [{"name": "app", "ready": True, "restartCount": 1, "containerID": "containerd://1"}]


def test_crr_annotations_become_status_and_stay() -> None:
    annotations = {
        "crr.apps.kruise.io/sync-container-statuses": json.dumps(SNAPSHOT),
        "crr.apps.kruise.io/unready-acquired": "2024-05-01T12:00:00+02:00",
    }
    alpha = obj("ContainerRecreateRequest", "v1alpha1", {"podName": "p"}, annotations=annotations)
    alpha["status"] = {"phase": "Recreating"}
    beta = convert(alpha, "v1beta1")
    assert beta["status"]["containerStatusSnapshot"] == SNAPSHOT
    (condition,) = beta["status"]["conditions"]
    assert condition["type"] == "PreRecreateGrace" and condition["status"] == "True"
    assert condition["lastTransitionTime"] == "2024-05-01T10:00:00Z"
    assert (
        beta["metadata"]["annotations"]["crr.apps.kruise.io/unready-acquired"]
        == annotations["crr.apps.kruise.io/unready-acquired"]
    )
    assert convert(beta, "v1alpha1") == alpha


def test_crr_v1beta1_status_becomes_annotations() -> None:
    beta = obj("ContainerRecreateRequest", "v1beta1", {"podName": "p"})
    beta["status"] = {
        "phase": "Recreating",
        "containerStatusSnapshot": [{"name": "app", "ready": False, "restartCount": 0}],
        "conditions": [
            {"type": "PreRecreateGrace", "status": "False", "lastTransitionTime": "2024-01-01T00:00:00Z"},
            {"type": "PreRecreateGrace", "status": "True", "lastTransitionTime": "2024-05-01T10:00:00.5Z"},
        ],
    }
    alpha = convert(beta, "v1alpha1")
    annotations = alpha["metadata"]["annotations"]
    assert annotations["crr.apps.kruise.io/sync-container-statuses"] == (
        '[{"name":"app","ready":false,"restartCount":0}]'
    )
    assert annotations["crr.apps.kruise.io/unready-acquired"] == "2024-05-01T10:00:00Z"
    assert alpha["status"] == {"phase": "Recreating"}
    assert convert(alpha, "v1beta1") == beta


def test_crr_v1beta1_grace_conditions_are_checked_up_to_the_one_used() -> None:
    """A malformed entry before the True PreRecreateGrace condition, or a bad time on it, names its
    index; entries after it are never read."""
    grace = {"type": "PreRecreateGrace", "status": "True", "lastTransitionTime": "2024-05-01T10:00:00Z"}
    beta = obj("ContainerRecreateRequest", "v1beta1", {"podName": "p"})
    beta["status"] = {"conditions": [{"type": "Other", "status": "True"}, "junk", grace]}
    with pytest.raises(ConversionError) as err:
        convert(beta, "v1alpha1")
    assert err.value.field == "status.conditions[1]"
    beta["status"] = {
        "conditions": [{"type": "Other", "status": "True"}, {**grace, "lastTransitionTime": "x"}]
    }
    with pytest.raises(ConversionError) as err:
        convert(beta, "v1alpha1")
    assert err.value.field == "status.conditions[1].lastTransitionTime"
    beta["status"] = {"conditions": [grace, "junk"]}
    alpha = convert(beta, "v1alpha1")
    assert alpha["metadata"]["annotations"]["crr.apps.kruise.io/unready-acquired"] == "2024-05-01T10:00:00Z"


def test_crr_unparseable_annotations_are_not_promoted() -> None:
    annotations = {
        "crr.apps.kruise.io/sync-container-statuses": "[1]",
        "crr.apps.kruise.io/unready-acquired": "x",
    }
    beta = convert(obj("ContainerRecreateRequest", "v1alpha1", {}, annotations=annotations), "v1beta1")
    assert "status" not in beta


def test_pub_annotations_become_spec_and_spec_comes_back_as_annotations() -> None:
    annotations = {
        "kruise.io/pub-protect-operations": "DELETE, EVICT,",
        "pub.kruise.io/protect-total-replicas": "5",
    }
    alpha = obj("PodUnavailableBudget", "v1alpha1", {"maxUnavailable": 1}, group=P, annotations=annotations)
    beta = convert(alpha, f"{P}/v1beta1")
    assert beta["spec"] == {
        "maxUnavailable": 1,
        "protectOperations": ["DELETE", "EVICT"],
        "protectTotalReplicas": 5,
    }
    assert convert(beta, "v1alpha1") == alpha

    fresh = obj(
        "PodUnavailableBudget",
        "v1beta1",
        {"protectOperations": ["UPDATE", "RESIZE"], "ignoredPodSelector": {"matchLabels": {"a": "b"}}},
        group=P,
    )
    down = convert(fresh, "v1alpha1")
    assert down["metadata"]["annotations"]["kruise.io/pub-protect-operations"] == "UPDATE,RESIZE"
    assert "pub.kruise.io/protect-total-replicas" not in down["metadata"]["annotations"]
    assert down["spec"] == {}
    assert convert(down, "v1beta1") == fresh


@pytest.mark.parametrize(
    ("annotations", "field", "rule"),
    [
        ({"kruise.io/pub-protect-operations": "DELETE,KILL"}, "kruise.io/pub-protect-operations", "'KILL'"),
        ({"pub.kruise.io/protect-total-replicas": "many"}, "pub.kruise.io/protect-total-replicas", "int32"),
        (
            {"pub.kruise.io/protect-total-replicas": "4294967296"},
            "pub.kruise.io/protect-total-replicas",
            "int32",
        ),
    ],
)
def test_pub_bad_annotations_fail_naming_them(annotations: dict, field: str, rule: str) -> None:
    alpha = obj("PodUnavailableBudget", "v1alpha1", {}, group=P, annotations=annotations)
    with pytest.raises(ConversionError) as err:
        convert(alpha, "v1beta1")
    assert err.value.field == f"metadata.annotations[{field}]"
    assert rule in str(err.value)
