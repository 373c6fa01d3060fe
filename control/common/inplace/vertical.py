"""In-place vertical scaling of containers (the InPlaceWorkloadVerticalScaling gate).

Upstream's ``NativeVerticalUpdate``: a template change that only replaces existing cpu/memory
requests or limits may be applied to running pods, by writing the new values into the pod spec
(Kubernetes before 1.32) or by a strategic-merge patch of the ``pods/resize`` subresource; the
resize is done when every container's ``status.containerStatuses[].resources`` reports exactly the
spec's requests and limits. Adding or removing a resource key, another resource name, or a change
of the pod's QoS class means the pod must be recreated instead.

Container resources travel as ``{"limits": {name: quantity}, "requests": {...}}`` with quantities
in Go's canonical rendering (what ``json.Marshal`` of a ``resource.Quantity`` writes); empty maps
are left out, as Go's ``omitempty`` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.api.goquantity import ZERO, Quantity, QuantityError
from kruise.api.objects import container_statuses_of, containers_of, section, spec_of
from kruise.control.common.podqos import pod_qos_class

RESIZABLE_RESOURCES = frozenset({"cpu", "memory"})
RESOURCE_KINDS = ("limits", "requests")
RESTART_CONTAINER = "RestartContainer"

Resources = dict[str, dict[str, str]]


class NotResizable(ValueError):
    """A template change under ``resources`` that cannot be applied in place (message says why)."""


def can_resize(resource_name: str) -> bool:
    """Only cpu and memory may be resized in place."""
    return resource_name in RESIZABLE_RESOURCES


def record_resource_change(
    op: Mapping[str, Any], old_containers: list[Mapping[str, Any]], into: dict[str, Resources]
) -> None:
    """Record one JSON-patch operation on ``/spec/containers/<i>/resources/...`` in ``into``.

    ``into`` maps container name to the new resources; raises ``NotResizable`` when the change
    must recreate the pod (``UpdateInplaceUpdateMetadata``).
    """
    path = op["path"]
    words = path.split("/")
    if len(words) != 7:
        raise NotResizable(f"invalid resource path: {path}")
    if not words[3].isdigit() or int(words[3]) >= len(old_containers):
        raise NotResizable(f"invalid container index: {path}")
    if op["op"] in ("add", "remove"):
        raise NotResizable("can not add or remove resources")
    if op.get("value") is None:
        raise NotResizable("json patch value is nil")
    try:
        quantity = Quantity.of(op["value"])
    except QuantityError as err:
        raise NotResizable(f"parse quantity error: {err}") from None
    kind, name = words[5], words[6]
    if not can_resize(name):
        raise NotResizable(f"disallowed inplace update resource: {name}")
    if kind not in RESOURCE_KINDS:
        raise NotResizable(f"invalid resource path: {path}")
    container = old_containers[int(words[3])]["name"]
    into.setdefault(container, {}).setdefault(kind, {})[name] = str(quantity)


def qos_changed(old_template: Mapping[str, Any], new_template: Mapping[str, Any]) -> bool:
    """Would pods of the new template land in another QoS class than those of the old one?"""
    try:
        old = pod_qos_class(spec_of(old_template))
        new = pod_qos_class(spec_of(new_template))
    except QuantityError:
        return True
    return old != new


def apply_resources(pod: dict[str, Any], expected: Mapping[str, Mapping[str, Any]]) -> None:
    """Write the expected cpu/memory values into the pod's containers (``UpdateResource``)."""
    for container in containers_of(pod):
        new = expected.get(container["name"])
        if new is None:
            continue
        resources = container.setdefault("resources", {})
        for kind in RESOURCE_KINDS:
            for name, value in section(new, kind).items():
                if can_resize(name):
                    resources.setdefault(kind, {})[name] = value


def _quantity(raw: Any) -> Quantity:
    return ZERO if raw is None else Quantity.of(raw)


def resize_body(pod: Mapping[str, Any], expected: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
    """The strategic-merge body for ``pods/resize`` that moves ``pod`` to ``expected``, or None.

    Only cpu/memory entries whose value differs from the pod's current one are sent
    (``GenerateResourcePatch``); containers keep the pod's order.
    """
    containers = []
    for container in containers_of(pod):
        new = expected.get(container["name"])
        if new is None:
            continue
        current = container.get("resources") or {}
        changed: dict[str, dict[str, str]] = {}
        for kind in RESOURCE_KINDS:
            for name, value in sorted(section(new, kind).items()):
                if not can_resize(name):
                    continue
                current_list = current.get(kind)
                if (
                    current_list is not None
                    and _quantity(current_list.get(name)).cmp(Quantity.of(value)) == 0
                ):
                    continue
                changed.setdefault(kind, {})[name] = str(Quantity.of(value))
        if changed:
            containers.append({"name": container["name"], "resources": changed})
    return {"spec": {"containers": containers}} if containers else None


def _same_list(spec_list: Mapping[str, Any] | None, status_list: Mapping[str, Any] | None) -> bool:
    """Equal resource lists: same names, each quantity equal in value ("1Gi" == "1024Mi")."""
    spec_list, status_list = spec_list or {}, status_list or {}
    if spec_list.keys() != status_list.keys():
        return False
    try:
        return all(Quantity.of(spec_list[k]).cmp(Quantity.of(status_list[k])) == 0 for k in spec_list)
    except QuantityError:
        return False


def container_resized(container: Mapping[str, Any] | None, status: Mapping[str, Any] | None) -> bool:
    """Has kubelet applied the container's spec resources (``isContainerUpdateCompleted``)?

    A status without ``resources`` is not done: kubelet has not reported what it applied. An empty
    map and a missing one are the same, since the apiserver drops empty maps.
    """
    if container is None or status is None or status.get("resources") is None:
        return False
    spec_resources = container.get("resources") or {}
    status_resources = status["resources"]
    return all(_same_list(spec_resources.get(k), status_resources.get(k)) for k in RESOURCE_KINDS)


def resize_problem(pod: Mapping[str, Any]) -> str | None:
    """Why the pod's resize is not complete, or None (``IsUpdateCompleted``): every container in
    the spec must report status resources equal to its spec resources."""
    containers = {c["name"]: c for c in containers_of(pod)}
    statuses = container_statuses_of(pod)
    if len(statuses) != len(containers):
        return "some container status is not reported"
    for status in statuses:
        if not container_resized(containers.get(status.get("name")), status):
            return f"container {status.get('name')} resources not changed"
    return None


def needs_restart(pod: Mapping[str, Any], container_resources: Mapping[str, Mapping[str, Any]]) -> bool:
    """Does a resized container's ``resizePolicy`` restart it for a resource that changes?

    Only the resources that change count: resizing cpu of a container whose memory policy is
    RestartContainer does not restart it.
    """
    for container in containers_of(pod):
        resources = container_resources.get(container["name"])
        if resources is None:
            continue
        changed = {name for kind in RESOURCE_KINDS for name in section(resources, kind)} & RESIZABLE_RESOURCES
        for policy in container.get("resizePolicy") or []:
            if policy.get("restartPolicy") == RESTART_CONTAINER and policy.get("resourceName") in changed:
                return True
    return False
