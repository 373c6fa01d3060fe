"""What each conversion maps where, that client edits win over stashed data, and the errors."""

from __future__ import annotations

import json

import pytest

from kruise.api.conversion import STASH_ANNOTATION, ConversionError, convert

G = "apps.kruise.io"


def obj(kind: str, version: str, spec: dict | None = None, **meta: object) -> dict:
    out: dict = {"apiVersion": f"{G}/{version}", "kind": kind, "metadata": {"name": "x", **meta}}
    if spec is not None:
        out["spec"] = spec
    return out


def stash_of(o: dict) -> dict:
    return json.loads(o["metadata"]["annotations"][STASH_ANNOTATION])


def test_daemonset_progressive_annotation_becomes_partitioned_scaling() -> None:
    alpha = obj(
        "DaemonSet",
        "v1alpha1",
        {"updateStrategy": {"rollingUpdate": {"partition": "30%"}}},
        annotations={"daemonset.kruise.io/progressive-create-pod": "true"},
    )
    alpha["status"] = {"daemonSetHash": "abc"}
    beta = convert(alpha, "v1beta1")
    assert beta["spec"]["scaleStrategy"] == {"partitionedScaling": True}
    assert beta["spec"]["updateStrategy"]["rollingUpdate"]["partition"] == "30%"
    assert "annotations" not in beta["metadata"]
    assert beta["status"] == {"updateRevision": "abc"}


def test_daemonset_surging_is_standard_in_v1beta1_and_comes_back() -> None:
    alpha = obj(
        "DaemonSet", "v1alpha1", {"updateStrategy": {"rollingUpdate": {"rollingUpdateType": "Surging"}}}
    )
    beta = convert(alpha, "v1beta1")
    assert beta["spec"]["updateStrategy"]["rollingUpdate"]["rollingUpdateType"] == "Standard"
    assert convert(beta, "v1alpha1") == alpha


def test_daemonset_edit_in_the_other_version_wins_over_the_stash() -> None:
    alpha = obj(
        "DaemonSet", "v1alpha1", {"updateStrategy": {"rollingUpdate": {"rollingUpdateType": "Surging"}}}
    )
    beta = convert(alpha, "v1beta1")
    beta["spec"]["updateStrategy"]["rollingUpdate"]["rollingUpdateType"] = "InPlaceIfPossible"
    back = convert(beta, "v1alpha1")
    assert back["spec"]["updateStrategy"]["rollingUpdate"]["rollingUpdateType"] == "InPlaceIfPossible"
    assert "annotations" not in back["metadata"]


def test_sidecarset_namespace_and_custom_version() -> None:
    alpha = obj(
        "SidecarSet",
        "v1alpha1",
        {"namespace": "demo"},
        labels={"apps.kruise.io/sidecarset-custom-version": "v2"},
    )
    beta = convert(alpha, "v1beta1")
    assert beta["spec"] == {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "demo"}},
        "customVersion": "v2",
    }
    assert "labels" not in beta["metadata"]
    down = convert(obj("SidecarSet", "v1beta1", {"customVersion": "v3"}), "v1alpha1")
    assert down["metadata"]["labels"] == {"apps.kruise.io/sidecarset-custom-version": "v3"}
    assert down["spec"] == {}


def test_advancedcronjob_image_list_pull_job_template_has_the_same_place_in_both_versions() -> None:
    """v1alpha1 is the served version here, so it carries the 1.9 ImageListPullJob template too."""
    template = {"imageListPullJobTemplate": {"spec": {"images": ["nginx"]}}}
    beta = obj("AdvancedCronJob", "v1beta1", {"schedule": "* * * * *", "template": template})
    alpha = convert(beta, "v1alpha1")
    assert alpha == {**beta, "apiVersion": f"{G}/v1alpha1"}
    assert convert(alpha, f"{G}/v1beta1") == beta


def test_broadcastjob_only_changes_api_version() -> None:
    alpha = obj("BroadcastJob", "v1alpha1", {"parallelism": 2})
    assert convert(alpha, "v1beta1") == {**alpha, "apiVersion": f"{G}/v1beta1"}


@pytest.mark.parametrize(("disable", "enable"), [(None, True), (False, True), (True, None)])
def test_cloneset_pvc_reuse_is_negated(disable: bool | None, enable: bool | None) -> None:
    scale = {} if disable is None else {"disablePVCReuse": disable}
    beta = convert(obj("CloneSet", "v1alpha1", {"scaleStrategy": scale}), "v1beta1")
    assert beta["spec"].get("scaleStrategy", {}).get("enablePVCReuse") is enable


