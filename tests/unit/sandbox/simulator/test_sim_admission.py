"""Kubelet admission (``admission``) and the host-port rules it shares with the scheduler
(``hostports``): which pod a kubelet rejects, with which reason and message."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.sandbox.simulator.admission import Rejection, admit, needs_node_labels
from kruise.sandbox.simulator.hostports import BIND_ALL, HostPort, host_ports, port_conflict, ports_fit
from kruise.sandbox.simulator.scheduling import filter_reasons

Obj = dict[str, Any]

PORTS_MESSAGE = "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"


def port(host_port: int, *, ip: str = "", protocol: str = "", container_port: int = 80) -> Obj:
    result: Obj = {"containerPort": container_port, "hostPort": host_port}
    if ip:
        result["hostIP"] = ip
    if protocol:
        result["protocol"] = protocol
    return result


def a_pod(
    *ports: Obj, cpu: str = "", node_selector: Obj | None = None, sidecar_ports: list[Obj] | None = None
) -> Obj:
    container: Obj = {"name": "app", "image": "nginx", "ports": list(ports)}
    if cpu:
        container["resources"] = {"requests": {"cpu": cpu}}
    spec: Obj = {"containers": [container], "nodeName": "node-1"}
    if node_selector:
        spec["nodeSelector"] = node_selector
    if sidecar_ports is not None:
        spec["initContainers"] = [
            {"name": "side", "image": "busybox", "restartPolicy": "Always", "ports": sidecar_ports},
            {"name": "init", "image": "busybox", "ports": [port(9999)]},  # done before the pod runs
        ]
    return {"metadata": {"name": "p", "namespace": "default", "uid": "u"}, "spec": spec}


def a_node(labels: Obj | None = None, cpu: str = "8", pods: str = "110") -> Obj:
    return {
        "metadata": {"name": "node-1", "labels": labels or {}},
        "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": pods}},
    }


# --------------------------------------------------------------------------- host ports


def test_host_ports_default_ip_and_protocol_and_skip_ports_without_a_host_port() -> None:
    pod = a_pod(port(21017), port(0), {"containerPort": 8080}, port(53, ip="10.0.0.1", protocol="UDP"))
    assert host_ports(pod) == [HostPort(BIND_ALL, "TCP", 21017), HostPort("10.0.0.1", "UDP", 53)]


def test_native_sidecars_hold_their_host_ports_plain_init_containers_do_not() -> None:
    pod = a_pod(port(80), sidecar_ports=[port(8443)])
    assert host_ports(pod) == [HostPort(BIND_ALL, "TCP", 8443), HostPort(BIND_ALL, "TCP", 80)]


@pytest.mark.parametrize(
    ("wanted", "used", "conflict"),
    [
        (HostPort(BIND_ALL, "TCP", 80), HostPort(BIND_ALL, "TCP", 80), True),
        (HostPort(BIND_ALL, "TCP", 80), HostPort("10.0.0.1", "TCP", 80), True),  # all addresses cover it
        (HostPort("10.0.0.1", "TCP", 80), HostPort(BIND_ALL, "TCP", 80), True),
        (HostPort("10.0.0.1", "TCP", 80), HostPort("10.0.0.1", "TCP", 80), True),
        (HostPort("10.0.0.1", "TCP", 80), HostPort("10.0.0.2", "TCP", 80), False),  # two addresses
        (HostPort(BIND_ALL, "UDP", 80), HostPort(BIND_ALL, "TCP", 80), False),  # two protocols
        (HostPort(BIND_ALL, "TCP", 81), HostPort(BIND_ALL, "TCP", 80), False),
        (HostPort("::", "TCP", 80), HostPort("10.0.0.1", "TCP", 80), False),  # "::" is no wildcard there
    ],
)
def test_port_conflict(wanted: HostPort, used: HostPort, conflict: bool) -> None:
    assert port_conflict(wanted, [used]) is conflict


ips = st.sampled_from([BIND_ALL, "10.0.0.1", "10.0.0.2", "::"])
protocols = st.sampled_from(["TCP", "UDP", "SCTP"])
numbers = st.integers(min_value=1, max_value=4)
host_port_values = st.builds(HostPort, ips, protocols, numbers)


@given(host_port_values, host_port_values)
def test_port_conflict_is_symmetric_and_needs_the_same_protocol_and_number(a: HostPort, b: HostPort) -> None:
    assert port_conflict(a, [b]) == port_conflict(b, [a])
    if port_conflict(a, [b]):
        assert (a.protocol, a.port) == (b.protocol, b.port)
        assert BIND_ALL in (a.ip, b.ip) or a.ip == b.ip


@given(host_port_values, st.lists(host_port_values, max_size=6))
def test_a_conflict_with_many_is_a_conflict_with_one_of_them(wanted: HostPort, used: list[HostPort]) -> None:
    assert port_conflict(wanted, used) == any(port_conflict(wanted, [one]) for one in used)


def as_port(value: HostPort) -> Obj:
    return port(value.port, ip="" if value.ip == BIND_ALL else value.ip, protocol=value.protocol)


@given(st.lists(host_port_values, max_size=3), st.lists(host_port_values, max_size=3))
def test_ports_fit_agrees_with_port_conflict(wanted: list[HostPort], used: list[HostPort]) -> None:
    pod = a_pod(*(as_port(p) for p in wanted))
    other = a_pod(*(as_port(p) for p in used))
    expected = not any(port_conflict(w, used) for w in wanted)
    assert ports_fit(pod, [other]) is expected
    assert (admit(pod, a_node(), [other]) is None) is expected


# --------------------------------------------------------------------------- admission


def test_a_pod_whose_host_port_is_taken_is_rejected_with_the_kubelets_words() -> None:
    rejection = admit(a_pod(port(21017)), a_node(), [a_pod(port(21017, container_port=21017))])
    assert rejection == Rejection("NodePorts", PORTS_MESSAGE)
    assert rejection.status_message == "Pod was rejected: " + PORTS_MESSAGE


def test_a_free_host_port_and_no_host_port_are_admitted() -> None:
    assert admit(a_pod(port(21018)), a_node(), [a_pod(port(21017))]) is None
    assert admit(a_pod({"containerPort": 80}), a_node(), [a_pod({"containerPort": 80})]) is None


def test_resources_come_first_with_the_insufficient_resource_text() -> None:
    running = a_pod(port(80), cpu="6")
    rejection = admit(a_pod(port(80), cpu="3"), a_node(), [running])
    assert rejection == Rejection(
        "OutOfcpu", "Node didn't have enough resource: cpu, requested: 3000, used: 6000, capacity: 8000"
    )


def test_too_many_pods_is_out_of_pods() -> None:
    rejection = admit(a_pod(), a_node(pods="1"), [a_pod()])
    assert rejection == Rejection(
        "OutOfpods", "Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1"
    )


def test_an_extended_resource_the_node_does_not_list_is_not_checked() -> None:
    pod = a_pod()
    pod["spec"]["containers"][0]["resources"] = {"requests": {"example.com/gpu": "1"}}
    assert admit(pod, a_node(), []) is None


def test_node_selector_mismatch_is_node_affinity_before_ports() -> None:
    pod = a_pod(port(80), node_selector={"disk": "ssd"})
    rejection = admit(pod, a_node(), [a_pod(port(80))])
    assert rejection == Rejection(
        "NodeAffinity", "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"
    )
    assert admit(pod, a_node({"disk": "ssd"}), []) is None


def test_needs_node_labels_only_for_selectors_and_required_affinity() -> None:
    assert not needs_node_labels(a_pod())
    assert needs_node_labels(a_pod(node_selector={"a": "b"}))
    required = a_pod()
    required["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}
    assert needs_node_labels(required)
    preferred = a_pod()
    preferred["spec"]["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}}
    assert not needs_node_labels(preferred)


def test_the_scheduler_keeps_a_pod_off_a_node_where_its_host_port_is_taken() -> None:
    assert filter_reasons(a_pod(port(80)), a_node(), [a_pod(port(80))]) == [
        "node(s) didn't have free ports for the requested pod ports"
    ]
    assert filter_reasons(a_pod(port(80, protocol="UDP")), a_node(), [a_pod(port(80))]) == []
