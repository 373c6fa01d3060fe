"""kube-apiserver's Priority admission plugin, for pod CREATE.

A pod's `priority` (and `preemptionPolicy`) come from its PriorityClass, resolved at admission: the
class named by `priorityClassName`, else the class marked `globalDefault`, else priority 0 and
`PreemptLowerPriority`. The plugin runs before the mutating webhooks and again after one changed the
pod (the reinvocation), so a webhook that sets `priorityClassName` and clears `priority` gets the new
class's value — what OpenKruise's WorkloadSpread patch relies on. A value in the spec that differs from
the computed one, or a class that does not exist, is refused with 403 Forbidden as kube-apiserver's
plugin does. `system-cluster-critical` and `system-node-critical` exist in every cluster (the
apiserver bootstraps them); the sandbox knows them without storing them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kruise.sandbox.apiserver.errors import StatusError

DEFAULT_PREEMPTION = "PreemptLowerPriority"
SYSTEM_CLASSES = {
    "system-cluster-critical": 2000000000,
    "system-node-critical": 2000001000,
}


def _forbidden(pod: dict[str, Any], message: str) -> StatusError:
    name = (pod.get("metadata") or {}).get("name", "")
    return StatusError(
        403, "Forbidden", f'pods "{name}" is forbidden: {message}', {"name": name, "kind": "pods"}
    )


def _resolve(
    pod: dict[str, Any],
    get_class: Callable[[str], dict[str, Any] | None],
    classes: Callable[[], Iterable[dict[str, Any]]],
) -> tuple[int, str]:
    name = (pod.get("spec") or {}).get("priorityClassName") or ""
    if not name:
        default = next((c for c in classes() if c.get("globalDefault")), None)
        if default is None:
            return 0, DEFAULT_PREEMPTION
        return int(default.get("value", 0)), default.get("preemptionPolicy") or DEFAULT_PREEMPTION
    found = get_class(name)
    if found is not None:
        return int(found.get("value", 0)), found.get("preemptionPolicy") or DEFAULT_PREEMPTION
    if name in SYSTEM_CLASSES:
        return SYSTEM_CLASSES[name], DEFAULT_PREEMPTION
    raise _forbidden(pod, f"no PriorityClass with name {name} was found")


def admit_pod(
    pod: dict[str, Any],
    get_class: Callable[[str], dict[str, Any] | None],
    classes: Callable[[], Iterable[dict[str, Any]]],
) -> None:
    """The plugin's Admit: fill `priority` and `preemptionPolicy` from the pod's class, refusing a
    spec value that contradicts it."""
    spec = pod.setdefault("spec", {})
    priority, preemption = _resolve(pod, get_class, classes)
    if spec.get("priority") is not None and spec["priority"] != priority:
        raise _forbidden(
            pod,
            f"the integer value of priority ({spec['priority']}) must not be provided in pod spec; "
            f"priority admission controller computed {priority} from the given PriorityClass name",
        )
    spec["priority"] = priority
    if spec.get("preemptionPolicy") and spec["preemptionPolicy"] != preemption:
        raise _forbidden(
            pod,
            f"the string value of PreemptionPolicy ({spec['preemptionPolicy']}) must not be provided in "
            f"pod spec; priority admission controller computed {preemption} from the given PriorityClass "
            "name",
        )
    spec["preemptionPolicy"] = preemption
