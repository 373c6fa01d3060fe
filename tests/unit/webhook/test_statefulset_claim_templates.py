"""Advanced StatefulSet under gate StatefulSetAutoResizePVCGate: the `OnDelete` default of
`volumeClaimUpdateStrategy`, and the UPDATE rule that with `OnPodRollingUpdate` a claim template may
only change in size, on a storage class that allows expansion (upstream's messages)."""

from __future__ import annotations

import copy

import pytest

from kruise.api import statefulset
from kruise.api.features import FeatureGates
from kruise.api.statefulset import StatefulSet
from kruise.webhook import registry
from kruise.webhook.admission import AdmissionRequest
from kruise.webhook.handlers.statefulset import default_storage_class, volume_claim_template_update_errors
from tests.kit.webhook import context

VALIDATE = "/validate-apps-kruise-io-v1beta1-statefulset"
MUTATE = "/mutate-apps-kruise-io-v1beta1-statefulset"


class Classes:
    def __init__(self, *classes: dict) -> None:
        self._classes = {c["metadata"]["name"]: c for c in classes}

    def get(self, name: str) -> dict | None:
        return self._classes.get(name)

    def list(self) -> list[dict]:
        return list(self._classes.values())


def storage_class(
    name: str, expand: bool | None, default: bool = False, created: str = "2024-01-01T00:00:00Z"
):
    sc: dict = {"metadata": {"name": name, "creationTimestamp": created}, "provisioner": "x"}
    if default:
        sc["metadata"]["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    if expand is not None:
        sc["allowVolumeExpansion"] = expand
    return sc


CLASSES = Classes(storage_class("grow", True), storage_class("fixed", False))


def claim(size: str = "2Gi", sc: str | None = "grow", name: str = "data", modes=("ReadWriteOnce",)) -> dict:
    spec: dict = {"accessModes": list(modes), "resources": {"requests": {"storage": size}}}
    if sc is not None:
        spec["storageClassName"] = sc
    return {"metadata": {"name": name}, "spec": spec}


def sts(templates: list[dict], strategy: str | None = "OnPodRollingUpdate", **spec) -> dict:
    body = {
        "replicas": 2,
        "serviceName": "demo",
        "podManagementPolicy": "OrderedReady",
        "selector": {"matchLabels": {"app": "demo"}},
        "template": {
            "metadata": {"labels": {"app": "demo"}},
            "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]},
        },
        "updateStrategy": {
            "type": "RollingUpdate",
            "rollingUpdate": {"partition": 0, "maxUnavailable": 1, "podUpdatePolicy": "ReCreate"},
        },
        "volumeClaimTemplates": templates,
    }
    if strategy is not None:
        body["volumeClaimUpdateStrategy"] = {"type": strategy}
    body.update(spec)
    return {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": "d"},
        "spec": body,
    }


def errors(new: dict, old: dict, classes=CLASSES) -> list[str]:
    found = volume_claim_template_update_errors(
        StatefulSet.model_validate(new), StatefulSet.model_validate(old), classes
    )
    return [str(e) for e in found]


def request(new: dict, old: dict | None, operation: str = "UPDATE") -> AdmissionRequest:
    return AdmissionRequest.model_validate(
        {
            "uid": "1",
            "kind": {"group": "apps.kruise.io", "version": "v1beta1", "kind": "StatefulSet"},
            "resource": {"group": "apps.kruise.io", "version": "v1beta1", "resource": "statefulsets"},
            "namespace": "default",
            "operation": operation,
            "object": new,
            "oldObject": old,
        }
    )


def routes(gate: bool):
    return registry.routes(
        context(gates=FeatureGates({"StatefulSetAutoResizePVCGate": gate}, env={}), storage_classes=CLASSES)
    )


# --- defaults ---------------------------------------------------------------------------------


def test_gate_on_defaults_claim_strategy_to_on_delete():
    obj = StatefulSet.model_validate(sts([claim()], strategy=None))
    statefulset.set_defaults(obj, auto_resize_pvc=True)
    assert obj.to_dict()["spec"]["volumeClaimUpdateStrategy"] == {"type": "OnDelete"}


def test_gate_off_leaves_claim_strategy_unset():
    obj = StatefulSet.model_validate(sts([claim()], strategy=None))
    statefulset.set_defaults(obj)
    assert obj.to_dict()["spec"]["volumeClaimUpdateStrategy"] == {}


def test_gate_on_keeps_an_explicit_strategy():
    obj = StatefulSet.model_validate(sts([claim()]))
    statefulset.set_defaults(obj, auto_resize_pvc=True)
    assert obj.to_dict()["spec"]["volumeClaimUpdateStrategy"] == {"type": "OnPodRollingUpdate"}


@pytest.mark.parametrize(("gate", "expected"), [(True, {"type": "OnDelete"}), (False, {})])
async def test_mutating_webhook_follows_the_gate(gate, expected):
    decision = await routes(gate)[MUTATE](request(sts([claim()], strategy=None), None, "CREATE"))
    assert decision.allowed and decision.mutated is not None
    assert decision.mutated["spec"]["volumeClaimUpdateStrategy"] == expected


# --- the claim-template rule -------------------------------------------------------------------


@pytest.mark.parametrize("strategy", [None, "OnDelete"])
def test_without_rolling_claim_updates_templates_are_free(strategy):
    old = sts([claim(sc="grow")], strategy=strategy)
    new = sts([claim(sc="fixed", size="1Gi"), claim(name="logs")], strategy=strategy)
    assert errors(new, old) == []


def test_growing_on_an_expandable_class_is_allowed():
    assert errors(sts([claim("3Gi")]), sts([claim("2Gi")])) == []


def test_shrinking_is_left_to_the_apiserver_as_upstream():
    # upstream's webhook only asks for a size change on an expandable class; the apiserver refuses
    # a claim that shrinks when the controller patches it
    assert errors(sts([claim("1Gi")]), sts([claim("2Gi")])) == []


@pytest.mark.parametrize("size", ["3Gi", "1Gi"])
def test_any_size_change_on_a_fixed_class_is_forbidden(size):
    assert errors(sts([claim(size, sc="fixed")]), sts([claim("2Gi", sc="fixed")])) == [
        "spec.volumeClaimTemplates[data].spec.resources.requests.storage: "
        "Forbidden: storage class fixed does not support volume expansion"
    ]


def test_equal_sizes_in_other_units_are_no_change():
    assert errors(sts([claim("2048Mi", sc="fixed")]), sts([claim("2Gi", sc="fixed")])) == []


def test_limits_count_as_a_size_change():
    new = sts([claim(sc="fixed")])
    new["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["limits"] = {"storage": "5Gi"}
    assert len(errors(new, sts([claim(sc="fixed")]))) == 1


def test_adding_a_template_is_refused():
    found = errors(sts([claim(), claim(name="logs")]), sts([claim()]))
    assert len(found) == 1
    assert found[0].startswith("spec.volumeClaimTemplates: Invalid value: ")
    assert found[0].endswith(": volumeClaimTemplate can not be added or deleted when OnRollingUpdate")


def test_renaming_a_template_is_refused():
    assert errors(sts([claim(name="other")]), sts([claim()])) == [
        "spec.volumeClaimTemplates[other].name: Forbidden: volumeClaimTemplate name can not be modified"
    ]


@pytest.mark.parametrize(
    "changed",
    [claim(sc="fixed"), claim(modes=("ReadWriteMany",)), claim(modes=("ReadWriteOnce", "ReadOnlyMany"))],
)
def test_other_changes_are_refused(changed):
    found = errors(sts([changed]), sts([claim()]))
    assert len(found) == 1
    assert found[0].startswith("spec.volumeClaimTemplates[data]: Invalid value: ")
    assert found[0].endswith(": volumeClaimTemplate can not be modified when OnRollingUpdate")


def test_unknown_class_is_reported():
    assert errors(sts([claim("3Gi", sc="gone")]), sts([claim("2Gi", sc="gone")])) == [
        'spec.volumeClaimTemplates[data].spec.storageClassName: Invalid value: "gone": can not get sc'
    ]


def test_no_class_named_uses_the_newest_default():
    classes = Classes(
        storage_class("old-default", True, default=True, created="2023-01-01T00:00:00Z"),
        storage_class("new-default", False, default=True, created="2024-06-01T00:00:00Z"),
    )
    assert (default_storage_class(classes) or {})["metadata"]["name"] == "new-default"
    assert errors(sts([claim("3Gi", sc=None)]), sts([claim("2Gi", sc=None)]), classes) == [
        "spec.volumeClaimTemplates[data].spec.resources.requests.storage: "
        "Forbidden: storage class new-default does not support volume expansion"
    ]


def test_no_class_named_and_no_default_is_not_checked():
    assert errors(sts([claim("3Gi", sc=None)]), sts([claim("2Gi", sc=None)]), Classes()) == []


def test_class_without_the_expansion_field_allows_growth():
    classes = Classes(storage_class("unset", None))
    assert errors(sts([claim("3Gi", sc="unset")]), sts([claim("2Gi", sc="unset")]), classes) == []


# --- through the webhook ----------------------------------------------------------------------


async def test_gate_on_webhook_refuses_with_422():
    new, old = sts([claim("3Gi", sc="fixed")]), sts([claim("2Gi", sc="fixed")])
    decision = await routes(True)[VALIDATE](request(new, old))
    assert not decision.allowed and decision.code == 422
    assert decision.message == (
        "spec.volumeClaimTemplates[data].spec.resources.requests.storage: "
        "Forbidden: storage class fixed does not support volume expansion"
    )


async def test_gate_off_webhook_lets_templates_change():
    new, old = sts([claim("3Gi", sc="fixed")]), sts([claim("2Gi", sc="fixed")])
    assert (await routes(False)[VALIDATE](request(new, old))).allowed


async def test_gate_on_create_is_not_checked():
    assert (await routes(True)[VALIDATE](request(sts([claim(sc="gone")]), None, "CREATE"))).allowed


async def test_in_place_only_refuses_non_image_template_changes():
    rolling = {"partition": 0, "maxUnavailable": 1, "podUpdatePolicy": "InPlaceOnly"}
    old = sts([claim()], updateStrategy={"type": "RollingUpdate", "rollingUpdate": rolling})
    old["spec"]["template"]["spec"]["readinessGates"] = [{"conditionType": "InPlaceUpdateReady"}]
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "A", "value": "1"}]
    decision = await routes(False)[VALIDATE](request(new, old))
    assert not decision.allowed and decision.code == 422
    assert decision.message.startswith("invalid template modified with InPlaceOnly strategy: ")
    image_only = copy.deepcopy(old)
    image_only["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
    assert (await routes(False)[VALIDATE](request(image_only, old))).allowed
