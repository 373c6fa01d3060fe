"""Upstream's SidecarSet e2e, context "Sidecar ResourcesPolicy functionality [SidecarResourcesPolicy]"
(openkruise/kruise test/e2e/apps/v1alpha1/sidecarset_resources_policy.go), translated to kubectl on the
sandbox: same objects, same steps, same assertions. Each story's SidecarSet computes its sidecar's
resources from the pod's app containers at injection; the test reads the injected container back and
compares each quantity by value (upstream's `Quantity.Cmp`).

Upstream's v1beta1/sidecarset_resources_policy.go is the same eight stories with the SidecarSets at v1beta1
(`namespaceSelector` on `kubernetes.io/metadata.name` instead of `spec.namespace`); each story runs once
per version, creating its SidecarSets at it."""

from __future__ import annotations

from typing import Any

import pytest
from harness import Cluster
from sidecarset_tester import API_VERSIONS, Case, upstream_case

from kruise.api.goquantity import Quantity

SLEEP = ["/bin/sh", "-c", "sleep 10000000"]

pytestmark = pytest.mark.parametrize("api_version", API_VERSIONS)


def _resources(limits: dict[str, str], requests: dict[str, str]) -> dict[str, Any]:
    return {"limits": limits, "requests": requests}


def _policy(mode: str, regex: str, limits: dict[str, str], requests: dict[str, str]) -> dict[str, Any]:
    return {
        "targetContainersMode": mode,
        "targetContainersNameRegex": regex,
        "resourcesExpr": {"limits": limits, "requests": requests},
    }


def _sidecar(name: str, policy: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": name, "image": "busybox:latest", "command": SLEEP, **extra}
    if policy is not None:
        container["resourcesPolicy"] = policy
    return container


def _sidecarset(case: Case, story: str, app: str, spec: dict[str, Any]) -> dict[str, Any]:
    return case.sidecarset(
        {"name": f"test-sidecarset-{case.ns}-{story}-{case.suffix}"},
        {"selector": {"matchLabels": {"app": app}}, **spec},
    )


def _app(name: str, limits: dict[str, str], requests: dict[str, str], image: str = "nginx:1.14.2"):
    container: dict[str, Any] = {"name": name, "image": image, "resources": _resources(limits, requests)}
    if image.startswith("busybox"):
        container["command"] = SLEEP
    return container


def _deployment(case: Case, name: str, app: str, pod_spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": case.ns},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": app}},
            "template": {"metadata": {"labels": {"app": app}}, "spec": pod_spec},
        },
    }


async def _injected(
    case: Case, sidecarsets: list[dict[str, Any]], deployment: dict[str, Any], name: str, init: bool = False
) -> dict[str, Any]:
    """Create the SidecarSets and the Deployment, wait until it runs, return the pod's container `name`."""
    for sidecarset in sidecarsets:
        await case.create(sidecarset)
    await case.create_deployment(deployment)
    app = deployment["spec"]["selector"]["matchLabels"]["app"]
    pods = await case.pods(f"app={app}")
    assert len(pods) == 1
    assert pods[0]["status"]["phase"] == "Running"
    containers = pods[0]["spec"].get("initContainers" if init else "containers") or []
    found = [c for c in containers if c["name"] == name]
    assert found, f"{name} container not found"
    return found[0]


def _assert_quantities(container: dict[str, Any], limits: dict[str, str], requests: dict[str, str]) -> None:
    resources = container.get("resources") or {}
    for part, want in (("limits", limits), ("requests", requests)):
        got = resources.get(part) or {}
        for resource, value in want.items():
            assert resource in got, f"{part}.{resource} not set: {resources}"
            assert Quantity.parse(str(got[resource])).cmp(Quantity.parse(value)) == 0, (
                f"expected {part}.{resource} {value}, got {got[resource]}"
            )


ENGINE_LIMITS = {"cpu": "max(cpu*50%, 50m)", "memory": "200Mi"}
ENGINE_REQUESTS = {"cpu": "max(cpu*50%, 50m)", "memory": "100Mi"}


def _engines(v8_limits: dict[str, str], v8_requests: dict[str, str]) -> dict[str, Any]:
    return {
        "containers": [
            _app("large-engine-v4", {"cpu": "200m", "memory": "200Mi"}, {"cpu": "50m", "memory": "100Mi"}),
            _app("large-engine-v8", v8_limits, v8_requests),
        ]
    }


