"""ImageListPullJob planning (pure): one ImagePullJob per listed image, and the list job's status.

An ImageListPullJob pulls nothing itself. It owns one ImagePullJob per entry of `spec.images`, each
carrying the list job's whole ImagePullJob template (selector, parallelism, pull policy, secrets,
completion policy, sandbox config) plus its image, and adds up their statuses. The template is
hashed into the `controller-revision-hash` label of the list job and of every child: a child whose
hash differs from the list job's (the template was edited) is replaced, and a child whose image left
the list is deleted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kruise.api.controllerref import controller_of, new_controller_ref
from kruise.api.keys import LABEL_CONTROLLER_REVISION_HASH
from kruise.api.objects import Obj, labels_of, meta_of, section, spec_of
from kruise.control.common.revision import fnv1a_32, go_json, safe_encode_string

KIND = "ImageListPullJob"
API_VERSION = "apps.kruise.io/v1alpha1"
CHILD_KIND = "ImagePullJob"


def template(ilpj: Obj) -> dict[str, Any]:
    """The ImagePullJob template inside the list job's spec: everything but `images`."""
    return {k: v for k, v in spec_of(ilpj).items() if k != "images"}


def template_hash(ilpj: Obj) -> str:
    """FNV-1a of the template's JSON, safe-encoded like every Kruise template hash."""
    return safe_encode_string(str(fnv1a_32(go_json(template(ilpj)))))


def is_controlled_by(child: Obj, ilpj: Obj) -> bool:
    ref = controller_of(child)
    return ref is not None and ref.get("kind") == KIND and ref.get("uid") == ilpj["metadata"].get("uid")


def new_child(ilpj: Obj, image: str, hash_: str) -> dict[str, Any]:
    """The ImagePullJob for one image, named `<list job>-<random>` by the apiserver as upstream."""
    meta = ilpj["metadata"]
    return {
        "apiVersion": API_VERSION,
        "kind": CHILD_KIND,
        "metadata": {
            "generateName": f"{meta['name']}-",
            "namespace": meta["namespace"],
            "labels": {LABEL_CONTROLLER_REVISION_HASH: hash_},
            "ownerReferences": [new_controller_ref(ilpj, api_version=API_VERSION, kind=KIND)],
        },
        "spec": {**template(ilpj), "image": image},
    }


def _is_current(child: Obj, ilpj: Obj, hash_: str) -> bool:
    """Same template: the hash label matches, or (an unlabelled child) the spec is the template."""
    labels = labels_of(child)
    if LABEL_CONTROLLER_REVISION_HASH in labels:
        return labels[LABEL_CONTROLLER_REVISION_HASH] == hash_
    child_template = {k: v for k, v in spec_of(child).items() if k != "image"}
    return child_template == template(ilpj)


def _image(child: Obj) -> str:
    return str(spec_of(child).get("image") or "")


def live_children(ilpj: Obj, candidates: Iterable[Obj]) -> list[Obj]:
    """The list job's ImagePullJobs that are not being deleted, oldest first."""
    owned = [c for c in candidates if is_controlled_by(c, ilpj) and not meta_of(c).get("deletionTimestamp")]
    return sorted(owned, key=lambda c: (c["metadata"].get("creationTimestamp") or "", c["metadata"]["name"]))


def by_image(children: Iterable[Obj]) -> dict[str, Obj]:
    """One child per image — the oldest; see `Actions.delete` for the others."""
    found: dict[str, Obj] = {}
    for child in children:
        found.setdefault(_image(child), child)
    return found


@dataclass
class Actions:
    """What one pass writes: ImagePullJobs to create (by image) and to delete."""

    create: list[str] = field(default_factory=list)
    delete: list[Obj] = field(default_factory=list)


def actions(ilpj: Obj, children: list[Obj], hash_: str) -> Actions:
    """Create a job for each image without a current one; delete jobs of images no longer listed,
    jobs built from an older template (replaced by a new one) and second jobs for one image."""
    images = list(spec_of(ilpj).get("images") or [])
    current = by_image(children)
    plan = Actions()
    for image in images:
        child = current.get(image)
        if child is None:
            plan.create.append(image)
        elif not _is_current(child, ilpj, hash_):
            plan.create.append(image)
            plan.delete.append(child)
    kept = {id(c) for c in current.values()}
    for child in children:
        if id(child) not in kept or _image(child) not in images:
            plan.delete.append(child)
    seen: set[int] = set()
    plan.delete = [c for c in plan.delete if not (id(c) in seen or seen.add(id(c)))]
    return plan


def failed_message(child_name: str) -> str:
    return f"Please check for details which nodes failed by 'kubectl get ImagePullJob {child_name}'."


def status(ilpj: Obj, children: list[Obj], now: str) -> dict[str, Any]:
    """The list job's status from its children's (only children that started count).

    completed: every target node of the child finished (succeeded or failed); succeeded: every one
    succeeded; active: the child has a node pulling; a child with any failed node is listed in
    `failedImageStatuses`. A list job that is not `Never` completes once every image completed.
    """
    images = list(spec_of(ilpj).get("images") or [])
    current = by_image(children)
    active = completed = succeeded = 0
    failed: list[dict[str, str]] = []
    for image in images:
        child = current.get(image)
        child_status = (child or {}).get("status") or {}
        if child is None or not child_status.get("startTime"):
            continue
        desired = int(child_status.get("desired") or 0)
        child_succeeded = int(child_status.get("succeeded") or 0)
        child_failed = int(child_status.get("failed") or 0)
        if int(child_status.get("active") or 0) > 0:
            active += 1
        if child_failed > 0:
            name = child["metadata"]["name"]
            failed.append({"imagePullJob": name, "name": image, "message": failed_message(name)})
        if desired == child_failed + child_succeeded:
            completed += 1
        if desired == child_succeeded:
            succeeded += 1
    old = ilpj.get("status") or {}
    new: dict[str, Any] = {
        "startTime": old.get("startTime") or now,
        "desired": len(images),
        "active": active,
        "completed": completed,
        "succeeded": succeeded,
    }
    if failed:
        new["failedImageStatuses"] = failed
    policy = section(ilpj, "spec", "completionPolicy").get("type")
    if policy != "Never" and new["desired"] == completed:
        new["completionTime"] = now
    return new
