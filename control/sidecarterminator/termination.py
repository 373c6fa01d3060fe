"""SidecarTerminator rules (pure): when a Job-like pod's sidecars must go, and how.

A pod with restartPolicy Never or OnFailure cannot complete while a long-running sidecar keeps
running after its main work is done. Containers that carry the env
`KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT=true` (or a non-empty
`KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE`) are sidecars; every other container is a main
container. Once every main container has terminated (Never) or succeeded (OnFailure), upstream's
controller (1.9) stops the sidecars that are still up:

- on a normal node, through one ContainerRecreateRequest named `sidecar-termination-<pod uid>`,
  owned by the pod, with `forceRecreate` and `failurePolicy: Ignore` (kruise-daemon stops the
  containers; restartPolicy keeps the kubelet from starting them again);
- on a virtual-kubelet node (label `type=virtual-kubelet`), where no kruise-daemon runs, by
  replacing each `..._WITH_IMAGE` sidecar's image with the env's value (an image that exits);
- sidecars that also carry `KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE=true` are stopped last, after
  the pod has been marked terminal (phase from the main containers, condition `SidecarTerminated`),
  so their exit code cannot turn a successful job into a failed pod.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kruise.api import keys
from kruise.api.controllerref import new_controller_ref
from kruise.api.crr import (
    CONDITION_SIDECAR_TERMINATED,
    FAILURE_POLICY_IGNORE,
    VIRTUAL_KUBELET_LABEL_KEY,
    VIRTUAL_KUBELET_LABEL_VALUE,
)
from kruise.api.objects import Obj, container_statuses_of, containers_of, meta_of, section, status_of

CRR_NAME_PREFIX = "sidecar-termination-"
TERMINATED_MESSAGE = "Terminated by Sidecar Terminator"


def _env_value(container: Obj, name: str) -> str | None:
    for env in container.get("env") or []:
        if env.get("name") == name:
            return env.get("value") or ""
    return None


def _env_true(container: Obj, name: str) -> bool:
    """Upstream looks for any entry of that name whose value is "true" in any case."""
    return any(
        env.get("name") == name and (env.get("value") or "").lower() == "true"
        for env in container.get("env") or []
    )


def is_normal_sidecar(container: Obj) -> bool:
    return _env_true(container, keys.ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT)


def is_ignore_exit_code_sidecar(container: Obj) -> bool:
    return is_normal_sidecar(container) and _env_true(container, keys.ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE)


def is_inplace_update_sidecar(container: Obj) -> bool:
    return any(
        env.get("name") == keys.ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE and env.get("value")
        for env in container.get("env") or []
    )


def is_sidecar(container: Obj) -> bool:
    return is_normal_sidecar(container) or is_inplace_update_sidecar(container)


def _containers(pod: Obj) -> list[Obj]:
    return list(containers_of(pod))


def _statuses(pod: Obj) -> list[Obj]:
    return list(container_statuses_of(pod))


def main_and_sidecar_names(pod: Obj) -> tuple[frozenset[str], frozenset[str]]:
    """(main containers, sidecars) by name, over spec.containers (init containers are not looked at)."""
    main = {c["name"] for c in _containers(pod) if not is_sidecar(c)}
    sidecars = {c["name"] for c in _containers(pod) if is_sidecar(c)}
    return frozenset(main), frozenset(sidecars)


def containers_completed(pod: Obj, names: Iterable[str]) -> bool:
    """Every named container reports a terminated state; False while the kubelet has not reported a
    status for every container yet."""
    wanted = set(names)
    if len(_containers(pod)) != len(_statuses(pod)):
        return False
    return all(
        section(s, "state").get("terminated") is not None for s in _statuses(pod) if s.get("name") in wanted
    )


def containers_succeeded(pod: Obj, names: Iterable[str]) -> bool:
    """Every named container terminated with exit code 0 (same status-count rule as completed)."""
    wanted = set(names)
    if len(_containers(pod)) != len(_statuses(pod)):
        return False
    for status in _statuses(pod):
        if status.get("name") not in wanted:
            continue
        terminated = section(status, "state").get("terminated")
        if terminated is None or int(terminated.get("exitCode") or 0) != 0:
            return False
    return True


def is_interesting(pod: Obj) -> bool:
    """A pod the controller acts on: alive, started, Job-like, with a sidecar still up, and its main
    work done (all main containers terminated for Never, succeeded for OnFailure)."""
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    policy = spec.get("restartPolicy") or "Always"
    if meta.get("deletionTimestamp") or status.get("phase") == "Pending" or policy == "Always":
        return False
    main, sidecars = main_and_sidecar_names(pod)
    if not sidecars or containers_completed(pod, sidecars):
        return False
    if policy == "Never":
        return containers_completed(pod, main)
    if policy == "OnFailure":
        return containers_succeeded(pod, main)
    return False


def is_virtual_kubelet(node: Obj | None) -> bool:
    labels = meta_of(node or {}).get("labels") or {}
    return labels.get(VIRTUAL_KUBELET_LABEL_KEY) == VIRTUAL_KUBELET_LABEL_VALUE


@dataclass(frozen=True)
class SidecarGroups:
    """The pod's sidecars by how they are stopped."""

    normal: frozenset[str]
    """Stopped through the CRR at once."""
    ignore_exit_code: frozenset[str]
    """Stopped through the CRR after the pod has been marked terminal."""
    inplace_update: frozenset[str]
    """Stopped by swapping in the image named by the `..._WITH_IMAGE` env (virtual-kubelet only)."""


