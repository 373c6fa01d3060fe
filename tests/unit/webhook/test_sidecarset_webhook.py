"""SidecarSet through the webhook app: pod injection, SidecarSet hashing and cross-SidecarSet checks,
and the gates that shape the pod webhook."""

from __future__ import annotations

import copy
import datetime
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from webhook_testkit import apply_patch, post, review

from kruise.api.features import FeatureGates
from kruise.api.keys import ANNOTATION_SIDECARSET_HASH, ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE
from kruise.control.sidecarset.hashing import sidecarset_hash, sidecarset_hash_without_image
from kruise.control.sidecarset.revision import new_revision
from kruise.webhook import registry
from kruise.webhook.admission import AdmissionReview
from kruise.webhook.app import create_app
from kruise.webhook.configurations import ClientTarget, mutating_configuration
from kruise.webhook.handlers.pod import pod_create_handler
from kruise.webhook.main import parse_args
from tests.kit.sidecarsets import FakeSidecarSetSource
from tests.kit.webhook import context

SIDECAR1 = {
    "name": "sidecar1", "image": "busybox", "command": ["sleep", "999d"],
    "volumeMounts": [{"name": "log-volume", "mountPath": "/var/log"}],
}  # fmt: skip
SEED_SIDECARSET = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "SidecarSet",
    "metadata": {"name": "test-sidecarset"},
    "spec": {
        "selector": {"matchLabels": {"app": "nginx"}},
        "updateStrategy": {"type": "RollingUpdate", "maxUnavailable": 1},
        "containers": [SIDECAR1],
        "volumes": [{"name": "log-volume", "emptyDir": {}}],
    },
}
SEED_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "test-pod", "namespace": "default", "labels": {"app": "nginx"}},
    "spec": {"containers": [{"name": "app", "image": "nginx:1.7.9"}]},
}


def sidecarset_review(operation: str, obj: dict, old: dict | None = None) -> dict:
    return review(operation, group="apps.kruise.io", version="v1alpha1", kind="SidecarSet",
                  resource="sidecarsets", obj=obj, old=old)  # fmt: skip


def pod_review(obj: dict, **kwargs: Any) -> dict:
    return review("CREATE", group="", version="v1", kind="Pod", resource="pods", obj=obj, **kwargs)


@pytest.fixture
def sidecarsets() -> FakeSidecarSetSource:
    return FakeSidecarSetSource()


@pytest.fixture
async def app_client(sidecarsets: FakeSidecarSetSource) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(registry.routes(context(sidecarsets=sidecarsets)))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="https://w.test") as c:
        yield c


async def store(client: httpx.AsyncClient, sidecarsets: FakeSidecarSetSource, obj: dict) -> dict:
    """What the apiserver would persist: the object after the mutating webhook."""
    resp = await post(client, "/mutate-apps-kruise-io-v1alpha1-sidecarset", sidecarset_review("CREATE", obj))
    stored = apply_patch(obj, resp)
    sidecarsets.items[stored["metadata"]["name"]] = stored
    return stored


async def test_sidecarset_defaulting_stamps_upstream_hashes(app_client, sidecarsets):
    stored = await store(app_client, sidecarsets, copy.deepcopy(SEED_SIDECARSET))
    annotations = stored["metadata"]["annotations"]
    assert annotations[ANNOTATION_SIDECARSET_HASH] == sidecarset_hash(stored["spec"])
    assert annotations[ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE] == sidecarset_hash_without_image(
        stored["spec"]
    )
    assert stored["spec"]["containers"][0]["podInjectPolicy"] == "BeforeAppContainer"


async def test_seed_pod_gets_sidecar1(app_client, sidecarsets):
    await store(app_client, sidecarsets, copy.deepcopy(SEED_SIDECARSET))
    for dry_run in (False, True):  # nothing but the response: dryRun answers the same
        resp = await post(app_client, "/mutate-pod", pod_review(copy.deepcopy(SEED_POD), dry_run=dry_run))
        pod = apply_patch(SEED_POD, resp)
        assert [c["name"] for c in pod["spec"]["containers"]] == ["sidecar1", "app"]
        assert {"name": "IS_INJECTED", "value": "true"} in pod["spec"]["containers"][0]["env"]
        assert pod["spec"]["volumes"] == [{"name": "log-volume", "emptyDir": {}}]
        assert pod["metadata"]["annotations"]["kruise.io/sidecarset-injected-list"] == "test-sidecarset"


