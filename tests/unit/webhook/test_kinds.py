"""Defaulting and validation of Kruise kinds through the admission app."""

from __future__ import annotations

import copy

import pytest
from webhook_testkit import apply_patch, post, review

CLONESET = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "CloneSet",
    "metadata": {"name": "demo", "namespace": "default", "labels": {"app": "demo"}},
    "spec": {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "demo"}},
        "template": {
            "metadata": {"labels": {"app": "demo"}},
            "spec": {"containers": [{"name": "main", "image": "nginx:alpine"}]},
        },
    },
}


def _cs_review(op: str, obj: dict | None, old: dict | None = None, **kw: object) -> dict:
    return review(
        op, group="apps.kruise.io", version="v1alpha1", kind="CloneSet", resource="clonesets",
        obj=obj, old=old, **kw,
    )  # fmt: skip


MUTATE_PATHS = ["/mutate-apps-kruise-io-cloneset", "/mutate-apps-kruise-io-v1alpha1-cloneset"]
VALIDATE_PATHS = ["/validate-apps-kruise-io-cloneset", "/validate-apps-kruise-io-v1alpha1-cloneset"]
FORBIDDEN = "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection="


@pytest.mark.parametrize("path", MUTATE_PATHS)
async def test_cloneset_defaults_come_back_as_a_json_patch(client, path):
    body = _cs_review("CREATE", copy.deepcopy(CLONESET))
    resp = await post(client, path, body)
    assert resp["allowed"] is True
    out = apply_patch(CLONESET, resp)
    strategy = out["spec"]["updateStrategy"]
    assert strategy["type"] == "ReCreate"
    assert strategy["partition"] == 0
    assert strategy["maxUnavailable"] == "20%"
    assert out["spec"]["revisionHistoryLimit"] == 10
    container = out["spec"]["template"]["spec"]["containers"][0]
    assert container["imagePullPolicy"] == "Always"  # upstream quirk for app containers, see kruise.api
    assert container["terminationMessagePath"] == "/dev/termination-log"
    # metadata untouched, unknown-to-us metadata fields survive
    assert out["metadata"] == CLONESET["metadata"]


async def test_defaulting_is_idempotent_second_pass_has_no_patch(client):
    first = await post(client, MUTATE_PATHS[0], _cs_review("CREATE", copy.deepcopy(CLONESET)))
    defaulted = apply_patch(CLONESET, first)
    second = await post(client, "/mutate-apps-kruise-io-cloneset", _cs_review("CREATE", defaulted))
    assert second["allowed"] is True
    assert "patch" not in second


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda o: o["spec"].__setitem__("replicas", -1), "spec.replicas"),
        (lambda o: o["spec"]["template"].__setitem__("metadata", {"labels": {"a": "b"}}), "spec.template"),
        (lambda o: o["spec"].setdefault("updateStrategy", {}).__setitem__("partition", -2), "partition"),
    ],
)
@pytest.mark.parametrize("path", VALIDATE_PATHS)
async def test_invalid_cloneset_is_denied_naming_the_field(client, path, mutate, field):
    obj = await _defaulted(client, copy.deepcopy(CLONESET))
    mutate(obj)
    resp = await post(client, path, _cs_review("CREATE", obj))
    assert resp["allowed"] is False
    assert resp["status"]["code"] == 422
    assert field in resp["status"]["message"]


async def _defaulted(client, obj: dict) -> dict:
    """The apiserver runs mutating webhooks before validating ones; validators see defaulted objects."""
    return apply_patch(obj, await post(client, "/mutate-apps-kruise-io-cloneset", _cs_review("CREATE", obj)))


async def test_valid_cloneset_is_allowed(client):
    obj = await _defaulted(client, copy.deepcopy(CLONESET))
    resp = await post(client, "/validate-apps-kruise-io-cloneset", _cs_review("CREATE", obj))
    assert resp == {"uid": resp["uid"], "allowed": True}


async def test_wrong_type_is_denied_with_field_path(client):
    obj = copy.deepcopy(CLONESET)
    obj["spec"]["replicas"] = "three"
    resp = await post(client, "/validate-apps-kruise-io-cloneset", _cs_review("CREATE", obj))
    assert resp["allowed"] is False
    assert "spec.replicas" in resp["status"]["message"]


async def test_update_of_immutable_field_is_forbidden(client):
    old = await _defaulted(client, copy.deepcopy(CLONESET))
    new = copy.deepcopy(old)
    new["spec"]["selector"] = {"matchLabels": {"app": "demo", "x": "y"}}
    new["spec"]["template"]["metadata"]["labels"]["x"] = "y"
    resp = await post(client, "/validate-apps-kruise-io-cloneset", _cs_review("UPDATE", new, old))
    assert resp["allowed"] is False
    assert "updates to cloneset spec for fields other than" in resp["status"]["message"]


@pytest.mark.parametrize(
    ("label", "replicas", "message"),
    [
        ("Always", 0, FORBIDDEN + "Always"),
        ("Cascading", 3, FORBIDDEN + "Cascading and replicas 3>0"),
        ("Cascading", 0, None),
        (None, 5, None),
    ],
)
async def test_cloneset_delete_protection(client, label, replicas, message):
    old = copy.deepcopy(CLONESET)
    old["spec"]["replicas"] = replicas
    if label:
        old["metadata"]["labels"]["policy.kruise.io/delete-protection"] = label
    resp = await post(client, "/validate-apps-kruise-io-cloneset", _cs_review("DELETE", None, old))
    if message is None:
        assert resp["allowed"] is True
    else:
        assert resp["allowed"] is False
        assert resp["status"] == {"code": 403, "message": message, "reason": "Forbidden"}


async def test_v1beta1_review_is_answered_in_v1beta1(client):
    body = _cs_review("CREATE", copy.deepcopy(CLONESET), api_version="admission.k8s.io/v1beta1")
    resp = await client.post("/validate-apps-kruise-io-cloneset", json=body)
    assert resp.json()["apiVersion"] == "admission.k8s.io/v1beta1"


def test_every_registered_kind_gets_both_path_spellings_and_old_only_where_accepted():
    from kruise.api.registry import KINDS
    from kruise.webhook import registry
    from kruise.webhook.handlers.kindhooks import hooks_for
    from kruise.webhook.paths import kind_paths
    from tests.kit.webhook import context

    routes = registry.routes(context())
    for info in KINDS:
        versions = tuple(v.name for v in info.versions)
        for verb in ("mutate", "validate"):
            assert set(kind_paths(verb, info.group, info.kind, versions)) <= set(routes)
        hooks = hooks_for(info)
        if hooks.validate_takes_old:
            assert "old" in hooks.validate.__code__.co_varnames


async def test_statefulset_v1beta1_is_parsed_with_its_own_model(client):
    sts = {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            },
        },
    }
    body = review(
        "CREATE",
        group="apps.kruise.io",
        version="v1beta1",
        kind="StatefulSet",
        resource="statefulsets",
        obj=sts,
    )
    resp = await post(client, "/mutate-apps-kruise-io-statefulset", body)
    out = apply_patch(sts, resp)
    body = review(
        "CREATE",
        group="apps.kruise.io",
        version="v1beta1",
        kind="StatefulSet",
        resource="statefulsets",
        obj=out,
    )
    resp = await post(client, "/validate-apps-kruise-io-v1beta1-statefulset", body)
    assert resp["allowed"] is True, resp
