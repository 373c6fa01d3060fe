"""PodUnavailableBudget arithmetic and admission decisions, as pure functions over dicts.

Shared by kruise-webhook (may this pod be deleted, evicted or updated now? then record it) and the
PUB controller (how many pods are expected, available and allowed to go; which records expired).
The webhook decides from the PUB's *status*, which the controller keeps current; recording a
disruption in the status is what stops two concurrent evictions from both taking the last slot.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from kruise.api.common import LabelSelector, scaled_value
from kruise.api.controllerref import controller_of
from kruise.api.goquantity import Quantity, QuantityError
from kruise.api.keys import (
    ANNOTATION_PUB_NO_PROTECT,
    ANNOTATION_PUB_PROTECT_OPERATIONS,
    ANNOTATION_PUB_PROTECT_TOTAL_REPLICAS,
    ANNOTATION_RELATED_PUB,
    ANNOTATION_RELATED_PUB_NEW,
    LABEL_PREFIX_UNAVAILABLE_POD,
    PUB_OPERATION_DELETE,
    PUB_OPERATION_EVICT,
    PUB_OPERATION_RESIZE,
    PUB_OPERATION_UPDATE,
)
from kruise.api.objects import (
    Obj,
    annotations_of,
    containers_of,
    labels_of,
    meta_of,
    section,
    spec_of,
    status_of,
)
from kruise.api.timestamps import parse_time
from kruise.control.common import podstatus
from kruise.control.common.inplace.vertical import can_resize
from kruise.control.common.lifecycle import rfc3339
from kruise.control.common.podqos import pod_qos_class
from kruise.control.pub.consistency import is_pod_state_consistent

MAX_RECORDED_PODS = 2000
DELETION_TIMEOUT = timedelta(seconds=20)
UPDATE_DELAY_CHECK = timedelta(seconds=10)
DEFAULT_OPERATIONS = frozenset({PUB_OPERATION_DELETE, PUB_OPERATION_UPDATE, PUB_OPERATION_EVICT})
CONFIG_SOURCE_ANNOTATION = "kubernetes.io/config.source"
APISERVER_SOURCE = "api"
RESIZE_POLICY_NOT_REQUIRED = "NotRequired"


# ---- pods -------------------------------------------------------------------------------------


def _annotations(obj: Obj) -> Mapping[str, str]:
    return annotations_of(obj)


def related_pub(pod: Obj) -> str:
    """The PUB a pod belongs to (new annotation first, then the one kruise ≤ 1.9 writes)."""
    annotations = _annotations(pod)
    return annotations.get(ANNOTATION_RELATED_PUB_NEW) or annotations.get(ANNOTATION_RELATED_PUB) or ""


def related_pub_patch(pub_name: str) -> dict[str, Any]:
    """Both spellings, so old and new readers find it."""
    return {
        "metadata": {"annotations": {ANNOTATION_RELATED_PUB: pub_name, ANNOTATION_RELATED_PUB_NEW: pub_name}}
    }


def has_unavailable_label(pod: Obj) -> bool:
    labels = labels_of(pod)
    return any(key.startswith(LABEL_PREFIX_UNAVAILABLE_POD) for key in labels)


def is_no_protection(pod: Obj) -> bool:
    """Exactly "true", as upstream compares it: "True", "1" or "t" leave the pod protected."""
    return _annotations(pod).get(ANNOTATION_PUB_NO_PROTECT, "") == "true"


def is_pod_ready(pod: Obj) -> bool:
    """Running, Ready and not being deleted (upstream's IsRunningAndReady), without an
    `unavailable-pod.kruise.io/*` label. A terminating pod is already going, so deleting or evicting
    it again (the namespace controller's repeated passes, the kubelet's final delete) takes no slot."""
    return (
        podstatus.phase(pod) == "Running"
        and podstatus.is_ready(pod)
        and not meta_of(pod).get("deletionTimestamp")
        and not has_unavailable_label(pod)
    )


def is_unavailable_change(old: Obj, new: Obj) -> bool:
    """A pod UPDATE that may take the pod down: its spec changed, or an unavailable label appeared."""
    if spec_of(old) != spec_of(new):
        return True
    return not has_unavailable_label(old) and has_unavailable_label(new)


# ---- in-place resize (the RESIZE operation) --------------------------------------------------


def is_static_pod(pod: Obj) -> bool:
    """A kubelet static pod (its mirror carries `kubernetes.io/config.source` other than "api"):
    the kubelet does not resize those in place, so a resources change there is an update."""
    source = _annotations(pod).get(CONFIG_SOURCE_ANNOTATION)
    return source is not None and source != APISERVER_SOURCE


def _same_quantity(a: object, b: object) -> bool:
    try:
        return Quantity.of(a).cmp(Quantity.of(b)) == 0
    except QuantityError:
        return a == b


def is_resource_changed(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None, name: str) -> bool:
    """Whether resource `name` differs between two resource lists: set in only one of them, or set
    in both to quantities that are not equal ("1" and "1000m" are equal). A value missing on both
    sides is unchanged, even though the scheduler may assume a default for it."""
    old, new = old or {}, new or {}
    if name not in old and name not in new:
        return False
    if (name in old) != (name in new):
        return True
    return not _same_quantity(old[name], new[name])


def _container_resources_changed(old: Obj, new: Obj, name: str) -> bool:
    old_res, new_res = old.get("resources") or {}, new.get("resources") or {}
    return is_resource_changed(old_res.get("requests"), new_res.get("requests"), name) or (
        is_resource_changed(old_res.get("limits"), new_res.get("limits"), name)
    )


def spec_without_resources(pod: Obj) -> dict[str, Any]:
    """The pod spec with every app container's `resources` dropped: what must stay equal for an
    UPDATE to be a resize only. Init containers keep theirs (they do not change on a running pod)."""
    spec = copy.deepcopy(dict(spec_of(pod)))
    spec["containers"] = [
        {key: value for key, value in (container or {}).items() if key != "resources"}
        for container in spec.get("containers") or []
    ]
    return spec


def resources_resizable(old: Obj, new: Obj) -> bool:
    """Every changed container resource may be resized in place (cpu or memory) and its container's
    `resizePolicy` for it is NotRequired or unset — a RestartContainer policy restarts the container,
    which makes the pod unavailable. Containers are matched by name; a container count change fails."""
    old_containers = containers_of(old)
    new_containers = containers_of(new)
    if len(old_containers) != len(new_containers):
        return False
    by_name = {container.get("name"): container for container in old_containers}
    for container in new_containers:
        previous = by_name.get(container.get("name"))
        if previous is None:
            return False
        names = set()
        for holder in (previous, container):
            for kind in ("requests", "limits"):
                names.update(section(holder, "resources", kind).keys())
        policies = {
            policy.get("resourceName"): policy.get("restartPolicy") or ""
            for policy in container.get("resizePolicy") or []
        }
        for name in names:
            if not _container_resources_changed(previous, container, name):
                continue
            if not can_resize(name):
                return False
            if policies.get(name, "") not in ("", RESIZE_POLICY_NOT_REQUIRED):
                return False
    return True


def _qos(pod: Obj) -> str | None:
    try:
        return pod_qos_class(spec_of(pod))
    except QuantityError:
        return None


def can_resize_in_place(old: Obj, new: Obj) -> bool:
    """upstream's `CanResizeInplace`: this pod UPDATE only resizes containers in place and will not
    make the pod unavailable. False when an `unavailable-pod.kruise.io/*` label appears, anything
    in the spec besides app containers' resources changes, the pod is a static pod, its QoS class
    changes, or a changed resource cannot be resized without a restart (see `resources_resizable`).
    Labels and annotations fed to containers through the downward API are not considered, as upstream."""
    if not has_unavailable_label(old) and has_unavailable_label(new):
        return False
    if spec_without_resources(old) != spec_without_resources(new):
        return False
    if is_static_pod(old) or is_static_pod(new):
        return False
    old_qos = _qos(old)
    if old_qos is None or old_qos != _qos(new):
        return False
    return resources_resizable(old, new)


def update_operation(old: Obj, new: Obj) -> str:
    """The PUB operation a pod UPDATE is checked as: RESIZE when it only resizes in place, else UPDATE."""
    return PUB_OPERATION_RESIZE if can_resize_in_place(old, new) else PUB_OPERATION_UPDATE


# ---- PUBs -------------------------------------------------------------------------------------


def protect_operations(pub: Obj, *, in_place_pod_vertical_scaling: bool = False) -> frozenset[str]:
    """spec.protectOperations (v1beta1), else the `kruise.io/pub-protect-operations` annotation,
    else DELETE, UPDATE and EVICT. With the InPlacePodVerticalScaling gate off there is no separate
    in-place resize, so RESIZE is protected whenever UPDATE is; with it on, RESIZE is protected only
    when listed, and a resize-only pod UPDATE under a PUB protecting just UPDATE takes no slot."""
    operations = set(spec_of(pub).get("protectOperations") or [])
    if not operations:
        raw = _annotations(pub).get(ANNOTATION_PUB_PROTECT_OPERATIONS, "")
        operations = {op for op in raw.split(",") if op}
    if not operations:
        operations = set(DEFAULT_OPERATIONS)
    if not in_place_pod_vertical_scaling and PUB_OPERATION_UPDATE in operations:
        operations.add(PUB_OPERATION_RESIZE)
    return frozenset(operations)


def protect_total_replicas(pub: Obj) -> int | None:
    raw = _annotations(pub).get(ANNOTATION_PUB_PROTECT_TOTAL_REPLICAS)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def ignored(pub: Obj, pod: Obj) -> bool:
    selector = spec_of(pub).get("ignoredPodSelector")
    if not selector:
        return False
    return LabelSelector.model_validate(selector).matches(labels_of(pod))


def selector_matches(pub: Obj, pod: Obj) -> bool:
    """Selector-mode PUBs (no targetRef) in the pod's namespace."""
    spec = pub.get("spec") or {}
    if spec.get("targetRef") or not spec.get("selector"):
        return False
    if meta_of(pub).get("namespace") != meta_of(pod).get("namespace"):
        return False
    return LabelSelector.model_validate(spec["selector"]).matches(labels_of(pod))


def pub_for_new_pod(
    pod: Obj,
    pubs: Iterable[Obj],
    workload_of: Callable[[Obj, str], Obj | None] | None = None,
) -> str | None:
    """`GetPubForPod` at pod creation: a PUB whose targetRef is the pod's workload, or whose selector
    matches its labels (first by name). `workload_of(owner reference, namespace)` is upstream's
    controller finder: a ReplicaSet owned by a Deployment answers with the Deployment (a new pod's
    owner is still its ReplicaSet), None when the owner is not known yet (then no targetRef PUB
    matches); without it the pod's own controller is the workload."""
    metadata = pod.get("metadata") or {}
    owner = controller_of(pod)
    workload = owner
    if owner is not None and workload_of is not None:
        workload = workload_of(owner, metadata.get("namespace") or "")
    for pub in sorted(pubs, key=lambda p: meta_of(p).get("name", "")):
        ref = spec_of(pub).get("targetRef")
        if ref:
            if workload is not None and (
                ref.get("kind") == workload.get("kind")
                and ref.get("name") == workload.get("name")
                and ref.get("apiVersion", "").rpartition("/")[0]
                == workload.get("apiVersion", "").rpartition("/")[0]
            ):
                return pub["metadata"]["name"]
        elif selector_matches(pub, pod):
            return pub["metadata"]["name"]
    return None


def desired_available(pub: Obj, expected: int) -> int:
    """expected − maxUnavailable (rounded up), or minAvailable (a percentage rounded up)."""
    spec = pub.get("spec") or {}
    if spec.get("maxUnavailable") is not None:
        return max(expected - scaled_value(spec["maxUnavailable"], expected, round_up=True), 0)
    if spec.get("minAvailable") is not None:
        value = spec["minAvailable"]
        return value if isinstance(value, int) else scaled_value(value, expected, round_up=True)
    return 0


def is_recorded(pub: Obj, pod_name: str) -> bool:
    status = pub.get("status") or {}
    return pod_name in section(status, "disruptedPods") or pod_name in (status.get("unavailablePods") or {})


# ---- admission --------------------------------------------------------------------------------


class Refused(Exception):
    """The budget has no room; the message is what the user sees."""


REFUSAL_SUBJECT = "podunavailablebudget.policy.kruise.io"
"""What every refusal message names (upstream's `NewForbidden` on the PUB resource)."""


def is_refusal(message: str) -> bool:
    """Whether an admission denial's message is a PodUnavailableBudget refusal."""
    return f"{REFUSAL_SUBJECT} " in message and "is forbidden" in message


def needs_check(
    pub: Obj | None,
    pod: Obj,
    operation: str,
    *,
    vertical_scaling: bool = False,
    in_place_pod_vertical_scaling: bool = False,
) -> bool:
    """Whether this operation on this pod must take a slot of the budget at all. `vertical_scaling`
    is the InPlaceWorkloadVerticalScaling gate (a pod mid-resize is not consistent);
    `in_place_pod_vertical_scaling` the InPlacePodVerticalScaling gate (see `protect_operations`)."""
    if pub is None or is_no_protection(pod):
        return False
    if not is_pod_ready(pod) or not is_pod_state_consistent(pod, vertical_scaling=vertical_scaling):
        return False
    if ignored(pub, pod):
        return False
    if int(status_of(pub).get("desiredAvailable") or 0) == 0:
        return False
    if operation not in protect_operations(pub, in_place_pod_vertical_scaling=in_place_pod_vertical_scaling):
        return False
    return not is_recorded(pub, meta_of(pod).get("name", ""))


def take_slot(pub: Obj, pod_name: str, operation: str, now: datetime) -> dict[str, Any]:
    """`checkAndDecrement`: the PUB with one slot fewer and the pod recorded, or Refused."""
    name = meta_of(pub).get("name", "")
    status = pub.get("status") or {}
    forbidden = f'{REFUSAL_SUBJECT} "{name}" is forbidden'
    if int(status.get("unavailableAllowed") or 0) <= 0:
        raise Refused(f"{forbidden}: pub unavailable allowed is negative")
    disrupted = dict(section(status, "disruptedPods"))
    unavailable = dict(section(status, "unavailablePods"))
    if len(disrupted) + len(unavailable) > MAX_RECORDED_PODS:
        raise Refused(
            f"{forbidden}: DisruptedPods and UnavailablePods map too big - "
            "too many unavailable not confirmed by PUB controller"
        )
    if operation == PUB_OPERATION_UPDATE:
        unavailable[pod_name] = rfc3339(now)
    else:
        disrupted[pod_name] = rfc3339(now)
    updated = copy.deepcopy(dict(pub))
    updated["status"] = {
        **status,
        "unavailableAllowed": int(status.get("unavailableAllowed") or 0) - 1,
        "disruptedPods": disrupted,
        "unavailablePods": unavailable,
    }
    return updated


def reserved(pub: Obj, pod_name: str, operation: str, now: datetime, *, dry_run: bool = False) -> dict | None:
    """The PUB to write with a slot taken for `pod_name`, or None when nothing is to be written: the pod
    is already recorded, or this is a dry run whose check passed. Raises Refused when the budget is spent.

    The optimistic write loop around it is the caller's (`kruise.kube.retry.optimistic_update`), so the
    webhook and the manager share this rule without `kruise.control` doing I/O.
    """
    if is_recorded(pub, pod_name):
        return None
    updated = take_slot(pub, pod_name, operation, now)
    return None if dry_run else updated


# ---- the controller ---------------------------------------------------------------------------


def live_records(
    pub: Obj, pods: Iterable[Obj], now: datetime
) -> tuple[dict[str, str], dict[str, str], list[str], datetime | None]:
    """(disruptedPods, unavailablePods, names of pods that should have been deleted but were not,
    when to check again). Records of pods that are gone drop out; disruptions expire after 20 s,
    unavailable records after 10 s, as upstream's controller."""
    status = pub.get("status") or {}
    disrupted_in = status.get("disruptedPods") or {}
    unavailable_in = status.get("unavailablePods") or {}
    disrupted: dict[str, str] = {}
    unavailable: dict[str, str] = {}
    not_deleted: list[str] = []
    recheck: datetime | None = None
    for pod in pods:
        if not podstatus.is_active(pod):
            continue
        name = meta_of(pod).get("name", "")
        for records, kept, timeout in (
            (disrupted_in, disrupted, DELETION_TIMEOUT),
            (unavailable_in, unavailable, UPDATE_DELAY_CHECK),
        ):
            if name not in records:
                continue
            since = parse_time(records[name])
            due = (since or now) + timeout
            if due < now:
                if timeout is DELETION_TIMEOUT:
                    not_deleted.append(name)
                continue
            kept[name] = records[name]
            recheck = due if recheck is None or due < recheck else recheck
    return disrupted, unavailable, not_deleted, recheck


def current_available(
    pods: Iterable[Obj],
    disrupted: Mapping[str, str],
    unavailable: Mapping[str, str],
    *,
    vertical_scaling: bool = False,
) -> int:
    recorded = set(disrupted) | set(unavailable)
    return sum(
        1
        for pod in pods
        if podstatus.is_active(pod)
        and meta_of(pod).get("name") not in recorded
        and is_pod_state_consistent(pod, vertical_scaling=vertical_scaling)
        and is_pod_ready(pod)
    )


def compute_status(
    pub: Obj, pods: list[Obj], expected: int, now: datetime, *, vertical_scaling: bool = False
) -> tuple[dict[str, Any], list[str], datetime | None]:
    """(new status, pods expected deleted but still there, when to requeue). ``vertical_scaling``:
    the InPlaceWorkloadVerticalScaling gate (a pod mid-resize is not available)."""
    disrupted, unavailable, not_deleted, recheck = live_records(pub, pods, now)
    available = current_available(pods, disrupted, unavailable, vertical_scaling=vertical_scaling)
    desired = desired_available(pub, expected)
    status = {
        "observedGeneration": meta_of(pub).get("generation"),
        "disruptedPods": disrupted,
        "unavailablePods": unavailable,
        "unavailableAllowed": max(available - desired, 0),
        "currentAvailable": available,
        "desiredAvailable": desired,
        "totalReplicas": expected,
    }
    return status, not_deleted, recheck


def status_changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    keys = (
        "observedGeneration",
        "unavailableAllowed",
        "currentAvailable",
        "desiredAvailable",
        "totalReplicas",
    )
    if any(old.get(k) != new.get(k) for k in keys):
        return True
    return (
        section(old, "disruptedPods") != new["disruptedPods"]
        or (old.get("unavailablePods") or {}) != new["unavailablePods"]
    )