async def test_pod_without_namespace_matches_by_request_namespace_and_no_namespace_patch(
    app_client, sidecarsets
):
    await store(app_client, sidecarsets, {**copy.deepcopy(SEED_SIDECARSET), "spec": {
        **SEED_SIDECARSET["spec"], "namespace": "team"}})  # fmt: skip
    bare = copy.deepcopy(SEED_POD)
    del bare["metadata"]["namespace"]
    body = pod_review(bare)
    body["request"]["namespace"] = "team"
    resp = await post(app_client, "/mutate-pod", body)
    pod = apply_patch(bare, resp)
    assert "namespace" not in pod["metadata"]
    assert pod["spec"]["containers"][0]["name"] == "sidecar1"


async def test_launch_priority_sees_injected_sidecars(app_client, sidecarsets):
    await store(app_client, sidecarsets, copy.deepcopy(SEED_SIDECARSET))
    ordered = copy.deepcopy(SEED_POD)
    ordered["metadata"]["annotations"] = {"apps.kruise.io/container-launch-priority": "Ordered"}
    pod = apply_patch(ordered, await post(app_client, "/mutate-pod", pod_review(copy.deepcopy(ordered))))
    barriers = [
        next(
            e["valueFrom"]["configMapKeyRef"]["key"]
            for e in c["env"]
            if e["name"] == "KRUISE_CONTAINER_BARRIER"
        )
        for c in pod["spec"]["containers"]
    ]
    assert barriers == ["p_0", "p_-1"]  # sidecar1 first, then app


async def test_same_container_from_two_sidecarsets_is_denied(app_client, sidecarsets):
    first = await store(app_client, sidecarsets, copy.deepcopy(SEED_SIDECARSET))
    sidecarsets.items["second"] = {
        **copy.deepcopy(first),
        "metadata": {**first["metadata"], "name": "second"},
    }
    resp = await post(app_client, "/mutate-pod", pod_review(copy.deepcopy(SEED_POD)))
    assert resp["allowed"] is False
    assert resp["status"]["code"] == 422
    assert (
        resp["status"]["message"]
        == 'Pod "test-pod" is invalid: spec.containers[1].name: Duplicate value: "sidecar1"'
    )


async def test_corrupt_pod_annotation_is_an_internal_error(app_client, sidecarsets):
    await store(app_client, sidecarsets, copy.deepcopy(SEED_SIDECARSET))
    bad = copy.deepcopy(SEED_POD)
    bad["metadata"]["annotations"] = {"kruise.io/sidecarset-hash": "[1"}
    resp = await post(app_client, "/mutate-pod", pod_review(bad))
    assert resp["allowed"] is False and resp["status"]["code"] == 500
    assert "invalid annotations[kruise.io/sidecarset-hash]" in resp["status"]["message"]


async def test_validation_refuses_a_container_name_another_sidecarset_injects(app_client, sidecarsets):
    await store(app_client, sidecarsets, copy.deepcopy(SEED_SIDECARSET))
    other = copy.deepcopy(SEED_SIDECARSET)
    other["metadata"]["name"] = "other"
    other = await store(app_client, sidecarsets, other)
    del sidecarsets.items["other"]
    resp = await post(
        app_client, "/validate-apps-kruise-io-v1alpha1-sidecarset", sidecarset_review("CREATE", other)
    )
    assert resp["allowed"] is False
    assert (
        resp["status"]["message"]
        == 'spec.containers: Invalid value: "sidecar1": container sidecar1 already exist in test-sidecarset'
    )
    elsewhere = copy.deepcopy(other)
    elsewhere["spec"]["selector"] = {"matchLabels": {"app": "redis"}}
    resp = await post(
        app_client, "/validate-apps-kruise-io-sidecarset", sidecarset_review("CREATE", elsewhere)
    )
    assert resp["allowed"] is True


CANARY = {"apps.kruise.io/sidecarset-canary": "true", "apps.kruise.io/sidecarset-base": "test-sidecarset"}


