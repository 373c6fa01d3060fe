"""Which resources are "the same objects" for webhook ``matchPolicy: Equivalent``, and how to move
an object between them.

kube-apiserver keeps an equivalent-resource registry: every served group/version/resource with the
same storage holds the same objects (a CRD's served versions; for built-ins, e.g. apps/v1 and
apps/v1beta2 deployments). A webhook whose rules name only one of them is still called for the
others, with the object converted to the version its rule named.

The emulator serves every built-in resource in a single version and stores core and events.k8s.io
events apart, so only custom resources have equivalents here; they convert through the CRD's own
strategy (``conversion.Converter``: an apiVersion rewrite for ``None``, the conversion webhook for
``Webhook``), as the apiserver's CRD converter does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kruise.sandbox.apiserver.admission import EquivalentResource, ObjectVersions
from kruise.sandbox.apiserver.conversion import Converter
from kruise.sandbox.apiserver.resources import ResourceType

# A custom resource's scale subresource has this kind in every version (the CRD handler's choice).
SCALE_KIND = {"group": "autoscaling", "version": "v1", "kind": "Scale"}


def kind_for(rt: ResourceType, subresource: str) -> dict[str, str]:
    """The kind an object of ``rt``'s ``subresource`` has ("" and "status": the resource's own)."""
    if subresource == "scale":
        return dict(SCALE_KIND)
    return {"group": rt.group, "version": rt.version, "kind": rt.kind}


def equivalent_resources(
    rt: ResourceType, served: Iterable[ResourceType], subresource: str
) -> list[EquivalentResource]:
    """The served versions of ``rt``'s custom resource that have ``subresource``, in the order the
    CRD lists them (``rt`` itself included, as the registry includes it)."""
    return [
        EquivalentResource(other.group, other.version, other.plural, kind_for(other, subresource))
        for other in served
        if other.crd_name == rt.crd_name
        and other.key == rt.key
        and (not subresource or subresource in other.subresources)
    ]


class CustomResourceVersions:
    """ObjectVersions of one custom resource: its served versions, converted by the CRD's strategy.

    ``served`` is read on every lookup, so a CRD update (a version added or no longer served)
    applies to the next request."""

    def __init__(
        self, rt: ResourceType, served: Callable[[], Iterable[ResourceType]], converter: Converter
    ) -> None:
        self._rt = rt
        self._served = served
        self._converter = converter

    def equivalents(self, subresource: str) -> list[EquivalentResource]:
        return equivalent_resources(self._rt, self._served(), subresource)

    async def convert(self, obj: dict[str, Any], api_version: str) -> dict[str, Any]:
        return (await self._converter.convert(self._rt, [obj], api_version))[0]


def object_versions(
    rt: ResourceType, served: Callable[[], Iterable[ResourceType]], converter: Converter
) -> ObjectVersions | None:
    """The ObjectVersions for a request on ``rt``; None for built-ins (one version each here)."""
    if not rt.is_custom:
        return None
    return CustomResourceVersions(rt, served, converter)
