"""When an Advanced DaemonSet pre-downloads images (upstream ``daemonset_predownload_image.go``;
gates KruiseDaemon + PreDownloadImageForDaemonSetUpdate).

While a rollout is under way (``status.updatedNumberScheduled`` != ``desiredNumberScheduled``, or
the current hash is not ``status.daemonSetHash`` yet) the current revision is decided on once:
ignored when every pod would update in one batch (``partition`` 0 and ``maxUnavailable`` >= the
desired number scheduled), otherwise one ImagePullJob per container whose image differs from some
old revision (:mod:`kruise.control.common.predownload`). Unlike CloneSet and Advanced StatefulSet there is
no replicas threshold, no update-type or in-place check, and the min-updated-ready-pods annotation
is read but not waited on (upstream leaves that as a todo). Once the rollout is done the
DaemonSet's jobs are deleted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kruise.api.common import IntOrStringError, scaled_value
from kruise.api.controllerref import new_controller_ref
from kruise.api.objects import Obj, section, status_of
from kruise.control.common import predownload as shared
from kruise.control.daemonset.history import revision_hash

DEFAULT_MAX_UNAVAILABLE = 1


class PreDownloadError(ValueError):
    """A DaemonSet field the decision needs cannot be read."""


def _desired(ds: Obj) -> int:
    return int(status_of(ds).get("desiredNumberScheduled") or 0)


def rollout_in_progress(ds: Obj, update_hash: str) -> bool:
    status = ds.get("status") or {}
    return (
        int(status.get("updatedNumberScheduled") or 0) != _desired(ds)
        or status.get("daemonSetHash", "") != update_hash
    )


def decision(ds: Obj, update: Obj) -> str | None:
    """``None`` (already decided), ``IGNORED`` or ``CREATED``: the label the update revision gets."""
    if shared.already_decided(update):
        return None
    rolling = section(ds, "spec", "updateStrategy").get("rollingUpdate") or {}
    desired = _desired(ds)
    raw_partition = rolling.get("partition")
    try:
        partition = 0 if raw_partition is None else scaled_value(raw_partition, desired, False)
    except IntOrStringError as exc:
        raise PreDownloadError(f"spec.updateStrategy.rollingUpdate.partition: {exc}") from None
    raw_unavailable = rolling.get("maxUnavailable")
    try:
        max_unavailable = scaled_value(
            DEFAULT_MAX_UNAVAILABLE if raw_unavailable is None else raw_unavailable, desired, True
        )
    except IntOrStringError:
        max_unavailable = 0
    if partition == 0 and max_unavailable >= desired:
        return shared.IGNORED
    return shared.CREATED


def image_pull_jobs(ds: Obj, old: Sequence[Obj], update: Obj) -> tuple[dict[str, Any], ...]:
    return shared.image_pull_jobs(
        ds,
        new_controller_ref(ds, api_version="apps.kruise.io/v1alpha1", kind="DaemonSet"),
        update,
        shared.changed_images(old, update),
        shared.annotation_pull_settings(ds),
    )


def plan_pre_download(ds: Obj, current: Obj, old: Sequence[Obj]) -> shared.PreDownloadPlan:
    """The pass's pre-download step: ``current`` is the revision of the DaemonSet's template (the
    update revision), ``old`` every other revision."""
    if not rollout_in_progress(ds, revision_hash(current)):
        return shared.DELETE_JOBS
    label = decision(ds, current)
    if label is None:
        return shared.NOTHING
    if label == shared.IGNORED:
        return shared.IGNORE
    return shared.PreDownloadPlan(label=label, jobs=image_pull_jobs(ds, old, current))
