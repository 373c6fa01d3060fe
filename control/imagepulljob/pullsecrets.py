"""Where an ImagePullJob's `spec.pullSecrets` go so that kruise-daemon can read them (pure).

kruise-daemon may read Secrets only in one namespace, `kruise-daemon-config` (`KRUISE_DAEMON_CONFIG_NS`),
so upstream's manager copies each Secret a job names into that namespace and points the NodeImage at
the copy, never at the original. One copy serves every job naming the same source Secret:

- the copy's annotation `imagepulljobs.kruise.io/source-key` is the source `namespace/name`;
- `imagepulljobs.kruise.io/references` lists the jobs using it (`namespace/name`, sorted, comma-joined);
- `imagepulljobs.kruise.io/mode: batch` marks the new-style copy, and the NodeImage reference to it
  carries `mode: batch` (the nodeimage-controller then drops that reference only with the image spec).

While a job runs its copies are claimed (created, or the job added to `references`, the data refreshed
from the source); when the job completes, is deleted, or stops naming a Secret, the job is released
from those copies, and a copy that no job references is deleted. A job in the daemon's own namespace
needs no copies: its Secrets are referenced as they are.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kruise.api.keys import (
    ANNOTATION_IMAGEPULLJOB_MODE,
    ANNOTATION_IMAGEPULLJOB_REFERENCES,
    ANNOTATION_IMAGEPULLJOB_SOURCE_KEY,
)
from kruise.api.objects import Obj, annotations_of, status_of

DEFAULT_NAMESPACE = "kruise-daemon-config"
NAMESPACE_ENV = "KRUISE_DAEMON_CONFIG_NS"
BATCH_MODE = "batch"


def daemon_config_namespace(env: Mapping[str, str]) -> str:
    """Upstream's `KRUISE_DAEMON_CONFIG_NS`, else `kruise-daemon-config`."""
    return env.get(NAMESPACE_ENV) or DEFAULT_NAMESPACE


def job_key(job: Obj) -> str:
    meta = job["metadata"]
    return f"{meta.get('namespace')}/{meta['name']}"


def referencing_jobs(secret: Obj) -> set[str]:
    """The job keys in the copy's `references` annotation (entries without a namespace are skipped)."""
    raw = annotations_of(secret).get(ANNOTATION_IMAGEPULLJOB_REFERENCES) or ""
    return {ref for ref in (part.strip() for part in raw.split(",")) if ref.count("/") == 1}


def source_key(secret: Obj) -> str:
    return annotations_of(secret).get(ANNOTATION_IMAGEPULLJOB_SOURCE_KEY) or ""


def running(job: Obj) -> bool:
    return not job["metadata"].get("deletionTimestamp") and not status_of(job).get("completionTime")


@dataclass
class Classified:
    """`claim`: source key -> the copy to use (None: none yet, create one), one per Secret the job
    names while it runs; `release`: copies that list the job but that it no longer needs."""

    claim: dict[str, Obj | None] = field(default_factory=dict)
    release: list[Obj] = field(default_factory=list)


def classify(job: Obj, copies: Iterable[Obj]) -> Classified:
    """Sort the daemon namespace's Secrets for this job. Among several copies of one source (older
    versions made one per job) the one already listing the job wins, else the first by name."""
    key = job_key(job)
    result = Classified()
    if running(job):
        namespace = job["metadata"].get("namespace")
        for name in (job.get("spec") or {}).get("pullSecrets") or []:
            result.claim[f"{namespace}/{name}"] = None
    for secret in sorted(copies, key=lambda s: s["metadata"]["name"]):
        if secret["metadata"].get("deletionTimestamp"):
            continue
        jobs = referencing_jobs(secret)
        source = source_key(secret)
        if source in result.claim:
            if result.claim[source] is None or key in jobs:
                result.claim[source] = secret
            continue
        if key in jobs:
            result.release.append(secret)
    return result


def copy_name(source_namespace: str, source_name: str) -> str:
    """`<name>-<6 hex>`, the shape of upstream's names; the suffix is derived from the source's key, so
    two reconciles racing their informer create the same name and the second meets AlreadyExists."""
    digest = hashlib.sha256(f"{source_namespace}/{source_name}".encode()).hexdigest()[:6]
    return f"{source_name[: 253 - 7]}-{digest}"


def _joined(jobs: set[str]) -> str:
    return ",".join(sorted(jobs))


def new_copy(source: Obj, namespace: str, job: str) -> dict[str, Any]:
    """The copy of `source` in the daemon's namespace, referenced by `job` only."""
    meta = source["metadata"]
    annotations = dict(meta.get("annotations") or {})
    annotations[ANNOTATION_IMAGEPULLJOB_REFERENCES] = job
    annotations[ANNOTATION_IMAGEPULLJOB_SOURCE_KEY] = f"{meta.get('namespace')}/{meta['name']}"
    annotations[ANNOTATION_IMAGEPULLJOB_MODE] = BATCH_MODE
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": copy_name(meta.get("namespace") or "", meta["name"]),
            "namespace": namespace,
            "annotations": annotations,
        },
    }
    if meta.get("labels"):
        body["metadata"]["labels"] = dict(meta["labels"])
    for key in ("type", "data", "stringData", "immutable"):
        if key in source:
            body[key] = copy.deepcopy(source[key])
    return body


def claimed(existing: Obj, source: Obj, job: str) -> dict[str, Any] | None:
    """The copy with the source's current data and `job` among its references; None when unchanged."""
    updated = copy.deepcopy(dict(existing))
    for key in ("data", "stringData"):
        if key in source:
            updated[key] = copy.deepcopy(source[key])
        else:
            updated.pop(key, None)
    annotations = dict(updated["metadata"].get("annotations") or {})
    annotations[ANNOTATION_IMAGEPULLJOB_REFERENCES] = _joined(referencing_jobs(existing) | {job})
    updated["metadata"]["annotations"] = annotations
    return None if updated == dict(existing) else updated


def released(existing: Obj, job: str) -> dict[str, Any] | None:
    """The copy without `job` among its references, or None when no job is left (delete it)."""
    jobs = referencing_jobs(existing) - {job}
    if not jobs:
        return None
    updated = copy.deepcopy(dict(existing))
    updated["metadata"]["annotations"] = {
        **(updated["metadata"].get("annotations") or {}),
        ANNOTATION_IMAGEPULLJOB_REFERENCES: _joined(jobs),
    }
    return updated


def reference(secret: Obj) -> dict[str, str]:
    """The NodeImage `pullSecrets` entry for a copy (its mode as the copy's annotation says)."""
    meta = secret["metadata"]
    ref = {"namespace": meta["namespace"], "name": meta["name"]}
    mode = annotations_of(secret).get(ANNOTATION_IMAGEPULLJOB_MODE)
    if mode:
        ref["mode"] = mode
    return ref
