"""PersistentPodState v1alpha1 <-> v1beta1 (apps.kruise.io; v1beta1 is master's storage version).

- A topology term's `nodeTopologyKeys` (v1alpha1) is `keys` (v1beta1), in
  `spec.requiredPersistentTopology` and in every `spec.preferredPersistentTopology[].preference`.
- Everything else (targetRef, persistentPodAnnotations, the retention policy, status.podStates)
  has the same shape in both versions. The v1alpha1 annotations that ask for a generated
  PersistentPodState (`kruise.io/auto-generate-persistent-pod-state`, ...) live on the StatefulSet,
  not here, and are unaffected.
"""

from __future__ import annotations

from typing import Any

from kruise.api.conversion.fields import child, object_list, rename

GROUP = "apps.kruise.io"
KIND = "PersistentPodState"
ALPHA_KEYS = "nodeTopologyKeys"
BETA_KEYS = "keys"


def _terms(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """Every topology term of the spec: the required one and each preferred one's preference."""
    spec = child(obj, "spec", "")
    if spec is None:
        return []
    terms = []
    required = child(spec, "requiredPersistentTopology", "spec")
    if required is not None:
        terms.append(required)
    path = "spec.preferredPersistentTopology"
    for index, preferred in enumerate(object_list(spec, "preferredPersistentTopology", "spec")):
        preference = child(preferred, "preference", f"{path}[{index}]")
        if preference is not None:
            terms.append(preference)
    return terms


def to_v1beta1(obj: dict[str, Any]) -> None:
    for term in _terms(obj):
        rename(term, ALPHA_KEYS, BETA_KEYS)


def to_v1alpha1(obj: dict[str, Any]) -> None:
    for term in _terms(obj):
        rename(term, BETA_KEYS, ALPHA_KEYS)