def test_cloneset_update_strategy_and_predownload_annotations() -> None:
    alpha = obj(
        "CloneSet",
        "v1alpha1",
        {
            "updateStrategy": {
                "type": "InPlaceIfPossible",
                "partition": 2,
                "inPlaceUpdateStrategy": {"gracePeriodSeconds": 5},
            }
        },
        labels={"apps.kruise.io/cloneset-scaling-exclude-preparing-delete": "true"},
        annotations={
            "apps.kruise.io/image-predownload-parallelism": "10",
            "apps.kruise.io/image-predownload-timeout-seconds": "600",
            "apps.kruise.io/image-predownload-min-updated-ready-pods": "soon",
        },
    )
    beta = convert(alpha, "v1beta1")
    assert beta["spec"]["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {
            "partition": 2,
            "podUpdatePolicy": "InPlaceIfPossible",
            "inPlaceUpdateStrategy": {
                "gracePeriodSeconds": 5,
                "imagePreDownloadParallelism": 10,
                "imagePreDownloadTimeoutSeconds": 600,
            },
        },
    }
    assert beta["spec"]["scaleStrategy"] == {"enablePVCReuse": True, "excludePreparingDelete": True}
    # the label stays (selectors see the same labels); the unparsable annotation stays an annotation
    assert beta["metadata"]["labels"] == alpha["metadata"]["labels"]
    assert beta["metadata"]["annotations"] == {
        "apps.kruise.io/image-predownload-min-updated-ready-pods": "soon"
    }
    assert convert(beta, "v1alpha1") == alpha


def test_cloneset_v1beta1_on_delete_and_plain_rolling_update() -> None:
    on_delete = convert(obj("CloneSet", "v1beta1", {"updateStrategy": {"type": "OnDelete"}}), "v1alpha1")
    assert on_delete["spec"]["updateStrategy"] == {"type": "OnDelete"}
    assert on_delete["spec"]["scaleStrategy"] == {"disablePVCReuse": True}
    rolling = convert(obj("CloneSet", "v1beta1", {"updateStrategy": {"type": "RollingUpdate"}}), "v1alpha1")
    assert rolling["spec"]["updateStrategy"] == {"type": "ReCreate"}


@pytest.mark.parametrize(
    ("source", "target", "field", "rule"),
    [
        (
            obj("CloneSet", "v1alpha1", {"scaleStrategy": {"disablePVCReuse": "yes"}}),
            "v1beta1",
            "spec.scaleStrategy.disablePVCReuse",
            "must be a boolean",
        ),
        (
            obj(
                "CloneSet",
                "v1beta1",
                {
                    "updateStrategy": {
                        "rollingUpdate": {"inPlaceUpdateStrategy": {"imagePreDownloadTimeoutSeconds": [1]}}
                    }
                },
            ),
            "v1alpha1",
            "spec.updateStrategy.rollingUpdate.inPlaceUpdateStrategy.imagePreDownloadTimeoutSeconds",
            "must be an integer or a string",
        ),
        (
            obj("DaemonSet", "v1beta1", {"scaleStrategy": "on"}),
            "v1alpha1",
            "spec.scaleStrategy",
            "must be an object",
        ),
        (obj("SidecarSet", "v1alpha1", {"namespace": 3}), "v1beta1", "spec.namespace", "must be a string"),
        (obj("EphemeralJob", "v1alpha1", {}), "v1beta1", "kind", "has no conversion"),
        (obj("CloneSet", "v9", {}), "v1beta1", "apiVersion", "is not one of"),
        (obj("CloneSet", "v1alpha1", {}), "v2", "desiredAPIVersion", "is not one of"),
        (obj("CloneSet", "v1alpha1", {}), "policy.kruise.io/v1beta1", "desiredAPIVersion", "cannot convert"),
        ({"kind": "CloneSet"}, "v1beta1", "apiVersion", "must be group/version"),
        (
            obj("CloneSet", "v1alpha1", {}, annotations={STASH_ANNOTATION: "{"}),
            "v1beta1",
            f"metadata.annotations[{STASH_ANNOTATION}]",
            "is not valid JSON",
        ),
        (
            obj("CloneSet", "v1alpha1", {}, annotations={STASH_ANNOTATION: "[]"}),
            "v1beta1",
            f"metadata.annotations[{STASH_ANNOTATION}]",
            "must be an object",
        ),
    ],
)
def test_errors_name_the_field(source: dict, target: str, field: str, rule: str) -> None:
    with pytest.raises(ConversionError) as err:
        convert(source, target)
    assert err.value.field == field
    assert rule in str(err.value)


def test_same_version_is_a_copy() -> None:
    alpha = obj("CloneSet", "v1alpha1", {"replicas": 1})
    same = convert(alpha, f"{G}/v1alpha1")
    assert same == alpha and same is not alpha
