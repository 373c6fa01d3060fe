"""When an Advanced StatefulSet pre-downloads images (upstream ``statefulset_predownload_image.go``;
gates KruiseDaemon + PreDownloadImageForInPlaceUpdate, the CloneSet one).

Mid-rollout (current revision != update revision) and once ``apps.kruise.io/image-predownload-
min-updated-ready-pods`` updated pods are ready, the update revision is decided on once: ignored for
``OnDelete``, a ``ReCreate`` pod update policy, at most 3 replicas, a rollout done in one batch
(``partition`` 0 and ``maxUnavailable`` >= replicas) or a change that cannot be made in place;
otherwise one ImagePullJob per changed container (:mod:`kruise.control.common.predownload`). Once the
revisions converge the set's jobs are deleted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.api.common import IntOrStringError, scaled_value
from kruise.api.controllerref import new_controller_ref
from kruise.api.objects import Obj, section, spec_of
from kruise.api.statefulset import STRATEGY_ON_DELETE, STRATEGY_ROLLING_UPDATE
from kruise.api.workload_common import UPDATE_TYPE_RECREATE
from kruise.control.common import predownload as shared
from kruise.control.common.inplace.spec import calculate_update_spec
from kruise.control.statefulset.pods import DEFAULT_API_VERSION

DEFAULT_MAX_UNAVAILABLE = 1


def _replicas(sts: Obj) -> int:
    replicas = spec_of(sts).get("replicas")
    return 1 if replicas is None else int(replicas)


def _rolling(sts: Obj) -> Mapping[str, Any] | None:
    strategy = spec_of(sts).get("updateStrategy") or {}
    if (strategy.get("type") or STRATEGY_ROLLING_UPDATE) == STRATEGY_ON_DELETE:
        return None
    return strategy.get("rollingUpdate") or {}


def _max_unavailable(rolling: Mapping[str, Any], replicas: int) -> int:
    """``GetValueFromIntOrPercent`` (percent rounds down); an unusable value counts as 0."""
    value = rolling.get("maxUnavailable")
    try:
        return scaled_value(DEFAULT_MAX_UNAVAILABLE if value is None else value, replicas, False)
    except IntOrStringError:
        return 0


def decision(
    sts: Obj, current: Obj, update: Obj, *, env_from_metadata: bool = True, vertical_scaling: bool = False
) -> str | None:
    """``None`` (already decided), ``IGNORED`` or ``CREATED``: the label the update revision gets.
    ``env_from_metadata`` / ``vertical_scaling``: the InPlaceUpdateEnvFromMetadata /
    InPlaceWorkloadVerticalScaling gates."""
    if shared.already_decided(update):
        return None
    rolling = _rolling(sts)
    if rolling is None or (rolling.get("podUpdatePolicy") or UPDATE_TYPE_RECREATE) == UPDATE_TYPE_RECREATE:
        return shared.IGNORED
    replicas = _replicas(sts)
    if replicas <= shared.MIN_REPLICAS_TO_PREDOWNLOAD:
        return shared.IGNORED
    partition = int(rolling.get("partition") or 0)
    if partition == 0 and _max_unavailable(rolling, replicas) >= replicas:
        return shared.IGNORED
    grace = int(section(rolling, "inPlaceUpdateStrategy").get("gracePeriodSeconds") or 0)
    spec = calculate_update_spec(
        current,
        update,
        grace_seconds=grace,
        env_from_metadata=env_from_metadata,
        vertical_scaling=vertical_scaling,
    )
    if spec is None:
        return shared.IGNORED
    return shared.CREATED


def image_pull_jobs(sts: Obj, current: Obj, update: Obj) -> tuple[dict[str, Any], ...]:
    return shared.image_pull_jobs(
        sts,
        new_controller_ref(sts, api_version=DEFAULT_API_VERSION, kind="StatefulSet"),
        update,
        shared.changed_images([current], update),
        shared.annotation_pull_settings(sts),
    )


def plan_pre_download(
    sts: Obj, current: Obj, update: Obj, *, env_from_metadata: bool = True, vertical_scaling: bool = False
) -> shared.PreDownloadPlan:
    """``doPreDownload``: delete the jobs once converged; else, with enough updated pods ready,
    decide on the update revision (once)."""
    update_name = update["metadata"]["name"]
    if current["metadata"]["name"] == update_name:
        return shared.DELETE_JOBS
    if not shared.enough_updated_ready(sts, update_name, _replicas(sts)):
        return shared.NOTHING
    label = decision(
        sts, current, update, env_from_metadata=env_from_metadata, vertical_scaling=vertical_scaling
    )
    if label is None:
        return shared.NOTHING
    if label == shared.IGNORED:
        return shared.IGNORE
    return shared.PreDownloadPlan(label=label, jobs=image_pull_jobs(sts, current, update))
