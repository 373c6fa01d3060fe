"""Admission at v1beta1 of kinds whose hooks are written for v1alpha1: converted there and back."""

from __future__ import annotations

import copy

import pytest
from webhook_testkit import apply_patch, post, review

from kruise.api.conversion import STASH_ANNOTATION

BETA_CLONESET = {
    "apiVersion": "apps.kruise.io/v1beta1",
    "kind": "CloneSet",
    "metadata": {"name": "demo", "namespace": "default"},
    "spec": {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "demo"}},
        "template": {
            "metadata": {"labels": {"app": "demo"}},
            "spec": {"containers": [{"name": "main", "image": "nginx:alpine"}]},
        },
        "scaleStrategy": {"enablePVCReuse": True},
        "updateStrategy": {
            "type": "RollingUpdate",
            "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible"},
        },
    },
}


def _review(op: str, obj: dict, old: dict | None = None) -> dict:
    return review(
        op, group="apps.kruise.io", version="v1beta1", kind="CloneSet", resource="clonesets", obj=obj, old=old
    )


@pytest.mark.parametrize(
    "path", ["/mutate-apps-kruise-io-cloneset", "/mutate-apps-kruise-io-v1beta1-cloneset"]
)
async def test_v1beta1_cloneset_is_defaulted_in_v1beta1_form(client, path):
    resp = await post(client, path, _review("CREATE", copy.deepcopy(BETA_CLONESET)))
    assert resp["allowed"] is True
    out = apply_patch(BETA_CLONESET, resp)
    strategy = out["spec"]["updateStrategy"]
    assert strategy["type"] == "RollingUpdate"
    assert strategy["rollingUpdate"]["podUpdatePolicy"] == "InPlaceIfPossible"
    assert strategy["rollingUpdate"]["partition"] == 0
    assert strategy["rollingUpdate"]["maxUnavailable"] == "20%"
    assert "partition" not in strategy and "disablePVCReuse" not in out["spec"]["scaleStrategy"]
    assert out["spec"]["scaleStrategy"]["enablePVCReuse"] is True
    assert out["spec"]["revisionHistoryLimit"] == 10
    assert STASH_ANNOTATION not in (out["metadata"].get("annotations") or {})
    again = await post(client, path, _review("CREATE", out))
    assert "patch" not in again  # idempotent: the there-and-back conversion adds nothing


async def test_v1beta1_cloneset_is_validated_through_v1alpha1(client):
    bad = copy.deepcopy(BETA_CLONESET)
    bad["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    resp = await post(client, "/validate-apps-kruise-io-v1beta1-cloneset", _review("CREATE", bad))
    assert resp["allowed"] is False
    assert "spec.template.metadata.labels" in resp["status"]["message"]


@pytest.mark.parametrize(
    ("update_strategy", "message"),
    [
        (
            {"type": "InPlaceIfPossible"},
            'spec.updateStrategy.type: Invalid value: "InPlaceIfPossible": '
            "must be 'RollingUpdate' or 'OnDelete'",
        ),
        (
            {"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "InPlace"}},
            'spec.updateStrategy.rollingUpdate.podUpdatePolicy: Invalid value: "InPlace": '
            "must be 'ReCreate', 'InPlaceIfPossible' or 'InPlaceOnly'",
        ),
    ],
)
async def test_v1beta1_cloneset_values_the_conversion_cannot_carry_are_denied(
    client, update_strategy, message
):
    """Converted as is, they would become a ReCreate CloneSet; upstream's v1beta1 validation denies them."""
    bad = copy.deepcopy(BETA_CLONESET)
    bad["spec"]["updateStrategy"] = update_strategy
    resp = await post(client, "/validate-apps-kruise-io-v1beta1-cloneset", _review("CREATE", bad))
    assert resp["allowed"] is False
    assert resp["status"]["code"] == 422
    assert resp["status"]["message"] == message


async def test_v1beta1_checks_do_not_apply_at_v1alpha1(client):
    alpha = copy.deepcopy(BETA_CLONESET)
    alpha["apiVersion"] = "apps.kruise.io/v1alpha1"
    alpha["spec"]["updateStrategy"] = {"type": "InPlaceIfPossible", "maxUnavailable": "20%", "maxSurge": 0}
    alpha["spec"]["scaleStrategy"] = {}
    body = review(
        "CREATE", group="apps.kruise.io", version="v1alpha1", kind="CloneSet", resource="clonesets", obj=alpha
    )
    resp = await post(client, "/validate-apps-kruise-io-v1alpha1-cloneset", body)
    assert resp["allowed"] is True, resp


async def test_v1beta1_sidecarset_custom_version_and_namespace_selector(client):
    sidecarset = {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "SidecarSet",
        "metadata": {"name": "log"},
        "spec": {
            "selector": {"matchLabels": {"app": "demo"}},
            "customVersion": "v2",
            "containers": [{"name": "log", "image": "busybox"}],
        },
    }
    body = review(
        "CREATE", group="apps.kruise.io", version="v1beta1", kind="SidecarSet", resource="sidecarsets",
        obj=copy.deepcopy(sidecarset),
    )  # fmt: skip
    resp = await post(client, "/mutate-apps-kruise-io-v1beta1-sidecarset", body)
    assert resp["allowed"] is True
    out = apply_patch(sidecarset, resp)
    assert out["spec"]["customVersion"] == "v2"
    assert "labels" not in out["metadata"]  # the v1alpha1 custom-version label went back into spec
    assert out["spec"]["containers"][0]["podInjectPolicy"] == "BeforeAppContainer"


async def test_unconvertible_object_is_denied_naming_the_field(client):
    bad = copy.deepcopy(BETA_CLONESET)
    bad["spec"]["scaleStrategy"] = {"enablePVCReuse": "yes"}
    resp = await post(client, "/validate-apps-kruise-io-v1beta1-cloneset", _review("CREATE", bad))
    assert resp["allowed"] is False
    assert resp["status"]["code"] == 400
    assert "spec.scaleStrategy.enablePVCReuse: must be a boolean" in resp["status"]["message"]