async def test_canary_may_reuse_its_base_names_but_must_be_not_update(app_client, sidecarsets):
    await store(app_client, sidecarsets, copy.deepcopy(SEED_SIDECARSET))
    canary = copy.deepcopy(SEED_SIDECARSET)
    canary["metadata"] = {"name": "canary", "annotations": dict(CANARY)}
    canary["spec"]["updateStrategy"] = {"type": "NotUpdate"}
    canary = await store(app_client, sidecarsets, canary)
    del sidecarsets.items["canary"]
    path = "/validate-apps-kruise-io-v1alpha1-sidecarset"
    assert (await post(app_client, path, sidecarset_review("CREATE", canary)))["allowed"] is True
    rolling = copy.deepcopy(canary)
    rolling["spec"]["updateStrategy"]["type"] = "RollingUpdate"
    resp = await post(app_client, path, sidecarset_review("CREATE", rolling))
    assert "RollingUpdate is not supported for canary sidecarSet" in resp["status"]["message"]
    orphan = copy.deepcopy(canary)
    orphan["metadata"]["annotations"]["apps.kruise.io/sidecarset-base"] = "missing"
    resp = await post(app_client, path, sidecarset_review("CREATE", orphan))
    assert (
        'fetch base sidecarSet[missing] failed: sidecarsets.apps.kruise.io "missing" not found'
        in (resp["status"]["message"])
    )
    resp = await post(app_client, path, sidecarset_review("UPDATE", orphan, old=canary))
    assert "annotations[apps.kruise.io/sidecarset-base] is immutable" in resp["status"]["message"]


def test_pod_webhook_gate_removes_the_route():
    assert "/mutate-pod" in registry.routes(context())
    off = FeatureGates({"PodWebhook": False}, env={})
    assert "/mutate-pod" not in registry.routes(context(gates=off))


@pytest.mark.parametrize(("gate", "expected"), [(False, False), (True, True)])
async def test_kruise_pod_readiness_gate_covers_every_pod(gate, expected):
    handle = pod_create_handler(gate, None)
    req = AdmissionReview.model_validate(pod_review(copy.deepcopy(SEED_POD))).request
    decision = await handle(req)
    gates = ((decision.mutated or {}).get("spec") or {}).get("readinessGates") or []
    assert (gates == [{"conditionType": "KruisePodReady"}]) is expected


async def test_sort_gate_reaches_the_handler(sidecarsets):
    for name, container in (("a", "zz"), ("b", "aa")):
        sidecar = {"name": container, "image": "x", "podInjectPolicy": "BeforeAppContainer"}
        spec = {"selector": {"matchLabels": {"app": "nginx"}}, "containers": [sidecar]}
        sidecarsets.items[name] = {"metadata": {"name": name, "annotations": {}}, "spec": spec}
    req = AdmissionReview.model_validate(pod_review(copy.deepcopy(SEED_POD))).request
    fixed = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    for sort, order in ((False, ["zz", "aa", "app"]), (True, ["aa", "zz", "app"])):
        handle = pod_create_handler(False, sidecarsets, sort_sidecars_by_name=sort, clock=lambda: fixed)
        decision = await handle(req)
        assert [c["name"] for c in decision.mutated["spec"]["containers"]] == order


def test_feature_gates_flag():
    assert parse_args(["--feature-gates", "EnableSortSidecarContainerByName=true"]).feature_gates
    with pytest.raises(SystemExit):
        parse_args(["--feature-gates", "NoSuchGate=true"])


async def test_patch_pod_metadata_needs_the_whitelist(app_client, sidecarsets):
    patching = copy.deepcopy(SEED_SIDECARSET)
    patching["spec"]["patchPodMetadata"] = [{"annotations": {"team.io/owner": "x"}}]
    patching = await store(app_client, sidecarsets, patching)
    del sidecarsets.items["test-sidecarset"]
    path = "/validate-apps-kruise-io-sidecarset"
    resp = await post(app_client, path, sidecarset_review("CREATE", patching))
    assert resp["status"]["message"] == (
        "spec.patchPodMetadata: Required value: SidecarSet patch metadata whitelist not found"
    )
    rules = {"rules": [{"allowedAnnotationKeyExprs": [r"^team\.io/"]}]}
    sidecarsets.config = {"SidecarSet_PatchPodMetadata_WhiteList": json.dumps(rules)}
    resp = await post(app_client, path, sidecarset_review("CREATE", patching))
    assert resp["allowed"] is True, resp


