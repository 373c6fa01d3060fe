"""UnitedDeployment validation through the admission app: template rules on CREATE and UPDATE."""

from __future__ import annotations

import copy

from webhook_testkit import post, review

PATH = "/validate-apps-kruise-io-v1alpha1-uniteddeployment"
UD = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "UnitedDeployment",
    "metadata": {"name": "sample-ud", "namespace": "default"},
    "spec": {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "sample"}},
        "template": {
            "statefulSetTemplate": {
                "metadata": {"labels": {"app": "sample"}},
                "spec": {
                    "template": {
                        "metadata": {"labels": {"app": "sample"}},
                        "spec": {"containers": [{"name": "nginx", "image": "nginx:alpine"}]},
                    }
                },
            }
        },
        "topology": {"subsets": [{"name": "subset-a", "replicas": 1}, {"name": "subset-b"}]},
    },
}


def _review(op: str, obj: dict, old: dict | None = None) -> dict:
    return review(
        op, group="apps.kruise.io", version="v1alpha1", kind="UnitedDeployment",
        resource="uniteddeployments", obj=obj, old=old,
    )  # fmt: skip


def _sts_spec(obj: dict) -> dict:
    return obj["spec"]["template"]["statefulSetTemplate"]["spec"]


async def test_valid_create_is_allowed(client):
    assert (await post(client, PATH, _review("CREATE", copy.deepcopy(UD))))["allowed"] is True


async def test_template_replicas_are_refused_on_create(client):
    obj = copy.deepcopy(UD)
    _sts_spec(obj)["replicas"] = 2
    resp = await post(client, PATH, _review("CREATE", obj))
    assert resp["allowed"] is False and resp["status"]["code"] == 422
    assert (
        "spec.template.statefulSetTemplate.spec.replicas: Invalid value: 2: "
        "replicas in statefulSetTemplate will not be used" in resp["status"]["message"]
    )


async def test_update_rules_apply_through_the_handler(client):
    old = copy.deepcopy(UD)
    changed = copy.deepcopy(UD)
    _sts_spec(changed)["serviceName"] = "headless"
    resp = await post(client, PATH, _review("UPDATE", changed, old))
    assert resp["allowed"] is False and resp["status"]["code"] == 422
    assert (
        "spec.template.statefulSetTemplate.spec: Forbidden: updates to statefulsetTemplate spec for fields "
        "other than 'template', and 'updateStrategy' are forbidden" in resp["status"]["message"]
    )
    image_only = copy.deepcopy(UD)
    _sts_spec(image_only)["template"]["spec"]["containers"][0]["image"] = "nginx:1.27"
    assert (await post(client, PATH, _review("UPDATE", image_only, old)))["allowed"] is True
