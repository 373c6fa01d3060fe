"""Container launch priority: which barrier key each container waits for.

A container with priority p gets env `KRUISE_CONTAINER_BARRIER` from ConfigMap `<pod>-barrier`, key
`p_<p>`; the kubelet cannot start it until that key exists, and the manager adds keys from the
highest priority down as earlier groups become Ready. Shared by the pod webhook (injection) and the
manager's launch-priority controller (ordering), hence pure functions over pod dicts.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

from kruise.api.keys import (
    ANNOTATION_CONTAINER_LAUNCH_PRIORITY,
    CONTAINER_LAUNCH_PRIORITY_ORDERED,
    ENV_CONTAINER_BARRIER,
    ENV_CONTAINER_PRIORITY,
)
from kruise.api.objects import (
    annotations_of,
    container_statuses_of,
    containers_of,
    section,
)

_INT = re.compile(r"^[+-]?[0-9]+$")
# k8s.io/apimachinery/pkg/util/rand alphabet: no vowels, no confusable digits.
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
MAX_GENERATED_NAME_PREFIX = 58  # 63 - 5 random characters


class PriorityError(ValueError):
    """A KRUISE_CONTAINER_PRIORITY value that is not an integer; the message names the field."""


def barrier_configmap_name(pod_name: str) -> str:
    return f"{pod_name}-barrier"


BARRIER_KEY_PREFIX = "p_"


def barrier_key(priority: int) -> str:
    return f"{BARRIER_KEY_PREFIX}{priority}"


def container_priorities(pod: dict[str, Any]) -> list[int] | None:
    """Priority per app container, or None when launch priority does not apply to this pod."""
    containers = containers_of(pod)
    if len(containers) <= 1:
        return None
    annotations = annotations_of(pod)
    if annotations.get(ANNOTATION_CONTAINER_LAUNCH_PRIORITY) == CONTAINER_LAUNCH_PRIORITY_ORDERED:
        return [-i for i in range(len(containers))]
    priorities = []
    for i, container in enumerate(containers):
        value = 0
        for env in container.get("env") or []:
            if env.get("name") == ENV_CONTAINER_PRIORITY:
                raw = str(env.get("value", ""))
                if not _INT.match(raw.strip()):
                    raise PriorityError(
                        f"spec.containers[{i}].env[{ENV_CONTAINER_PRIORITY}]: Invalid value: {raw!r}: "
                        "must be an integer"
                    )
                value = int(raw)
        priorities.append(value)
    if len(set(priorities)) == 1:
        return None
    return priorities


def generate_name(generate_name: str) -> str:
    """names.SimpleNameGenerator: prefix (truncated) + 5 random characters."""
    prefix = generate_name[:MAX_GENERATED_NAME_PREFIX]
    return prefix + "".join(secrets.choice(_NAME_ALPHABET) for _ in range(5))


def inject_barriers(pod: dict[str, Any]) -> bool:
    """Add the barrier env to every app container, in place; True when the pod changed.

    A pod with only generateName gets its final name here, because the ConfigMap name derives from it.
    Containers that already carry the barrier are left alone (mutating webhooks may be reinvoked).
    """
    priorities = container_priorities(pod)
    if priorities is None:
        return False
    containers = pod["spec"]["containers"]
    if any(any(e.get("name") == ENV_CONTAINER_BARRIER for e in c.get("env") or []) for c in containers):
        return False
    meta = pod.setdefault("metadata", {})
    if not meta.get("name"):
        meta["name"] = generate_name(meta.get("generateName") or "")
    configmap = barrier_configmap_name(meta["name"])
    for container, priority in zip(containers, priorities, strict=True):
        container.setdefault("env", []).append(
            {
                "name": ENV_CONTAINER_BARRIER,
                "valueFrom": {"configMapKeyRef": {"name": configmap, "key": barrier_key(priority)}},
            }
        )
    return True


def container_barrier_priority(container: dict[str, Any]) -> int | None:
    """The priority a container waits for, read back from its injected barrier env (`p_<n>`)."""
    for env in container.get("env") or []:
        if env.get("name") == ENV_CONTAINER_BARRIER:
            key = section(env, "valueFrom", "configMapKeyRef").get("key", "")
            try:
                return int(key[len(BARRIER_KEY_PREFIX) :])
            except ValueError:
                return 0
    return None


def pending_priorities(pod: dict[str, Any]) -> list[int]:
    """Priorities of the barrier-gated containers not Ready yet, ascending (`findNextPriorities`)."""
    ready = {s.get("name") for s in container_statuses_of(pod) if s.get("ready")}
    found = []
    for container in containers_of(pod):
        if container.get("name") in ready:
            continue
        priority = container_barrier_priority(container)
        if priority is not None:
            found.append(priority)
    return sorted(found)


def launch_step(pending: list[int], present_keys: set[str]) -> tuple[str | None, bool]:
    """(barrier key to add now, whether the pod's launch is complete after that).

    Keys are released from the highest pending priority down, one group at a time; the launch is
    complete once the lowest pending priority's key is present (or nothing is pending).
    """
    if not pending or barrier_key(pending[0]) in present_keys:
        return None, True
    highest = barrier_key(pending[-1])
    add = None if highest in present_keys else highest
    return add, pending[-1] == pending[0]
