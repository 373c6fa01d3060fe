"""A BroadcastJob's pods: which belong to it, where they run, how they count, and how a new one looks.

Counting follows upstream ``filterPods``: phase Succeeded counts as succeeded, phase Failed as
failed; of the rest, a pod being deleted counts nowhere, an ``OnFailure`` pod whose containers
restarted more than ``failurePolicy.restartLimit`` times in total counts as failed, and the others
are active. A new pod is the template with the job's two labels, a controller reference, a
``generateName`` of ``<job>-``, bound to its node through a required node affinity on
``metadata.name`` (upstream's ``--assign-bcj-pods-by-scheduler``, default on) or through
``spec.nodeName`` when the scheduler is bypassed.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kruise.api import broadcastjob as api
from kruise.api.controllerref import controller_of, new_controller_ref
from kruise.api.keys import LABEL_BROADCASTJOB_CONTROLLER_UID, LABEL_BROADCASTJOB_NAME
from kruise.api.objects import Obj, section, spec_of, status_of
from kruise.control.common.nodeeligibility import OBJECT_NAME_FIELD, replace_node_name_affinity

PHASE_SUCCEEDED = "Succeeded"
PHASE_FAILED = "Failed"
RESTART_ON_FAILURE = "OnFailure"


def job_labels(name: str, uid: str) -> dict[str, str]:
    """The labels every pod of the job carries, and the selector its pods are listed with."""
    return {LABEL_BROADCASTJOB_NAME: name, LABEL_BROADCASTJOB_CONTROLLER_UID: uid}


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def pod_name(pod: Obj) -> str:
    return _meta(pod).get("name") or ""


def is_deleting(pod: Obj) -> bool:
    return bool(_meta(pod).get("deletionTimestamp"))


def pod_phase(pod: Obj) -> str:
    return status_of(pod).get("phase") or ""


def controlling_job_uid(pod: Obj) -> str | None:
    """The uid of the pod's controller when that controller is a BroadcastJob."""
    ref = controller_of(pod)
    return ref.get("uid") if ref is not None and ref.get("kind") == api.KIND else None


def owned_pods(pods: Sequence[Obj], name: str, uid: str) -> list[Obj]:
    """The pods carrying the job's labels whose controller reference is this job (upstream lists by
    the labels, then keeps the pods controlled by a BroadcastJob with the job's uid)."""
    wanted = job_labels(name, uid)
    result = []
    for pod in pods:
        labels = _meta(pod).get("labels") or {}
        if all(labels.get(k) == v for k, v in wanted.items()) and controlling_job_uid(pod) == uid:
            result.append(pod)
    return result


def assigned_node(pod: Obj) -> str:
    """upstream ``getAssignedNode``: ``spec.nodeName``, else the first single-valued
    ``metadata.name In`` match field of any required node-affinity term, else ""."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return spec["nodeName"]
    node_affinity = section(spec, "affinity").get("nodeAffinity") or {}
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    for term in required.get("nodeSelectorTerms") or []:
        for req in term.get("matchFields") or []:
            values = req.get("values") or []
            if req.get("key") == OBJECT_NAME_FIELD and req.get("operator") == "In" and len(values) == 1:
                return values[0]
    return ""


def restart_count(pod: Obj) -> int:
    status = pod.get("status") or {}
    statuses = list(status.get("initContainerStatuses") or []) + list(status.get("containerStatuses") or [])
    return sum(int(s.get("restartCount") or 0) for s in statuses)


def exceeded_restart_limit(pod: Obj, restart_limit: int) -> bool:
    """upstream ``isPodFailed``: only an OnFailure pod can fail by restarting too often."""
    if spec_of(pod).get("restartPolicy") != RESTART_ON_FAILURE:
        return False
    return restart_count(pod) > restart_limit


@dataclass(frozen=True)
class PodGroups:
    """The job's pods split as upstream counts them; deleting pods that are not finished are in none."""

    active: tuple[Obj, ...]
    failed: tuple[Obj, ...]
    succeeded: tuple[Obj, ...]


def group_pods(pods: Sequence[Obj], restart_limit: int) -> PodGroups:
    active: list[Obj] = []
    failed: list[Obj] = []
    succeeded: list[Obj] = []
    for pod in pods:
        phase = pod_phase(pod)
        if phase == PHASE_SUCCEEDED:
            succeeded.append(pod)
        elif phase == PHASE_FAILED:
            failed.append(pod)
        elif is_deleting(pod):
            continue
        elif exceeded_restart_limit(pod, restart_limit):
            failed.append(pod)
        else:
            active.append(pod)
    return PodGroups(tuple(active), tuple(failed), tuple(succeeded))


def is_pod_active(pod: Obj) -> bool:
    """kube ``IsPodActive``: not Succeeded, not Failed, not being deleted."""
    return pod_phase(pod) not in (PHASE_SUCCEEDED, PHASE_FAILED) and not is_deleting(pod)


def generate_name_prefix(job_name: str) -> str:
    """kube ``getPodsPrefix``: ``<job>-`` (a job name is a DNS subdomain, so the prefix is one too)."""
    return f"{job_name}-"


def new_pod(
    template: Obj, job_name: str, namespace: str, uid: str, node: str, *, by_scheduler: bool = True
) -> dict[str, Any]:
    """kube ``GetPodFromTemplate`` plus the node binding: labels, annotations and finalizers of the
    template (with the job's labels added), ``generateName``, the controller reference, and the
    template's spec bound to ``node``."""
    meta = _meta(template)
    spec = copy.deepcopy(dict(spec_of(template)))
    if by_scheduler:
        spec["affinity"] = replace_node_name_affinity(spec.get("affinity"), node)
    elif node:
        spec["nodeName"] = node
    metadata: dict[str, Any] = {
        "generateName": generate_name_prefix(job_name),
        "namespace": namespace,
        "labels": {**section(meta, "labels"), **job_labels(job_name, uid)},
        "ownerReferences": [
            new_controller_ref(
                {"metadata": {"name": job_name, "uid": uid}},
                api_version=f"{api.GROUP}/{api.VERSION}",
                kind=api.KIND,
            )
        ],
    }
    if meta.get("annotations"):
        metadata["annotations"] = dict(meta["annotations"])
    if meta.get("finalizers"):
        metadata["finalizers"] = list(meta["finalizers"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
