"""Every Kruise kind, in one list, so the CRD generator, webhook and docs iterate the same thing.

To add a kind: import its module and append its CRDInfo (module attribute `CRD`) to KINDS.
"""

from __future__ import annotations

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
    nodepodprobe,
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

KINDS: list[CRDInfo] = [
    cloneset.CRD,
    statefulset.CRD,
    daemonset.CRD,
    sidecarset.CRD,
    pub.CRD,
    broadcastjob.CRD,
    advancedcronjob.CRD,
    imagepulljob.CRD,
    imagelistpulljob.CRD,
    nodeimage.CRD,
    crr.CRD,
    resourcedistribution.CRD,
    persistentpodstate.CRD,
    podprobemarker.CRD,
    nodepodprobe.CRD,
    ephemeraljob.CRD,
    workloadspread.CRD,
    uniteddeployment.CRD,
]


def by_kind(group: str, kind: str) -> CRDInfo:
    for info in KINDS:
        if info.group == group and info.kind == kind:
            return info
    raise KeyError(f"{kind}.{group} is not a registered kind")


def by_plural(group: str, plural: str) -> CRDInfo:
    for info in KINDS:
        if info.group == group and info.plural == plural:
            return info
    raise KeyError(f"{plural}.{group} is not a registered kind")
