"""When a CloneSet pre-downloads images (gates KruiseDaemon + PreDownloadImageForInPlaceUpdate).

A CloneSet rolling an in-place-capable revision in several batches gets one ImagePullJob per changed
container, warming the new image on the nodes of pods not updated yet. The decision is taken once
per update revision and recorded on it with a label; the jobs themselves are the shared
:mod:`kruise.control.common.predownload` ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.api.common import scaled_value
from kruise.api.controllerref import new_controller_ref
from kruise.api.objects import spec_of
from kruise.api.workload_common import UPDATE_TYPE_RECREATE
from kruise.control.cloneset.strategy import DEFAULT_MAX_UNAVAILABLE, partition_replicas
from kruise.control.cloneset.vcthash import vct_change_forces_recreate
from kruise.control.common import predownload as shared
from kruise.control.common.inplace.spec import calculate_update_spec

created_event_message = shared.created_event_message


def _replicas(cloneset: Mapping[str, Any]) -> int:
    return int(spec_of(cloneset).get("replicas") or 0)


def min_updated_ready_pods(cloneset: Mapping[str, Any]) -> int:
    """Updated-ready pods required before pre-downloading (annotation, int or percent, rounds up)."""
    return shared.min_updated_ready_pods(cloneset, _replicas(cloneset))


def should_consider(cloneset: Mapping[str, Any], current_revision: str, update_revision: str) -> bool:
    """The controller looks at pre-download only mid-rollout and once enough updated pods are
    ready (status counts only when they refer to this update revision)."""
    if current_revision == update_revision:
        return False
    return shared.enough_updated_ready(cloneset, update_revision, _replicas(cloneset))


def decision(
    cloneset: Mapping[str, Any],
    current: Mapping[str, Any],
    update: Mapping[str, Any],
    *,
    recreate_on_vct_change: bool = False,
    vertical_scaling: bool = False,
) -> str | None:
    """``None`` (already decided), ``LABEL_IMAGE_PREDOWNLOAD_IGNORED`` or ``LABEL_PRE_PREDOWNLOAD_CREATED``:
    the label to put on the update revision (after creating the jobs for the latter).
    ``vertical_scaling``: the InPlaceWorkloadVerticalScaling gate, as upstream's ``CanUpdateInPlace``."""
    if shared.already_decided(update):
        return None
    spec = cloneset.get("spec") or {}
    strategy = spec.get("updateStrategy") or {}
    replicas = _replicas(cloneset)
    if (
        strategy.get("type") or UPDATE_TYPE_RECREATE
    ) == UPDATE_TYPE_RECREATE or replicas <= shared.MIN_REPLICAS_TO_PREDOWNLOAD:
        return shared.IGNORED
    partition = partition_replicas(strategy.get("partition"), replicas)
    unavailable = strategy.get("maxUnavailable")
    max_unavailable = scaled_value(
        DEFAULT_MAX_UNAVAILABLE if unavailable is None else unavailable, replicas, False
    )
    if partition == 0 and max_unavailable >= replicas:
        return shared.IGNORED
    if calculate_update_spec(
        current, update, vertical_scaling=vertical_scaling
    ) is None or vct_change_forces_recreate(
        cloneset, current, update, recreate_on_vct_change=recreate_on_vct_change
    ):
        return shared.IGNORED
    return shared.CREATED


def changed_images(current: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, str]:
    """Container name -> new image, for containers new or changed in the update revision."""
    return shared.changed_images([current], update)


def image_pull_jobs(
    cloneset: Mapping[str, Any], current: Mapping[str, Any], update: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """One ImagePullJob per changed container, named ``<updateRevision>-<container>``."""
    settings = shared.annotation_pull_settings(cloneset, percent_parallelism=True)
    return list(
        shared.image_pull_jobs(
            cloneset,
            new_controller_ref(cloneset, api_version="apps.kruise.io/v1alpha1", kind="CloneSet"),
            update,
            changed_images(current, update),
            settings,
        )
    )


def plan_pre_download(
    cloneset: Mapping[str, Any],
    current: Mapping[str, Any],
    update: Mapping[str, Any],
    *,
    recreate_on_vct_change: bool = False,
    vertical_scaling: bool = False,
) -> shared.PreDownloadPlan:
    """The pass's pre-download step: delete the jobs once converged, else decide once enough
    updated pods are ready."""
    if current["metadata"]["name"] == update["metadata"]["name"]:
        return shared.DELETE_JOBS
    if not should_consider(cloneset, current["metadata"]["name"], update["metadata"]["name"]):
        return shared.NOTHING
    label = decision(
        cloneset,
        current,
        update,
        recreate_on_vct_change=recreate_on_vct_change,
        vertical_scaling=vertical_scaling,
    )
    if label is None:
        return shared.NOTHING
    if label == shared.IGNORED:
        return shared.IGNORE
    return shared.PreDownloadPlan(label=label, jobs=tuple(image_pull_jobs(cloneset, current, update)))
