"""What the endpointslice/endpoints controllers write for a Service, from its pods."""

from __future__ import annotations

from functools import partial
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kruise.sandbox.simulator.endpointslices import (
    HEADLESS_LABEL,
    MANAGED_BY,
    MANAGED_BY_LABEL,
    MAX_ENDPOINTS_PER_SLICE,
    SERVICE_NAME_LABEL,
    desired_slices,
    desired_subsets,
    endpoints_labels,
    find_port,
    managed_labels,
)
from tests.kit.pods import pod


def service(ports: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "hook", "namespace": "ns", "labels": {"team": "a"}},
        "spec": {"selector": {"app": "hook"}, "ports": ports, **spec},
    }


HTTPS = {"name": "https", "port": 443, "targetPort": "webhook", "protocol": "TCP"}
NAMED = [{"name": "webhook", "containerPort": 9876, "protocol": "TCP"}]
SERVES_WEBHOOK = [{"name": "c", "ports": NAMED}]
# a running, Ready pod of app hook on node-1 whose one container declares no ports
hook_pod = partial(
    pod, namespace="ns", labels={"app": "hook"}, node="node-1", containers=[{"name": "c", "ports": []}],
    phase="Running", ready=True, ip="127.244.1.2",
)  # fmt: skip


def test_named_target_port_resolves_per_pod_and_numbers_pass_through():
    assert find_port(hook_pod("a", containers=SERVES_WEBHOOK), HTTPS) == 9876
    assert find_port(hook_pod("a", containers=SERVES_WEBHOOK), {"port": 443, "targetPort": 8443}) == 8443
    assert find_port(hook_pod("a"), HTTPS) is None
    udp = {**HTTPS, "protocol": "UDP"}
    assert find_port(hook_pod("a", containers=SERVES_WEBHOOK), udp) is None  # the protocol must match too
    # no targetPort: the port itself
    assert find_port(hook_pod("a", containers=SERVES_WEBHOOK), {"port": 80}) == 80


def test_restartable_init_containers_offer_named_ports():
    sidecar = hook_pod("a")
    sidecar["spec"]["initContainers"] = [{"name": "s", "restartPolicy": "Always", "ports": NAMED}]
    assert find_port(sidecar, HTTPS) == 9876
    sidecar["spec"]["initContainers"][0]["restartPolicy"] = "OnFailure"
    assert find_port(sidecar, HTTPS) is None


def test_slice_holds_selected_pods_with_conditions_node_zone_and_target_ref():
    pods = [
        hook_pod("b", ip="127.244.1.3", containers=SERVES_WEBHOOK, ready=False),
        hook_pod("a", uid="uid-a", containers=SERVES_WEBHOOK),
        hook_pod("other", ip="127.244.1.4", labels={"app": "x"}, containers=SERVES_WEBHOOK),
        hook_pod("done", ip="127.244.1.5", phase="Succeeded", containers=SERVES_WEBHOOK),
        hook_pod("noip", ip="", containers=SERVES_WEBHOOK),
        hook_pod("going", ip="127.244.1.6", deleting=True, containers=SERVES_WEBHOOK),
    ]
    [(ports, endpoints)] = desired_slices(service([HTTPS]), pods, {"node-1": "zone-a"}.get)
    assert ports == [{"name": "https", "port": 9876, "protocol": "TCP"}]
    assert [e["targetRef"]["name"] for e in endpoints] == ["a", "b", "going"]
    first = endpoints[0]
    assert first == {
        "addresses": ["127.244.1.2"],
        "conditions": {"ready": True, "serving": True, "terminating": False},
        "targetRef": {"kind": "Pod", "namespace": "ns", "name": "a", "uid": "uid-a"},
        "nodeName": "node-1",
        "zone": "zone-a",
    }
    assert endpoints[1]["conditions"] == {"ready": False, "serving": False, "terminating": False}
    assert endpoints[2]["conditions"] == {"ready": False, "serving": True, "terminating": True}


def test_publish_not_ready_addresses_makes_every_endpoint_ready():
    svc = service([HTTPS], publishNotReadyAddresses=True)
    [(_, endpoints)] = desired_slices(svc, [hook_pod("a", containers=SERVES_WEBHOOK, ready=False)])
    assert endpoints[0]["conditions"]["ready"] is True


def test_pods_resolving_a_named_port_differently_get_separate_slices():
    other = [{"name": "webhook", "containerPort": 7000}]
    slices = desired_slices(
        service([HTTPS]),
        [
            hook_pod("a", containers=SERVES_WEBHOOK),
            hook_pod("b", ip="127.244.1.3", containers=[{"name": "c", "ports": other}]),
            hook_pod("c", ip="127.244.1.4"),
        ],
    )
    by_port = {
        tuple(p["port"] for p in ports): [e["targetRef"]["name"] for e in eps] for ports, eps in slices
    }
    assert by_port == {(): ["c"], (7000,): ["b"], (9876,): ["a"]}


def test_no_selector_selects_nothing():
    svc = service([HTTPS])
    del svc["spec"]["selector"]
    assert desired_slices(svc, [hook_pod("a", containers=SERVES_WEBHOOK)]) == []


@given(st.integers(min_value=0, max_value=250))
def test_slices_are_capped_and_keep_every_endpoint(count: int):
    pods = [hook_pod(f"p{i:03d}", ip=f"127.244.{i // 200}.{i % 200 + 2}") for i in range(count)]
    slices = desired_slices(service([{"name": "", "port": 80, "targetPort": 80}]), pods)
    assert all(0 < len(eps) <= MAX_ENDPOINTS_PER_SLICE for _, eps in slices)
    assert sum(len(eps) for _, eps in slices) == count
    assert len(slices) == -(-count // MAX_ENDPOINTS_PER_SLICE)


def test_labels_copy_the_service_and_mark_the_controller():
    labels = managed_labels(service([HTTPS], clusterIP="None"))
    assert labels == {
        "team": "a",
        SERVICE_NAME_LABEL: "hook",
        MANAGED_BY_LABEL: MANAGED_BY,
        HEADLESS_LABEL: "",
    }
    assert endpoints_labels(service([HTTPS])) == {
        "team": "a",
        "endpoints.kubernetes.io/managed-by": "endpoint-controller",
    }


def test_endpoints_subsets_split_ready_and_not_ready_and_drop_terminating():
    pods = [
        hook_pod("a", ip="127.244.1.9", containers=SERVES_WEBHOOK),
        hook_pod("b", ip="127.244.1.3", containers=SERVES_WEBHOOK, ready=False),
        hook_pod("c", ip="127.244.1.2", containers=SERVES_WEBHOOK),
        hook_pod("going", ip="127.244.1.6", deleting=True, containers=SERVES_WEBHOOK),
        hook_pod("portless", ip="127.244.1.7"),
    ]
    [subset] = desired_subsets(service([HTTPS]), pods)
    assert [a["ip"] for a in subset["addresses"]] == ["127.244.1.2", "127.244.1.9"]
    assert [a["targetRef"]["name"] for a in subset["notReadyAddresses"]] == ["b"]
    assert subset["ports"] == [{"name": "https", "port": 9876, "protocol": "TCP"}]
    published = desired_subsets(service([HTTPS], publishNotReadyAddresses=True), pods)
    assert sorted(a["targetRef"]["name"] for a in published[0]["addresses"]) == ["a", "b", "c", "going"]
