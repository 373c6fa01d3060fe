"""`expose`: the Service kubectl's generator would build for a CloneSet or Deployment."""

from __future__ import annotations

import pytest

from kruise.cli.kubectl_kruise import kinds
from kruise.cli.kubectl_kruise.expose import ExposeError, ExposeOptions, build_service, parse_labels


def workload(ports=(), selector=None, labels=None) -> dict:
    return {
        "metadata": {"name": "web", "labels": labels or {"app": "web", "tier": "fe"}},
        "spec": {
            "selector": selector or {"matchLabels": {"app": "web"}},
            "template": {"spec": {"containers": [{"name": "c", "image": "i", "ports": list(ports)}]}},
        },
    }


CLONESET = kinds.Target(kinds.CLONESET, "web")


def test_single_container_port_is_reused():
    svc = build_service(CLONESET, workload([{"containerPort": 8080}]), "ns", ExposeOptions())
    assert svc == {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "ns", "labels": {"app": "web", "tier": "fe"}},
        "spec": {
            "selector": {"app": "web"},
            "ports": [{"protocol": "TCP", "port": 8080, "targetPort": 8080}],
        },
    }


def test_several_ports_are_named_and_keep_their_protocols():
    ports = [
        {"containerPort": 53, "protocol": "UDP"},
        {"containerPort": 80},
        {"containerPort": 53, "protocol": "TCP"},
    ]
    svc = build_service(CLONESET, workload(ports), "ns", ExposeOptions())
    assert svc["spec"]["ports"] == [
        {"name": "port-1", "protocol": "UDP", "port": 53, "targetPort": 53},
        {"name": "port-2", "protocol": "TCP", "port": 80, "targetPort": 80},
    ]


def test_flags_override_everything():
    options = ExposeOptions(
        port="80", target_port="http", name="front", service_type="NodePort", labels="a=b",
        cluster_ip="10.0.0.9", external_ip="1.2.3.4", session_affinity="ClientIP", protocol="SCTP",
    )  # fmt: skip
    svc = build_service(
        kinds.Target(kinds.DEPLOYMENT, "web"), workload([{"containerPort": 8080}]), "ns", options
    )
    assert svc["metadata"] == {"name": "front", "namespace": "ns", "labels": {"a": "b"}}
    assert svc["spec"] == {
        "selector": {"app": "web"},
        "ports": [{"protocol": "SCTP", "port": 80, "targetPort": "http"}],
        "type": "NodePort",
        "clusterIP": "10.0.0.9",
        "externalIPs": ["1.2.3.4"],
        "sessionAffinity": "ClientIP",
    }


@pytest.mark.parametrize(
    ("target", "obj", "options", "message"),
    [
        (CLONESET, workload(), ExposeOptions(), "couldn't find port via --port flag or introspection"),
        (
            CLONESET,
            workload([{"containerPort": 1}], {"matchExpressions": [{"key": "a", "operator": "Exists"}]}),
            ExposeOptions(),
            "couldn't convert expressions",
        ),
        (
            kinds.Target(kinds.ADVANCED_STATEFULSET, "db"),
            workload(),
            ExposeOptions(),
            "cannot expose a StatefulSet",
        ),
        (CLONESET, workload(), ExposeOptions(port="http"), 'invalid port "http"'),
    ],
)
def test_refusals(target, obj, options, message):
    with pytest.raises(ExposeError, match=message):
        build_service(target, obj, "ns", options)


def test_headless_service_needs_no_port():
    svc = build_service(CLONESET, workload(), "ns", ExposeOptions(cluster_ip="None"))
    assert svc["spec"]["ports"] == [] and svc["spec"]["clusterIP"] == "None"


def test_option_validation_and_labels():
    with pytest.raises(ExposeError, match="invalid service type: Magic"):
        ExposeOptions(service_type="Magic").validate()
    with pytest.raises(ExposeError, match="invalid label spec: oops"):
        parse_labels("a=b,oops")
    assert parse_labels("a=b,c=") == {"a": "b", "c": ""}
