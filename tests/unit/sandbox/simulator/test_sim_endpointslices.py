"""What the endpointslice/endpoints controllers write for a Service, from its pods."""

from __future__ import annotations

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


def service(ports: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "hook", "namespace": "ns", "labels": {"team": "a"}},
        "spec": {"selector": {"app": "hook"}, "ports": ports, **spec},
    }


def pod(
    name: str,
    ip: str = "127.244.1.2",
    *,
    ready: bool = True,
    labels: dict[str, str] | None = None,
    ports: list[dict[str, Any]] | None = None,
    phase: str = "Running",
    deleting: bool = False,
    node: str = "node-1",
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": f"uid-{name}"}
    meta["labels"] = {"app": "hook"} if labels is None else labels
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {
        "metadata": meta,
        "spec": {"nodeName": node, "containers": [{"name": "c", "ports": ports or []}]},
        "status": {
            "phase": phase,
            "podIP": ip,
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


HTTPS = {"name": "https", "port": 443, "targetPort": "webhook", "protocol": "TCP"}
NAMED = [{"name": "webhook", "containerPort": 9876, "protocol": "TCP"}]


def test_named_target_port_resolves_per_pod_and_numbers_pass_through():
    assert find_port(pod("a", ports=NAMED), HTTPS) == 9876
    assert find_port(pod("a", ports=NAMED), {"port": 443, "targetPort": 8443}) == 8443
    assert find_port(pod("a"), HTTPS) is None
    udp = {**HTTPS, "protocol": "UDP"}
    assert find_port(pod("a", ports=NAMED), udp) is None  # the protocol must match too
    assert find_port(pod("a", ports=NAMED), {"port": 80}) == 80  # no targetPort: the port itself


def test_restartable_init_containers_offer_named_ports():
    sidecar = pod("a")
    sidecar["spec"]["initContainers"] = [{"name": "s", "restartPolicy": "Always", "ports": NAMED}]
    assert find_port(sidecar, HTTPS) == 9876
    sidecar["spec"]["initContainers"][0]["restartPolicy"] = "OnFailure"
    assert find_port(sidecar, HTTPS) is None


def test_slice_holds_selected_pods_with_conditions_node_zone_and_target_ref():
    pods = [
        pod("b", "127.244.1.3", ports=NAMED, ready=False),
        pod("a", "127.244.1.2", ports=NAMED),
        pod("other", "127.244.1.4", labels={"app": "x"}, ports=NAMED),
        pod("done", "127.244.1.5", phase="Succeeded", ports=NAMED),
        pod("noip", "", ports=NAMED),
        pod("going", "127.244.1.6", deleting=True, ports=NAMED),
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
    [(_, endpoints)] = desired_slices(svc, [pod("a", ports=NAMED, ready=False)])
    assert endpoints[0]["conditions"]["ready"] is True


def test_pods_resolving_a_named_port_differently_get_separate_slices():
    other = [{"name": "webhook", "containerPort": 7000}]
    slices = desired_slices(
        service([HTTPS]),
        [pod("a", ports=NAMED), pod("b", "127.244.1.3", ports=other), pod("c", "127.244.1.4")],
    )
    by_port = {
        tuple(p["port"] for p in ports): [e["targetRef"]["name"] for e in eps] for ports, eps in slices
    }
    assert by_port == {(): ["c"], (7000,): ["b"], (9876,): ["a"]}


def test_no_selector_selects_nothing():
    svc = service([HTTPS])
    del svc["spec"]["selector"]
    assert desired_slices(svc, [pod("a", ports=NAMED)]) == []


@given(st.integers(min_value=0, max_value=250))
def test_slices_are_capped_and_keep_every_endpoint(count: int):
    pods = [pod(f"p{i:03d}", f"127.244.{i // 200}.{i % 200 + 2}") for i in range(count)]
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
        pod("a", "127.244.1.9", ports=NAMED),
        pod("b", "127.244.1.3", ports=NAMED, ready=False),
        pod("c", "127.244.1.2", ports=NAMED),
        pod("going", "127.244.1.6", deleting=True, ports=NAMED),
        pod("portless", "127.244.1.7"),
    ]
    [subset] = desired_subsets(service([HTTPS]), pods)
    assert [a["ip"] for a in subset["addresses"]] == ["127.244.1.2", "127.244.1.9"]
    assert [a["targetRef"]["name"] for a in subset["notReadyAddresses"]] == ["b"]
    assert subset["ports"] == [{"name": "https", "port": 9876, "protocol": "TCP"}]
    published = desired_subsets(service([HTTPS], publishNotReadyAddresses=True), pods)
    assert sorted(a["targetRef"]["name"] for a in published[0]["addresses"]) == ["a", "b", "c", "going"]
