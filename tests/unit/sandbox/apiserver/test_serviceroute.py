"""Routing a Service reference to a ready endpoint, with kube-apiserver's failure texts."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.sandbox.apiserver.serviceroute import ServiceUnreachable, resolve

SERVICE = {
    "metadata": {"name": "hook", "namespace": "sys"},
    "spec": {"ports": [{"name": "https", "port": 443, "targetPort": "webhook", "protocol": "TCP"}]},
}


def slice_(
    name: str, port: int, endpoints: list[dict[str, Any]], *, service: str = "hook", port_name: str = "https"
):
    return {
        "metadata": {"name": name, "namespace": "sys", "labels": {"kubernetes.io/service-name": service}},
        "ports": [{"name": port_name, "port": port, "protocol": "TCP"}],
        "endpoints": endpoints,
    }


def endpoint(ip: str, ready: bool | None = True) -> dict[str, Any]:
    conditions = {} if ready is None else {"ready": ready}
    return {"addresses": [ip], "conditions": conditions}


def store(*objects: dict[str, Any]):
    def list_stored(group: str, plural: str) -> list[dict[str, Any]]:
        if plural == "services":
            return [o for o in objects if "spec" in o]
        return [o for o in objects if "endpoints" in o]

    return list_stored


def test_a_ready_endpoint_at_the_slice_port_of_the_same_name():
    stored = store(
        SERVICE,
        slice_("hook-1", 9876, [endpoint("127.244.1.2", ready=False), endpoint("127.244.2.2", ready=None)]),
        slice_("other-1", 1, [endpoint("127.244.3.2")], service="other"),
        slice_("hook-2", 5000, [endpoint("127.244.4.2")], port_name="metrics"),
    )
    assert resolve(stored, "sys", "hook", 443) == "127.244.2.2:9876"


def test_choice_among_ready_endpoints_is_the_chooser_s():
    stored = store(SERVICE, slice_("hook-1", 9876, [endpoint("127.244.1.2"), endpoint("127.244.2.2")]))
    assert resolve(stored, "sys", "hook", 443, choose=lambda a: a[-1]) == "127.244.2.2:9876"


@pytest.mark.parametrize(
    ("namespace", "name", "port", "message"),
    [
        ("sys", "nope", 443, 'service "nope" not found'),
        ("other", "hook", 443, 'service "hook" not found'),
        ("sys", "hook", 80, 'no service port 80 found for service "hook"'),
        ("sys", "hook", 443, 'no endpoints available for service "hook"'),
    ],
)
def test_unreachable_services_name_the_reason(namespace: str, name: str, port: int, message: str):
    stored = store(SERVICE, slice_("hook-1", 9876, [endpoint("127.244.1.2", ready=False)]))
    with pytest.raises(ServiceUnreachable, match=message):
        resolve(stored, namespace, name, port)


def test_external_name_services_go_to_their_host():
    external = {
        "metadata": {"name": "ext", "namespace": "sys"},
        "spec": {"type": "ExternalName", "externalName": "example.com"},
    }
    assert resolve(store(external, slice_("x", 1, [])), "sys", "ext", 443) == "example.com:443"
