"""The two API sets kruise-py can serve, chosen by one switch (chart value `apiSet`, `--api-set`).

"1.9" (the default) is what OpenKruise 1.9.0 — the release users run — serves: the versions and storage
versions of its `config/crd/bases` at tag v1.9.0. Users' kubectl habits, scripts and GitOps manifests
are written against it: with CloneSet served at v1alpha1 only, `kubectl patch cloneset ... partition`
talks v1alpha1, where that field lives. "2.0" is upstream master's set (fifteen kinds served at v1alpha1
and v1beta1, kubectl's preferred version then being v1beta1), as kruise-py's models declare it.

kruise-py's own code reads and writes the versions in `CLIENT_VERSIONS`, which both sets serve, so
kruise-manager, kruise-daemon and kubectl-kruise need no switch; only the CRDs and the webhook
configurations' rules (which versions reach the admission webhooks) differ per set. On the wire a client
may talk the storage version instead, learnt from the CRDs and converted in-process (`kruise.kube.wire`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from kruise.api.crdgen import CRDInfo
from kruise.api.registry import KINDS

API_SET_1_9 = "1.9"
API_SET_2_0 = "2.0"
DEFAULT_API_SET = API_SET_1_9
API_SETS = (API_SET_1_9, API_SET_2_0)


class APISetError(ValueError):
    """An unknown set name; the message names the field (`apiSet` / `--api-set`) and the allowed values."""


@dataclass(frozen=True)
class Served:
    """One kind's served versions (in CRD order) and its storage version."""

    versions: tuple[str, ...]
    storage: str


_ALPHA = Served(("v1alpha1",), "v1alpha1")
_BETA_STORED = Served(("v1alpha1", "v1beta1"), "v1beta1")

UPSTREAM_1_9: dict[str, Served] = {
    # OpenKruise v1.9.0, config/crd/bases: v1alpha1 only
    "clonesets.apps.kruise.io": _ALPHA,
    "containerrecreaterequests.apps.kruise.io": _ALPHA,
    "podunavailablebudgets.policy.kruise.io": _ALPHA,
    "uniteddeployments.apps.kruise.io": _ALPHA,
    "persistentpodstates.apps.kruise.io": _ALPHA,
    "resourcedistributions.apps.kruise.io": _ALPHA,
    "workloadspreads.apps.kruise.io": _ALPHA,
    "ephemeraljobs.apps.kruise.io": _ALPHA,
    "podprobemarkers.apps.kruise.io": _ALPHA,
    "nodepodprobes.apps.kruise.io": _ALPHA,
    # both versions, stored at v1beta1
    "statefulsets.apps.kruise.io": _BETA_STORED,
    "daemonsets.apps.kruise.io": _BETA_STORED,
    "sidecarsets.apps.kruise.io": _BETA_STORED,
    "broadcastjobs.apps.kruise.io": _BETA_STORED,
    "advancedcronjobs.apps.kruise.io": _BETA_STORED,
    "imagepulljobs.apps.kruise.io": _BETA_STORED,
    "imagelistpulljobs.apps.kruise.io": _BETA_STORED,
    "nodeimages.apps.kruise.io": _BETA_STORED,
}
"""Every kind of the 1.9 set. Printer columns are the models' (equal to 1.9.0's in name, type, JSONPath
and priority for every version, ImagePullJob's v1beta1 included, which has no MESSAGE column)."""

CLIENT_VERSIONS: dict[str, str] = {info.name: "v1alpha1" for info in KINDS} | {
    "statefulsets.apps.kruise.io": "v1beta1"
}
"""The version kruise-py's components talk per kind (the form their code is written for): served by
both sets (a unit test checks it), so they work on either without knowing which is installed."""


def parse(name: object, *, field: str = "apiSet") -> str:
    """The set's canonical name; accepts a YAML float (`apiSet: 2.0` unquoted reads as 2.0)."""
    text = f"{name:.1f}" if isinstance(name, float) else str(name)
    if text not in API_SETS:
        supported = ", ".join(f'"{s}"' for s in API_SETS)
        raise APISetError(f'{field}: Unsupported value: "{text}": supported values: {supported}')
    return text


def _restrict(info: CRDInfo, served: Served) -> CRDInfo:
    versions = tuple(
        dataclasses.replace(v, served=True, storage=v.name == served.storage)
        for v in info.versions
        if v.name in served.versions
    )
    missing = set(served.versions) - {v.name for v in versions}
    if missing:
        raise ValueError(f"{info.kind} has no model for version(s) {sorted(missing)}")
    return dataclasses.replace(info, versions=versions)


def kinds(api_set: str = DEFAULT_API_SET) -> list[CRDInfo]:
    """The CRD descriptions of a set, in the registry's order."""
    api_set = parse(api_set)
    if api_set == API_SET_2_0:
        return list(KINDS)
    return [_restrict(info, UPSTREAM_1_9[info.name]) for info in KINDS]


def served_versions(api_set: str, group: str, plural: str) -> tuple[str, ...]:
    """The versions a set serves of one kind; () when the set does not have the kind."""
    name = f"{plural}.{group}"
    for info in kinds(api_set):
        if info.name == name:
            return tuple(v.name for v in info.versions if v.served)
    return ()


def client_version(api_set: str, group: str, plural: str) -> str:
    """The version kruise-py talks for a kind under a set; fails naming the kind if the set lacks it."""
    name = f"{plural}.{group}"
    version = CLIENT_VERSIONS[name]
    if version not in served_versions(api_set, group, plural):
        raise APISetError(f"API set {api_set} does not serve {name} at {version}")
    return version