def sidecar_groups(pod: Obj, virtual_kubelet: bool) -> SidecarGroups:
    """On a virtual-kubelet node only `..._WITH_IMAGE` sidecars are handled; elsewhere only the env
    `..._WHEN_JOB_EXIT` ones (a container with both is a normal sidecar off virtual-kubelet)."""
    normal: set[str] = set()
    ignore: set[str] = set()
    inplace: set[str] = set()
    for container in _containers(pod):
        name = container["name"]
        if virtual_kubelet:
            if is_inplace_update_sidecar(container):
                inplace.add(name)
        elif is_ignore_exit_code_sidecar(container):
            ignore.add(name)
        elif is_normal_sidecar(container):
            normal.add(name)
    return SidecarGroups(frozenset(normal), frozenset(ignore), frozenset(inplace))


def uncompleted(pod: Obj, names: Iterable[str]) -> list[str]:
    """The named containers without a terminated state, sorted (a container with no status yet counts)."""
    done = {s.get("name") for s in _statuses(pod) if section(s, "state").get("terminated") is not None}
    return sorted(set(names) - done)


def crr_name(pod: Obj) -> str:
    return f"{CRR_NAME_PREFIX}{pod['metadata']['uid']}"


def kill_request(pod: Obj, containers: Iterable[str]) -> dict[str, Any]:
    """The ContainerRecreateRequest that stops `containers` (upstream sets nothing else: no labels,
    no TTL, no deadline; kruise-webhook fills labels and status contexts on create)."""
    meta = pod["metadata"]
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ContainerRecreateRequest",
        "metadata": {
            "name": crr_name(pod),
            "namespace": meta["namespace"],
            "ownerReferences": [new_controller_ref({"apiVersion": "v1", "kind": "Pod", "metadata": meta})],
        },
        "spec": {
            "podName": meta["name"],
            "containers": [{"name": name} for name in sorted(containers)],
            "strategy": {"forceRecreate": True, "failurePolicy": FAILURE_POLICY_IGNORE},
        },
    }


def image_patch(pod: Obj, containers: Iterable[str]) -> dict[str, Any] | None:
    """A strategic-merge patch setting each named sidecar's image to its `..._WITH_IMAGE` env value;
    None when every one already runs that image."""
    wanted = set(containers)
    changes = []
    for container in _containers(pod):
        if container["name"] not in wanted:
            continue
        image = _env_value(container, keys.ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE) or ""
        if container.get("image") != image:
            changes.append({"name": container["name"], "image": image})
    return {"spec": {"containers": changes}} if changes else None


def terminated_status_patch(pod: Obj, now: str) -> dict[str, Any] | None:
    """The status patch that ends the pod ahead of its ignore-exit-code sidecars: phase Succeeded when
    every main container exited 0, else Failed, and condition SidecarTerminated; None when the pod
    is already terminal (a pod never leaves a terminal phase)."""
    if status_of(pod).get("phase") in ("Succeeded", "Failed"):
        return None
    main, _ = main_and_sidecar_names(pod)
    return {
        "status": {
            "phase": "Succeeded" if containers_succeeded(pod, main) else "Failed",
            "conditions": [
                {
                    "type": CONDITION_SIDECAR_TERMINATED,
                    "status": "True",
                    "lastTransitionTime": now,
                    "message": TERMINATED_MESSAGE,
                }
            ],
        }
    }


def go_list(names: Iterable[str]) -> str:
    """A name list as upstream's event text prints a Go []string (`[a b]`)."""
    return "[" + " ".join(names) + "]"