async def test_story1_resources_policy_with_specific_container_name_regex(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """Story 1 - ResourcesPolicy with specific container name regex

    Only large-engine-v4 matches: CPU limit max(200m*50%, 50m) = 100m, request max(50m*50%, 50m) = 50m."""
    async with upstream_case(kruise_sandbox_all_gates, api_version) as case:
        policy = _policy("sum", "^large-engine-v4$", ENGINE_LIMITS, ENGINE_REQUESTS)
        sidecarset = _sidecarset(case, "story1", "story1", {"containers": [_sidecar("sidecar1", policy)]})
        pod_spec = _engines({"cpu": "200m", "memory": "200Mi"}, {"cpu": "50m", "memory": "100Mi"})
        deployment = _deployment(case, "deployment-story1", "story1", pod_spec)
        sidecar = await _injected(case, [sidecarset], deployment, "sidecar1")
        _assert_quantities(sidecar, {"cpu": "100m", "memory": "200Mi"}, {"cpu": "50m", "memory": "100Mi"})


async def test_story2_resources_policy_with_sum_mode(kruise_sandbox_all_gates: Cluster, api_version: str):
    """Story 2 - ResourcesPolicy with sum mode

    CPU limit max((200m+400m)*50%, 50m) = 300m, request max((50m+100m)*50%, 50m) = 75m."""
    async with upstream_case(kruise_sandbox_all_gates, api_version) as case:
        policy = _policy("sum", "^large-engine-v.*$", ENGINE_LIMITS, ENGINE_REQUESTS)
        sidecarset = _sidecarset(case, "story2", "story2", {"containers": [_sidecar("sidecar1", policy)]})
        pod_spec = _engines({"cpu": "400m", "memory": "400Mi"}, {"cpu": "100m", "memory": "200Mi"})
        deployment = _deployment(case, "deployment-story2", "story2", pod_spec)
        sidecar = await _injected(case, [sidecarset], deployment, "sidecar1")
        _assert_quantities(sidecar, {"cpu": "300m", "memory": "200Mi"}, {"cpu": "75m", "memory": "100Mi"})


async def test_story3_resources_policy_with_max_mode(kruise_sandbox_all_gates: Cluster, api_version: str):
    """Story 3 - ResourcesPolicy with max mode

    CPU limit max(max(200m, 400m)*50%, 50m) = 200m, request max(max(50m, 100m)*50%, 50m) = 50m."""
    async with upstream_case(kruise_sandbox_all_gates, api_version) as case:
        policy = _policy("max", "^large-engine-v.*$", ENGINE_LIMITS, ENGINE_REQUESTS)
        sidecarset = _sidecarset(case, "story3", "story3", {"containers": [_sidecar("sidecar1", policy)]})
        pod_spec = _engines({"cpu": "400m", "memory": "400Mi"}, {"cpu": "100m", "memory": "200Mi"})
        deployment = _deployment(case, "deployment-story3", "story3", pod_spec)
        sidecar = await _injected(case, [sidecarset], deployment, "sidecar1")
        _assert_quantities(sidecar, {"cpu": "200m", "memory": "200Mi"}, {"cpu": "50m", "memory": "100Mi"})


async def test_story4_resources_policy_with_unlimited_resources(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """Story 4 - ResourcesPolicy with unlimited resources

    large-engine-v8 has no CPU limit, so the sidecar gets none either; the rest is computed as usual."""
    async with upstream_case(kruise_sandbox_all_gates, api_version) as case:
        policy = _policy("max", "^large-engine-v.*$", ENGINE_LIMITS, ENGINE_REQUESTS)
        sidecarset = _sidecarset(case, "story4", "story4", {"containers": [_sidecar("sidecar1", policy)]})
        pod_spec = _engines({"memory": "400Mi"}, {"cpu": "100m", "memory": "200Mi"})
        deployment = _deployment(case, "deployment-story4", "story4", pod_spec)
        sidecar = await _injected(case, [sidecarset], deployment, "sidecar1")
        assert "cpu" not in (sidecar.get("resources") or {}).get("limits", {}), "CPU limit should NOT be set"
        _assert_quantities(sidecar, {"memory": "200Mi"}, {"cpu": "50m", "memory": "100Mi"})


async def test_story5_resources_policy_with_complex_linear_expression(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """Story 5 - ResourcesPolicy with complex linear expression

    Sum over app1+app2: CPU limit 600m*50%+100m = 400m, memory max(1000Mi*20%+100Mi, 200Mi) = 300Mi,
    CPU request 300m*30%+50m = 140m, memory 500Mi*15%+50Mi = 125Mi."""
    async with upstream_case(kruise_sandbox_all_gates, api_version) as case:
        policy = _policy(
            "sum", ".*",
            {"cpu": "cpu*50% + 100m", "memory": "max(memory*20% + 100Mi, 200Mi)"},
            {"cpu": "cpu*30% + 50m", "memory": "memory*15% + 50Mi"},
        )  # fmt: skip
        sidecarset = _sidecarset(case, "story5", "story5", {"containers": [_sidecar("sidecar1", policy)]})
        pod_spec = {
            "containers": [
                _app("app1", {"cpu": "200m", "memory": "400Mi"}, {"cpu": "100m", "memory": "200Mi"}),
                _app("app2", {"cpu": "400m", "memory": "600Mi"}, {"cpu": "200m", "memory": "300Mi"}),
            ]
        }
        deployment = _deployment(case, "deployment-story5", "story5", pod_spec)
        sidecar = await _injected(case, [sidecarset], deployment, "sidecar1")
        _assert_quantities(sidecar, {"cpu": "400m", "memory": "300Mi"}, {"cpu": "140m", "memory": "125Mi"})


async def test_story6_init_container_native_sidecar_with_resources_policy(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """Story 6 - Init-container (Native Sidecar) with ResourcesPolicy

    A restartPolicy=Always init sidecar, sum over app1+app2: CPU limit max(1000m*30%, 50m) = 300m,
    memory max(2000Mi*25%, 100Mi) = 500Mi, CPU request 500m*20% = 100m, memory 1000Mi*15% = 150Mi."""
    async with upstream_case(kruise_sandbox_all_gates, api_version) as case:
        policy = _policy(
            "sum", "^app.*$",
            {"cpu": "max(cpu*30%, 50m)", "memory": "max(memory*25%, 100Mi)"},
            {"cpu": "cpu*20%", "memory": "memory*15%"},
        )  # fmt: skip
        spec = {
            "updateStrategy": {"type": "NotUpdate"},
            "initContainers": [_sidecar("init-sidecar", policy, restartPolicy="Always")],
        }
        sidecarset = _sidecarset(case, "story6", "story6", spec)
        pod_spec = {
            "containers": [
                _app("app1", {"cpu": "400m", "memory": "800Mi"}, {"cpu": "200m", "memory": "400Mi"},
                     image="busybox:latest"),
                _app("app2", {"cpu": "600m", "memory": "1200Mi"}, {"cpu": "300m", "memory": "600Mi"},
                     image="busybox:latest"),
            ]
        }  # fmt: skip
        deployment = _deployment(case, "deployment-story6", "story6", pod_spec)
        sidecar = await _injected(case, [sidecarset], deployment, "init-sidecar", init=True)
        _assert_quantities(sidecar, {"cpu": "300m", "memory": "500Mi"}, {"cpu": "100m", "memory": "150Mi"})


HALF_LIMITS = {"cpu": "cpu*50%", "memory": "memory*50%"}
FORTY_REQUESTS = {"cpu": "cpu*40%", "memory": "memory*40%"}
APP1 = {"cpu": "200m", "memory": "200Mi"}, {"cpu": "100m", "memory": "100Mi"}


async def test_filtering_non_native_sidecar_init_containers(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """Filtering non-native sidecar init-containers

    The regex matches everything, but a plain init container is not counted: only app1 (100m/100Mi
    limits, 40m/40Mi requests)."""
    async with upstream_case(kruise_sandbox_all_gates, api_version) as case:
        policy = _policy("sum", ".*", HALF_LIMITS, FORTY_REQUESTS)
        app = "filter-plain-init"
        sidecarset = _sidecarset(case, app, app, {"containers": [_sidecar("sidecar1", policy)]})
        plain_init = {
            "name": "plain-init", "image": "busybox:latest", "command": ["sh", "-c", "echo init"],
            "resources": _resources({"cpu": "100m", "memory": "100Mi"}, {"cpu": "50m", "memory": "50Mi"}),
        }  # fmt: skip
        pod_spec = {"initContainers": [plain_init], "containers": [_app("app1", *APP1)]}
        deployment = _deployment(case, "deployment-filter-plain-init", app, pod_spec)
        sidecar = await _injected(case, [sidecarset], deployment, "sidecar1")
        _assert_quantities(sidecar, {"cpu": "100m", "memory": "100Mi"}, {"cpu": "40m", "memory": "40Mi"})


async def test_filtering_kruise_sidecar_containers_and_init_containers(
    kruise_sandbox_all_gates: Cluster, api_version: str
):
    """Filtering Kruise sidecar containers and init-containers

    Another SidecarSet's sidecar and native init sidecar are in the pod too; the policy counts only the
    app container: 100m/100Mi limits, 40m/40Mi requests."""
    async with upstream_case(kruise_sandbox_all_gates, api_version) as case:
        app = "filter-kruise"
        other = _sidecarset(case, "filter-kruise-1", app, {
            "updateStrategy": {"type": "NotUpdate"},
            "initContainers": [_sidecar(
                "kruise-init-sidecar", restartPolicy="Always",
                resources=_resources({"cpu": "300m", "memory": "300Mi"}, {"cpu": "150m", "memory": "150Mi"}),
            )],
            "containers": [_sidecar(
                "kruise-sidecar",
                resources=_resources({"cpu": "400m", "memory": "400Mi"}, {"cpu": "200m", "memory": "200Mi"}),
            )],
        })  # fmt: skip
        policy = _policy("sum", ".*", HALF_LIMITS, FORTY_REQUESTS)
        with_policy = _sidecarset(
            case, "filter-kruise-2", app, {"containers": [_sidecar("policy-sidecar", policy)]}
        )
        deployment = _deployment(case, "deployment-filter-kruise", app, {"containers": [_app("app1", *APP1)]})
        sidecar = await _injected(case, [other, with_policy], deployment, "policy-sidecar")
        _assert_quantities(sidecar, {"cpu": "100m", "memory": "100Mi"}, {"cpu": "40m", "memory": "40Mi"})
