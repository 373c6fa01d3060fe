"""The spec changes behind `rollout pause|resume|restart` and `scaledown`, as pure functions.

Each returns what to send (a merge patch, or a whole modified object where kruise-tools replaces
the object) or raises `MutationError` with upstream's sentence, which the command prefixes with
`<resource> "<name>"` as kubectl does.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kruise.cli.kubectl_kruise import kinds
from kruise.cli.kubectl_kruise.errors import PluginError

RESTARTED_AT_ANNOTATION = "kubectl.kubernetes.io/restartedAt"
# kruise-tools restarts Kruise workloads by stamping this env var into every container.
RESTARTED_ENV = "RESTARTED_AT"


class MutationError(PluginError):
    """The object cannot be changed that way (upstream's wording, without the object prefix)."""


class UnsupportedError(MutationError):
    """The workload kind does not support the operation at all."""


Obj = Mapping[str, Any]


def _paused_path(workload: kinds.Workload) -> tuple[str, ...]:
    """Where each kind keeps its pause switch."""
    if workload is kinds.DEPLOYMENT:
        return ("spec", "paused")
    if workload is kinds.CLONESET:
        return ("spec", "updateStrategy", "paused")
    if workload in (kinds.ADVANCED_STATEFULSET, kinds.ADVANCED_DAEMONSET):
        return ("spec", "updateStrategy", "rollingUpdate", "paused")
    raise UnsupportedError


def _get(obj: Obj, path: tuple[str, ...]) -> Any:
    node: Any = obj
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def _nested_patch(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    patch: Any = value
    for key in reversed(path):
        patch = {key: patch}
    return patch


def is_paused(workload: kinds.Workload, obj: Obj) -> bool:
    return bool(_get(obj, _paused_path(workload)))


def pause_patch(workload: kinds.Workload, obj: Obj) -> dict[str, Any]:
    try:
        path = _paused_path(workload)
    except UnsupportedError:
        raise UnsupportedError("pausing is not supported") from None
    if _get(obj, path):
        raise MutationError("is already paused")
    return _nested_patch(path, True)


def resume_patch(workload: kinds.Workload, obj: Obj) -> dict[str, Any]:
    try:
        path = _paused_path(workload)
    except UnsupportedError:
        raise UnsupportedError("resuming is not supported") from None
    if not _get(obj, path):
        raise MutationError("is not paused")
    return _nested_patch(path, False)


def restart_annotation_patch(workload: kinds.Workload, obj: Obj, now: str) -> dict[str, Any]:
    """Built-in kinds: a new template annotation makes their controllers roll every pod."""
    if workload.is_kruise:
        raise UnsupportedError("restarting is not supported")
    if workload is kinds.DEPLOYMENT and _get(obj, ("spec", "paused")):
        raise MutationError("can't restart paused deployment (run rollout resume first)")
    return {"spec": {"template": {"metadata": {"annotations": {RESTARTED_AT_ANNOTATION: now}}}}}


def with_restart_env(obj: Obj, now: str) -> dict[str, Any]:
    """Kruise kinds: a copy whose every container carries `RESTARTED_AT=<now>` (replacing an
    older value in place, else appended), which changes the template hash and so recreates pods."""
    out = copy.deepcopy(dict(obj))
    containers = (((out.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []
    for container in containers:
        env = list(container.get("env") or [])
        for i, var in enumerate(env):
            if var.get("name") == RESTARTED_ENV:
                env[i] = {"name": RESTARTED_ENV, "value": now}
                break
        else:
            env.append({"name": RESTARTED_ENV, "value": now})
        container["env"] = env
    return out


def parse_pod_list(pods: str) -> list[str]:
    """`--pods a,b` (spaces around names tolerated); duplicates keep their first place."""
    names: list[str] = []
    for part in pods.split(","):
        name = part.strip()
        if name and name not in names:
            names.append(name)
    if not names:
        raise MutationError("must specify one pod name")
    return names


def scaledown(cloneset: Obj, pods: list[str]) -> dict[str, Any]:
    """A copy of the CloneSet with `pods` added to `scaleStrategy.podsToDelete` and `replicas`
    lowered by the number of pods newly listed, so the controller deletes exactly those pods
    instead of scaling in by its own choice. Pods already listed are not counted twice."""
    out = copy.deepcopy(dict(cloneset))
    spec = out.setdefault("spec", {})
    strategy = spec.setdefault("scaleStrategy", {})
    existing = list(strategy.get("podsToDelete") or [])
    added = [pod for pod in pods if pod not in existing]
    replicas = 1 if spec.get("replicas") is None else int(spec["replicas"])
    if len(added) > replicas:
        raise MutationError(f"cannot delete {len(added)} pods from {replicas} replicas")
    strategy["podsToDelete"] = existing + added
    spec["replicas"] = replicas - len(added)
    return out
