"""Whether a pod runs what its spec says, for PodUnavailableBudget (upstream `IsPodStateConsistent`).

A pod updated in place keeps Ready until the kubelet restarts the container, and the PUB's record of
the update expires after 10 s; without this check such a pod would count as available again while it
is still about to go down. Upstream decides in three steps, and so does this module:

1. Every app container named by digest (`repo@sha256:…`) must report that image as its imageID (scheme
   stripped, repo and digest compared as written); if *every* container is a digest image, that alone
   decides.
2. Otherwise, when the pod lists injected SidecarSets and has containers marked `IS_INJECTED=true`,
   those sidecars must have been restarted since the SidecarSets' last in-place write.
3. And the workload's own in-place update (`apps.kruise.io/inplace-update-state`) must be complete;
   a state annotation that cannot be decoded counts as not complete, as upstream's error does.
"""

from __future__ import annotations

from kruise.api.imageref import image_id_reference, images_equal, is_digest
from kruise.api.keys import ANNOTATION_SIDECARSET_INJECTED_LIST, ENV_IS_INJECTED
from kruise.api.objects import Obj, annotations_of, container_statuses_of, containers_of
from kruise.control.common.inplace.engine import update_completed_problem
from kruise.control.sidecarset.inplacestate import sidecar_update_completed


def _env_value(container: Obj, key: str) -> str:
    """The first env entry named `key` (upstream `GetContainerEnvValue`); "" when absent."""
    for env in container.get("env") or []:
        if env.get("name") == key:
            return env.get("value") or ""
    return ""


def injected_sidecars(pod: Obj) -> tuple[set[str], set[str]]:
    """(SidecarSet names from `kruise.io/sidecarset-injected-list`, containers with `IS_INJECTED=true`)."""
    listed = annotations_of(pod).get(ANNOTATION_SIDECARSET_INJECTED_LIST, "")
    sidecarsets = set(listed.split(",")) if listed else set()
    containers = {c.get("name", "") for c in containers_of(pod) if _env_value(c, ENV_IS_INJECTED) == "true"}
    return sidecarsets, containers


def image_id_of(pod: Obj, name: str) -> str | None:
    """The imageID the kubelet reports for container `name`, scheme stripped (the last status of that
    name, as upstream's map keeps); None when it reports no status for it."""
    found = None
    for status in container_statuses_of(pod):
        if status.get("name") == name:
            found = image_id_reference(status.get("imageID") or "")
    return found


def digest_problem(pod: Obj) -> tuple[bool, str | None]:
    """(every container is a digest image, the first digest container not running its digest)."""
    all_digest = True
    for container in containers_of(pod):
        image = container.get("image") or ""
        if not is_digest(image):
            all_digest = False
            continue
        image_id = image_id_of(pod, container.get("name", ""))
        if image_id is None or not images_equal(image, image_id):
            return all_digest, container.get("name", "")
    return all_digest, None


def is_pod_state_consistent(pod: Obj, *, vertical_scaling: bool = False) -> bool:
    """Upstream `IsPodStateConsistent` (steps in the module docstring); `vertical_scaling` is the
    InPlaceWorkloadVerticalScaling gate, under which a pod still resizing is inconsistent too."""
    all_digest, mismatched = digest_problem(pod)
    if mismatched is not None:
        return False
    if all_digest:
        return True
    sidecarsets, sidecars = injected_sidecars(pod)
    if sidecarsets and sidecars and not sidecar_update_completed(pod, sidecarsets, sorted(sidecars)):
        return False
    try:
        return update_completed_problem(pod, vertical_scaling=vertical_scaling) is None
    except (ValueError, TypeError, AttributeError):
        return False