async def test_injection_revision_gives_new_pods_the_historic_sidecar(app_client, sidecarsets):
    """`injectionStrategy.revision.revisionName`: the pod gets the stored version and records it."""
    old = await store(app_client, sidecarsets, copy.deepcopy(SEED_SIDECARSET))
    old["metadata"]["uid"] = "ss-uid"
    revision = new_revision(old, "kruise-system", 1, 0)
    sidecarsets.history.append(revision)
    newer = copy.deepcopy(SEED_SIDECARSET)
    newer["spec"]["containers"][0]["image"] = "busybox:1.35.0"
    newer["spec"]["injectionStrategy"] = {"revision": {"revisionName": revision["metadata"]["name"]}}
    await store(app_client, sidecarsets, newer)
    resp = await post(app_client, "/mutate-pod", pod_review(copy.deepcopy(SEED_POD)))
    pod = apply_patch(SEED_POD, resp)
    assert pod["spec"]["containers"][0]["image"] == "busybox"
    record = json.loads(pod["metadata"]["annotations"][ANNOTATION_SIDECARSET_HASH])["test-sidecarset"]
    assert record["controllerRevision"] == revision["metadata"]["name"]
    assert record["hash"] == old["metadata"]["annotations"][ANNOTATION_SIDECARSET_HASH]


async def test_missing_injection_revision_refuses_the_pod(app_client, sidecarsets):
    missing = copy.deepcopy(SEED_SIDECARSET)
    missing["spec"]["injectionStrategy"] = {"revision": {"customVersion": "v9"}}
    await store(app_client, sidecarsets, missing)
    resp = await post(app_client, "/mutate-pod", pod_review(copy.deepcopy(SEED_POD)))
    assert resp["allowed"] is False and resp["status"]["code"] == 500
    assert resp["status"]["message"] == 'ControllerRevision.apps "test-sidecarset" not found'


def pod_update_review(obj: dict, old: dict) -> dict:
    return review("UPDATE", group="", version="v1", kind="Pod", resource="pods", obj=obj, old=old)


def _without_sidecar(pod: dict) -> dict:
    """A pod created before the SidecarSet existed (or in a namespace it did not select then)."""
    return copy.deepcopy(pod)


def _app_image(pod: dict, image: str) -> dict:
    """What a CloneSet in-place update writes: the app container's image, by name."""
    new = copy.deepcopy(pod)
    next(c for c in new["spec"]["containers"] if c["name"] == "app")["image"] = image
    return new


def _sidecar_image(pod: dict, image: str) -> dict:
    new = copy.deepcopy(pod)
    next(c for c in new["spec"]["containers"] if c["name"] == "sidecar1")["image"] = image
    return new


@pytest.mark.parametrize(
    "case",
    [
        "in-place update of the app, SidecarSet unchanged",
        "in-place update of the app, SidecarSet moved on",
        "pod never injected",
        "sidecar image written by hand",
        "labels changed only",
    ],
)
async def test_pod_update_is_never_injected(app_client, sidecarsets, case):
    """Upstream: CREATE only; an UPDATE is answered without a patch, whatever the pod or SidecarSet."""
    sidecarset = copy.deepcopy(SEED_SIDECARSET)
    sidecarset["spec"]["patchPodMetadata"] = [{"annotations": {"team.io/owner": "platform"}}]
    stored = await store(app_client, sidecarsets, sidecarset)
    created = apply_patch(
        SEED_POD, await post(app_client, "/mutate-pod", pod_review(copy.deepcopy(SEED_POD)))
    )
    assert [c["name"] for c in created["spec"]["containers"]] == ["sidecar1", "app"]
    assert created["metadata"]["annotations"]["team.io/owner"] == "platform"  # CREATE does inject
    old, new = created, _app_image(created, "nginx:1.9")
    if case == "in-place update of the app, SidecarSet moved on":
        moved = copy.deepcopy(stored)
        moved["spec"]["containers"][0]["image"] = "busybox:1.35"
        await store(app_client, sidecarsets, moved)
    elif case == "pod never injected":
        old = _without_sidecar(SEED_POD)
        new = _app_image(old, "nginx:1.9")
    elif case == "sidecar image written by hand":
        new = _sidecar_image(created, "busybox:1.30")
    elif case == "labels changed only":
        new = copy.deepcopy(created)
        new["metadata"]["labels"]["canary.release"] = "true"
    resp = await post(app_client, "/mutate-pod", pod_update_review(copy.deepcopy(new), old))
    assert resp["allowed"] is True
    assert "patch" not in resp


def test_pod_mutation_is_registered_for_create_only():
    """As upstream's `+kubebuilder:webhook:...,verbs=create,...,name=mpod.kb.io`: the apiserver never
    sends a pod UPDATE to the SidecarSet injection."""
    configuration = mutating_configuration(ClientTarget(namespace="kruise"), b"CA")
    hooks = {h["name"]: h for h in configuration["webhooks"]}
    assert [rule["operations"] for rule in hooks["mpod.kb.io"]["rules"]] == [["CREATE"]]
