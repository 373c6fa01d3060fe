"""Which defaulter and validator each Kruise kind has, and how each is called — declared, not guessed.

The kinds' rules live in `kruise.api.<kind>` with signatures that differ (a validator that compares
with the old object, a defaulter that takes the pod-template gates or adds a finalizer). Declaring
per kind what its hooks accept keeps the admission adapters (`kinddefaulting`, `kindvalidation`)
free of signature inspection, and a kind added to `kruise.api.registry` without a line here fails
loudly (a unit test checks each declaration against the function it names).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel

from kruise.api import (
    advancedcronjob,
    broadcastjob,
    cloneset,
    crr,
    daemonset,
    ephemeraljob,
    imagelistpulljob,
    imagepulljob,
    nodeimage,
    persistentpodstate,
    podprobemarker,
    pub,
    resourcedistribution,
    sidecarset,
    statefulset,
    uniteddeployment,
    workloadspread,
)
from kruise.api.crdgen import CRDInfo
from kruise.api.validation import FieldError

INJECT_TEMPLATE_DEFAULTS = "inject_template_defaults"
HOST_NETWORK_HOST_PORTS = "host_network_host_ports"
ADD_PROTECTION = "add_protection"
# the keywords of a defaulter of a kind with a pod template (gates TemplateNoDefaults and
# DefaultHostNetworkHostPortsInPodTemplates)
_TEMPLATE = frozenset({INJECT_TEMPLATE_DEFAULTS, HOST_NETWORK_HOST_PORTS})


@dataclass(frozen=True)
class Hooks:
    """One kind's declaration."""

    set_defaults: Callable[..., None] | None = None
    validate: Callable[..., list[FieldError]] | None = None
    validate_takes_old: bool = False
    """The validator takes keyword ``old`` (the object before an UPDATE)."""
    default_options: frozenset[str] = frozenset()
    """Keywords the admission adapter passes the defaulter (of INJECT_TEMPLATE_DEFAULTS,
    HOST_NETWORK_HOST_PORTS, ADD_PROTECTION)."""
    version: str | None = None
    """The version the hooks are written for; None when they take every served version (Advanced
    StatefulSet reads v1alpha1 through its v1beta1 form)."""


# (group, kind) -> its hooks. Kinds upstream neither defaults nor validates at admission have an
# empty declaration (NodePodProbe); a validator taking more than the object and ``old`` (SidecarSet's
# neighbours, WorkloadSpread's whitelist) is called by that kind's concern module, not the generic one.
DECLARED: dict[tuple[str, str], Hooks] = {
    (cloneset.GROUP, "CloneSet"): Hooks(
        cloneset.set_defaults, cloneset.validate, True, _TEMPLATE, cloneset.VERSION
    ),
    (statefulset.GROUP, "StatefulSet"): Hooks(
        statefulset.set_defaults, statefulset.validate, True, _TEMPLATE
    ),
    (daemonset.GROUP, "DaemonSet"): Hooks(
        daemonset.set_defaults, daemonset.validate, True, version=daemonset.VERSION
    ),
    (sidecarset.GROUP, "SidecarSet"): Hooks(
        sidecarset.set_defaults, sidecarset.validate, True, version=sidecarset.VERSION
    ),
    (pub.GROUP, "PodUnavailableBudget"): Hooks(pub.set_defaults, pub.validate, True, version=pub.VERSION),
    (broadcastjob.GROUP, "BroadcastJob"): Hooks(
        broadcastjob.set_defaults, broadcastjob.validate, False, _TEMPLATE, broadcastjob.VERSION
    ),
    (advancedcronjob.GROUP, "AdvancedCronJob"): Hooks(
        advancedcronjob.set_defaults, advancedcronjob.validate, False, _TEMPLATE, advancedcronjob.VERSION
    ),
    (imagepulljob.GROUP, "ImagePullJob"): Hooks(
        imagepulljob.set_defaults,
        imagepulljob.validate,
        False,
        frozenset({ADD_PROTECTION}),
        imagepulljob.VERSION,
    ),
    (imagelistpulljob.GROUP, "ImageListPullJob"): Hooks(
        imagelistpulljob.set_defaults, imagelistpulljob.validate, version=imagelistpulljob.VERSION
    ),
    (nodeimage.GROUP, "NodeImage"): Hooks(
        nodeimage.set_defaults, nodeimage.validate, version=nodeimage.VERSION
    ),
    (crr.GROUP, "ContainerRecreateRequest"): Hooks(version=crr.VERSION),
    (resourcedistribution.GROUP, "ResourceDistribution"): Hooks(
        validate=resourcedistribution.validate, validate_takes_old=True, version=resourcedistribution.VERSION
    ),
    (persistentpodstate.GROUP, "PersistentPodState"): Hooks(
        validate=persistentpodstate.validate, validate_takes_old=True, version=persistentpodstate.VERSION
    ),
    (podprobemarker.GROUP, "PodProbeMarker"): Hooks(
        validate=podprobemarker.validate, validate_takes_old=True, version=podprobemarker.VERSION
    ),
    ("apps.kruise.io", "NodePodProbe"): Hooks(),
    (ephemeraljob.GROUP, "EphemeralJob"): Hooks(validate=ephemeraljob.validate, version=ephemeraljob.VERSION),
    (workloadspread.GROUP, "WorkloadSpread"): Hooks(
        validate=workloadspread.validate, version=workloadspread.VERSION
    ),
    (uniteddeployment.GROUP, "UnitedDeployment"): Hooks(
        uniteddeployment.set_defaults, uniteddeployment.validate, True, _TEMPLATE, uniteddeployment.VERSION
    ),
}


def declared(info: CRDInfo) -> Hooks:
    try:
        return DECLARED[(info.group, info.kind)]
    except KeyError:
        raise KeyError(
            f"{info.kind}.{info.group}: no admission hooks declared in kruise.webhook.handlers.kindhooks"
        ) from None


@dataclass(frozen=True)
class KindHooks:
    """A kind's CRD beside its declared hooks (`DECLARED`): what every admission step of the kind reads."""

    info: CRDInfo
    set_defaults: Callable[..., None] | None
    validate: Callable[..., list[FieldError]] | None
    validate_takes_old: bool = False
    default_options: frozenset[str] = frozenset()
    version: str | None = None
    """The version the kind's hooks are written for; None when they take every served version."""

    @property
    def defaults_take_protection(self) -> bool:
        return self.defaults_take(ADD_PROTECTION)

    def defaults_take(self, option: str) -> bool:
        """The kind's defaulter accepts keyword ``option`` (only workloads with a pod template take
        ``inject_template_defaults`` and ``host_network_host_ports``)."""
        return self.set_defaults is not None and option in self.default_options

    def model_for(self, version: str) -> type[BaseModel]:
        for v in self.info.versions:
            if v.name == version:
                return v.model
        return self.info.storage_version.model

    @property
    def has_replicas(self) -> bool:
        return self.info.kind in ("CloneSet", "StatefulSet", "UnitedDeployment")


def hooks_for(info: CRDInfo) -> KindHooks:
    hooks = declared(info)
    return KindHooks(
        info,
        hooks.set_defaults,
        hooks.validate,
        hooks.validate_takes_old,
        hooks.default_options,
        hooks.version,
    )
