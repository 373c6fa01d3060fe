"""Every Kruise kind, in one list, so the CRD generator, webhook and docs iterate the same thing.

To add a kind: import its module and append its CRDInfo (module attribute `CRD`) and the declaration
of its defaulter and validator (`kruise.api.hooks.Hooks`) to `_ENTRIES`.
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
from kruise.api.hooks import ADD_PROTECTION, TEMPLATE_OPTIONS, Hooks

_ENTRIES: tuple[tuple[CRDInfo, Hooks], ...] = (
    (cloneset.CRD, Hooks(cloneset.set_defaults, cloneset.validate, True, TEMPLATE_OPTIONS, cloneset.VERSION)),
    (statefulset.CRD, Hooks(statefulset.set_defaults, statefulset.validate, True, TEMPLATE_OPTIONS)),
    (daemonset.CRD, Hooks(daemonset.set_defaults, daemonset.validate, True, version=daemonset.VERSION)),
    (sidecarset.CRD, Hooks(sidecarset.set_defaults, sidecarset.validate, True, version=sidecarset.VERSION)),
    (pub.CRD, Hooks(pub.set_defaults, pub.validate, True, version=pub.VERSION)),
    (
        broadcastjob.CRD,
        Hooks(
            broadcastjob.set_defaults, broadcastjob.validate, False, TEMPLATE_OPTIONS, broadcastjob.VERSION
        ),
    ),
    (
        advancedcronjob.CRD,
        Hooks(
            advancedcronjob.set_defaults,
            advancedcronjob.validate,
            False,
            TEMPLATE_OPTIONS,
            advancedcronjob.VERSION,
        ),
    ),
    (
        imagepulljob.CRD,
        Hooks(
            imagepulljob.set_defaults,
            imagepulljob.validate,
            False,
            frozenset({ADD_PROTECTION}),
            imagepulljob.VERSION,
        ),
    ),
    (
        imagelistpulljob.CRD,
        Hooks(imagelistpulljob.set_defaults, imagelistpulljob.validate, version=imagelistpulljob.VERSION),
    ),
    (nodeimage.CRD, Hooks(nodeimage.set_defaults, nodeimage.validate, version=nodeimage.VERSION)),
    (crr.CRD, Hooks(version=crr.VERSION)),
    (
        resourcedistribution.CRD,
        Hooks(
            validate=resourcedistribution.validate,
            validate_takes_old=True,
            version=resourcedistribution.VERSION,
        ),
    ),
    (
        persistentpodstate.CRD,
        Hooks(
            validate=persistentpodstate.validate, validate_takes_old=True, version=persistentpodstate.VERSION
        ),
    ),
    (
        podprobemarker.CRD,
        Hooks(validate=podprobemarker.validate, validate_takes_old=True, version=podprobemarker.VERSION),
    ),
    (nodepodprobe.CRD, Hooks()),
    (ephemeraljob.CRD, Hooks(validate=ephemeraljob.validate, version=ephemeraljob.VERSION)),
    (workloadspread.CRD, Hooks(validate=workloadspread.validate, version=workloadspread.VERSION)),
    (
        uniteddeployment.CRD,
        Hooks(
            uniteddeployment.set_defaults,
            uniteddeployment.validate,
            True,
            TEMPLATE_OPTIONS,
            uniteddeployment.VERSION,
        ),
    ),
)

KINDS: list[CRDInfo] = [info for info, _ in _ENTRIES]
_HOOKS: dict[tuple[str, str], Hooks] = {(info.group, info.kind): hooks for info, hooks in _ENTRIES}


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


def hooks_of(info: CRDInfo) -> Hooks:
    """The kind's declared defaulter and validator (KeyError naming a kind that is not registered)."""
    try:
        return _HOOKS[(info.group, info.kind)]
    except KeyError:
        raise KeyError(f"{info.kind}.{info.group} is not a registered kind") from None
