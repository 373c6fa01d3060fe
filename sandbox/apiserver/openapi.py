"""OpenAPI v3 component schemas of custom resources, for ``kubectl explain``.

kube-apiserver publishes every served CRD version under
``components.schemas["<reversed group>.<version>.<Kind>"]`` (and ``...<Kind>List``) in the
``/openapi/v3/apis/<group>/<version>`` document: the version's ``openAPIV3Schema`` tagged with
``x-kubernetes-group-version-kind``, with ``apiVersion``/``kind`` described and ``metadata``
referring to ``io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta``, which the same document
carries. ``kubectl explain`` finds the kind by that tag and walks ``properties`` and ``$ref``.
Built-in kinds get no schemas here (``kubectl explain pods`` is not supported).

Only custom resources are described, on purpose: for a built-in kind kubectl's client-side
apply would start computing strategic merge patches from these schemas instead of its
compiled-in types.
"""

from __future__ import annotations

import copy
from typing import Any

from kruise.sandbox.apiserver.resources import ResourceType

META = "io.k8s.apimachinery.pkg.apis.meta.v1"
OBJECT_META_REF = f"#/components/schemas/{META}.ObjectMeta"

_API_VERSION = (
    "APIVersion defines the versioned schema of this representation of an object. Servers should "
    "convert recognized schemas to the latest internal value, and may reject unrecognized values. "
    "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
)
_KIND = (
    "Kind is a string value representing the REST resource this object represents. Servers may infer "
    "this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)
_METADATA = (
    "Standard object's metadata. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)


def _string(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _string_map(description: str) -> dict[str, Any]:
    return {"type": "object", "description": description, "additionalProperties": {"type": "string"}}


# The metadata fields users set or read; descriptions are short summaries of the API's own.
OBJECT_META: dict[str, Any] = {
    "type": "object",
    "description": "ObjectMeta is metadata that all persisted resources must have, "
    "which includes all objects users must create.",
    "properties": {
        "name": _string("Name must be unique within a namespace. Cannot be updated."),
        "generateName": _string(
            "Optional prefix the server uses to generate a unique name if none is given."
        ),
        "namespace": _string("The namespace the object lives in; empty for cluster-scoped objects."),
        "uid": _string("Unique identifier of the object, set by the server. Read-only."),
        "resourceVersion": _string("Opaque version of the object, for optimistic concurrency and watches."),
        "generation": {
            "type": "integer",
            "format": "int64",
            "description": "Sequence number of the desired state.",
        },
        "creationTimestamp": {
            "type": "string",
            "format": "date-time",
            "description": "When the object was created.",
        },
        "deletionTimestamp": {
            "type": "string",
            "format": "date-time",
            "description": "When the object will be deleted; set by the server on a graceful deletion.",
        },
        "deletionGracePeriodSeconds": {
            "type": "integer",
            "format": "int64",
            "description": "Seconds allowed for graceful termination before the object is removed.",
        },
        "labels": _string_map("Key/value pairs used to organize and select objects."),
        "annotations": _string_map("Unstructured key/value pairs stored with the object."),
        "finalizers": {
            "type": "array",
            "description": "Must be empty before the object is deleted from the registry.",
            "items": {"type": "string", "default": ""},
            "x-kubernetes-list-type": "set",
        },
        "ownerReferences": {
            "type": "array",
            "description": "Objects this object depends on; it is garbage collected when they are gone.",
            "items": {"$ref": f"#/components/schemas/{META}.OwnerReference"},
            "x-kubernetes-list-map-keys": ["uid"],
            "x-kubernetes-list-type": "map",
            "x-kubernetes-patch-merge-key": "uid",
            "x-kubernetes-patch-strategy": "merge",
        },
    },
}

OWNER_REFERENCE: dict[str, Any] = {
    "type": "object",
    "description": "OwnerReference contains enough information to let you identify an owning object.",
    "required": ["apiVersion", "kind", "name", "uid"],
    "properties": {
        "apiVersion": _string("API version of the referent."),
        "kind": _string("Kind of the referent."),
        "name": _string("Name of the referent."),
        "uid": _string("UID of the referent."),
        "controller": {
            "type": "boolean",
            "description": "If true, this reference points to the managing controller.",
        },
        "blockOwnerDeletion": {
            "type": "boolean",
            "description": "If true, a foreground deletion of the owner waits for this object.",
        },
    },
    "x-kubernetes-map-type": "atomic",
}


def schema_name(group: str, version: str, kind: str) -> str:
    """``apps.kruise.io`` v1alpha1 CloneSet -> ``io.kruise.apps.v1alpha1.CloneSet``."""
    return ".".join([*reversed(group.split(".")), version, kind])


def _gvk(rt: ResourceType, kind: str) -> list[dict[str, str]]:
    return [{"group": rt.group, "kind": kind, "version": rt.version}]


def crd_schemas(rt: ResourceType) -> dict[str, Any]:
    """The component schemas of one served CRD version (kind and list)."""
    schema = (
        copy.deepcopy(rt.schema)
        if rt.schema
        else {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    )
    properties = schema.setdefault("properties", {})
    properties["apiVersion"] = {**properties.get("apiVersion", {}), **_string(_API_VERSION)}
    properties["kind"] = {**properties.get("kind", {}), **_string(_KIND)}
    properties["metadata"] = {"allOf": [{"$ref": OBJECT_META_REF}], "description": _METADATA}
    schema["x-kubernetes-group-version-kind"] = _gvk(rt, rt.kind)
    name = schema_name(rt.group, rt.version, rt.kind)
    listing = {
        "type": "object",
        "description": f"{rt.kind}List is a list of {rt.kind}",
        "required": ["items"],
        "properties": {
            "apiVersion": _string(_API_VERSION),
            "items": {
                "type": "array",
                "description": f"List of {rt.plural}. More info: "
                "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md",
                "items": {"$ref": f"#/components/schemas/{name}"},
            },
            "kind": _string(_KIND),
            "metadata": {
                "allOf": [{"$ref": f"#/components/schemas/{META}.ListMeta"}],
                "description": "Standard list metadata.",
            },
        },
        "x-kubernetes-group-version-kind": _gvk(rt, f"{rt.kind}List"),
    }
    return {name: schema, f"{name}List": listing}


def component_schemas(types: list[ResourceType]) -> dict[str, Any]:
    """Every schema a group/version document carries: its CRDs' and the metadata they refer to."""
    schemas: dict[str, Any] = {}
    for rt in types:
        if rt.is_custom:
            schemas.update(crd_schemas(rt))
    if schemas:
        schemas[f"{META}.ObjectMeta"] = OBJECT_META
        schemas[f"{META}.OwnerReference"] = OWNER_REFERENCE
        schemas[f"{META}.ListMeta"] = {
            "type": "object",
            "description": "ListMeta describes metadata that synthetic resources must have.",
            "properties": {
                "continue": _string("Token to retrieve the next chunk of a paginated list."),
                "resourceVersion": _string("Version of the list, to start a watch from."),
            },
        }
    return schemas
