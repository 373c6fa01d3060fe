"""Handler URL paths, in both upstream spellings.

1.8 charts call `/mutate-apps-kruise-io-v1alpha1-cloneset`; later ones `/mutate-apps-kruise-io-cloneset`.
Serving both lets either chart's configuration reach us.
"""

from __future__ import annotations


def kind_paths(verb: str, group: str, kind: str, versions: tuple[str, ...]) -> list[str]:
    """`verb` is "mutate" or "validate"; the version-less spelling comes first (the canonical one)."""
    base = f"/{verb}-{group.replace('.', '-')}"
    low = kind.lower()
    return [f"{base}-{low}"] + [f"{base}-{v}-{low}" for v in versions]


POD_MUTATE = "/mutate-pod"
POD_VALIDATE = "/validate-pod"
NAMESPACE = "/validate-namespace"
CRD = "/validate-customresourcedefinition"
DEPLOYMENT = "/validate-apps-deployment"
REPLICASET = "/validate-apps-replicaset"
STATEFULSET = "/validate-apps-statefulset"
SERVICE = "/validate-service"
INGRESS = "/validate-ingress"

# CRD conversion (ConversionReview), as upstream's chart points every multi-version CRD at it
CONVERT = "/convert"
