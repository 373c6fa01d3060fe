"""ContainerRecreateRequest mutating webhook: filled from the pod on CREATE, immutable spec on UPDATE."""

from __future__ import annotations

from kruise.webhook.admission import AdmissionRequest
from kruise.webhook.handlers.crr import mutating_handler

POD = {
    "metadata": {"name": "p", "namespace": "ns", "uid": "pod-uid"},
    "spec": {"nodeName": "n1", "containers": [{"name": "app", "image": "nginx"}]},
    "status": {
        "phase": "Running",
        "containerStatuses": [{"name": "app", "containerID": "containerd://abc", "restartCount": 2}],
    },
}


def crr(containers=({"name": "app"},), pod="p"):
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ContainerRecreateRequest",
        "metadata": {"name": "r", "namespace": "ns"},
        "spec": {"podName": pod, "containers": list(containers)},
    }


def request(operation, obj, old=None):
    return AdmissionRequest.model_validate(
        {
            "uid": "1",
            "kind": {"group": "apps.kruise.io", "version": "v1alpha1", "kind": "ContainerRecreateRequest"},
            "resource": {
                "group": "apps.kruise.io",
                "version": "v1alpha1",
                "resource": "containerrecreaterequests",
            },
            "namespace": "ns",
            "operation": operation,
            "object": obj,
            "oldObject": old,
        }
    )


def handler(gate=True):
    pods = {("ns", "p"): POD}
    return mutating_handler(lambda ns, name: pods.get((ns, name)), lambda name: None, daemon_gate=gate)


async def test_create_is_filled_from_the_pod():
    decision = await handler()(request("CREATE", crr()))
    assert decision.allowed
    obj = decision.mutated
    assert obj["metadata"]["labels"] == {
        "crr.apps.kruise.io/active": "true",
        "crr.apps.kruise.io/node-name": "n1",
        "crr.apps.kruise.io/pod-uid": "pod-uid",
    }
    (container,) = obj["spec"]["containers"]
    assert container["statusContext"] == {"containerID": "containerd://abc", "restartCount": 2}
    assert obj["spec"]["strategy"]["failurePolicy"] == "Fail"


async def test_create_refusals():
    missing = await handler()(request("CREATE", crr(pod="nope")))
    assert not missing.allowed and missing.code == 400 and missing.message == "no found Pod named nope"
    gated = await handler(gate=False)(request("CREATE", crr()))
    assert not gated.allowed and gated.code == 403 and "KruiseDaemon" in gated.message


async def test_update_keeps_spec_immutable():
    created = (await handler()(request("CREATE", crr()))).mutated
    changed = {**created, "spec": {**created["spec"], "podName": "other"}}
    decision = await handler()(request("UPDATE", changed, created))
    assert not decision.allowed and decision.message == "spec of ContainerRecreateRequest is immutable"
    assert (await handler()(request("UPDATE", created, created))).allowed
