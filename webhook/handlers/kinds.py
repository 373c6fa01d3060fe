"""Defaulting and validation of every Kruise kind, driven by `kruise.api.registry`.

Adding a kind to the registry is enough to get its webhooks: every kind gets a generic mutating and
validating registration here (`kinddefaulting`, `kindvalidation`), which a concern module replaces
by registering the same kind and verb through `kindregistration.kind_registration` (SidecarSet,
Advanced StatefulSet, WorkloadSpread, PersistentPodState, ContainerRecreateRequest). What stays here
is upstream's configuration entry for each kind no concern module handles.
"""

from __future__ import annotations

from kruise.api.crdgen import CRDInfo
from kruise.api.registry import KINDS
from kruise.webhook.handlers.kinddefaulting import default_mutating
from kruise.webhook.handlers.kindregistration import (
    CREATE_UPDATE,
    CREATE_UPDATE_DELETE,
    KindBuilder,
    kind_registration,
)
from kruise.webhook.handlers.kindvalidation import default_validating
from kruise.webhook.registry import Registration

# Upstream's configuration entries of the kinds no concern module handles, keyed (verb, kind): the
# entry's name, the version in its path (as upstream's handler registers it) and its operations.
_WEBHOOKS: dict[tuple[str, str], tuple[str, str | None, tuple[str, ...]]] = {
    ("mutate", "AdvancedCronJob"): ("madvancedcronjob.kb.io", None, CREATE_UPDATE),
    ("mutate", "BroadcastJob"): ("mbroadcastjob.kb.io", None, CREATE_UPDATE),
    ("mutate", "CloneSet"): ("mcloneset.kb.io", "v1alpha1", CREATE_UPDATE),
    ("mutate", "DaemonSet"): ("mdaemonset.kb.io", None, CREATE_UPDATE),
    ("mutate", "ImageListPullJob"): ("mimagelistpulljob-v1beta1.kb.io", None, CREATE_UPDATE),
    ("mutate", "ImagePullJob"): ("mimagepulljob-v1beta1.kb.io", None, CREATE_UPDATE),
    ("mutate", "NodeImage"): ("mnodeimage.kb.io", None, CREATE_UPDATE),
    ("mutate", "UnitedDeployment"): ("muniteddeployment.kb.io", "v1alpha1", CREATE_UPDATE),
    ("validate", "ResourceDistribution"): ("vresourcedistribution.kb.io", "v1alpha1", CREATE_UPDATE),
    ("validate", "AdvancedCronJob"): ("vadvancedcronjob.kb.io", None, CREATE_UPDATE),
    ("validate", "BroadcastJob"): ("vbroadcastjob.kb.io", None, CREATE_UPDATE),
    ("validate", "CloneSet"): ("vcloneset.kb.io", "v1alpha1", CREATE_UPDATE_DELETE),
    ("validate", "DaemonSet"): ("vdaemonset.kb.io", None, CREATE_UPDATE),
    ("validate", "ImageListPullJob"): ("vimagelistpulljob-v1beta1.kb.io", None, CREATE_UPDATE),
    ("validate", "ImagePullJob"): ("vimagepulljob-v1beta1.kb.io", None, CREATE_UPDATE),
    ("validate", "NodeImage"): ("vnodeimage.kb.io", None, CREATE_UPDATE),
    ("validate", "PodProbeMarker"): ("vpodprobemarker.kb.io", None, CREATE_UPDATE),
    ("validate", "PodUnavailableBudget"): ("vpodunavailablebudget.kb.io", None, CREATE_UPDATE),
    ("validate", "EphemeralJob"): ("vephemeraljobs.kb.io", "v1alpha1", CREATE_UPDATE),
    ("validate", "UnitedDeployment"): ("vuniteddeployment.kb.io", "v1alpha1", CREATE_UPDATE_DELETE),
}


def _generic(info: CRDInfo, verb: str, build: KindBuilder) -> Registration:
    name, path_version, operations = _WEBHOOKS.get((verb, info.kind), (None, None, CREATE_UPDATE))
    return kind_registration(
        info.group, info.kind, verb, build,
        webhook=name, path_version=path_version, operations=operations, fallback=True,
    )  # fmt: skip


REGISTRATIONS = tuple(
    _generic(info, verb, build)
    for info in KINDS
    for verb, build in (("mutate", default_mutating), ("validate", default_validating))
)
