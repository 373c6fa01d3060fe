"""Turn API models plus per-kind metadata into apiextensions.k8s.io/v1 CustomResourceDefinitions.

The schema walker emits *structural* OpenAPI v3 (every node typed, no $ref/anyOf), because the
apiserver prunes and validates custom resources with it. Embedded Kubernetes types that upstream
marks Schemaless (pod templates, PVC templates, containers ...) become preserve-unknown-fields
objects, which keeps the CRDs small enough for `kubectl apply`.

Every property carries a `description` (what `kubectl explain` prints): a field's attribute docstring,
read by pydantic (see `KruiseModel`); the root's comes from `CRDInfo.description`.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from kruise.api.common import IntOrStringSchema, ListMapKeys, PreserveUnknown, SchemaFormat
from kruise.api.objects import section

AGE_COLUMN_PATH = ".metadata.creationTimestamp"
CRD_REQUIRED: dict[str, Any] = {"crd_required": True}
"""Pass as `Field(default=None, json_schema_extra=CRD_REQUIRED)`: required in the CRD schema (so the
apiserver rejects its absence) while the model still parses without it and validation can name it."""


@dataclass(frozen=True)
class PrinterColumn:
    name: str
    type: str
    json_path: str
    priority: int = 0
    description: str | None = None
    format: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"jsonPath": self.json_path, "name": self.name, "type": self.type}
        if self.description:
            out["description"] = self.description
        if self.format:
            out["format"] = self.format
        if self.priority:
            out["priority"] = self.priority
        return out


def age_column(name: str = "AGE") -> PrinterColumn:
    return PrinterColumn(name, "date", AGE_COLUMN_PATH)


@dataclass(frozen=True)
class ScaleSubresource:
    spec_replicas_path: str = ".spec.replicas"
    status_replicas_path: str = ".status.replicas"
    label_selector_path: str | None = ".status.labelSelector"

    def to_dict(self) -> dict[str, Any]:
        out = {"specReplicasPath": self.spec_replicas_path, "statusReplicasPath": self.status_replicas_path}
        if self.label_selector_path:
            out["labelSelectorPath"] = self.label_selector_path
        return out


@dataclass(frozen=True)
class CRDVersion:
    name: str
    model: type[BaseModel]
    served: bool = True
    storage: bool = True
    printer_columns: tuple[PrinterColumn, ...] = ()
    status_subresource: bool = True
    scale: ScaleSubresource | None = None


@dataclass(frozen=True)
class CRDInfo:
    """Everything about one kind that is not its schema: names, scope, versions, conversion."""

    group: str
    kind: str
    plural: str
    versions: tuple[CRDVersion, ...]
    scope: Literal["Namespaced", "Cluster"] = "Namespaced"
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    list_kind: str | None = None
    singular: str | None = None
    description: str = ""
    """What the kind is, as `kubectl explain <plural>` prints it above the fields (same for every version)."""
    conversion_webhook: bool = False
    """Both versions served, converted by kruise-webhook's `/convert`. All but Advanced StatefulSet (which
    stores v1beta1, as upstream) keep v1alpha1 as their storage version (upstream master stores v1beta1),
    so kruise-manager and kruise-webhook, which read and write v1alpha1, never wait on the conversion
    webhook for their own reads; only v1beta1 clients (kubectl, whose preferred version is then v1beta1)
    go through `/convert`. See docs/api.md."""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.plural}.{self.group}"

    @property
    def file_name(self) -> str:
        return f"{self.group}_{self.plural}.yaml"

    def version(self, name: str) -> CRDVersion:
        for v in self.versions:
            if v.name == name:
                return v
        raise KeyError(f"{self.kind} has no version {name}")

    @property
    def storage_version(self) -> CRDVersion:
        return next(v for v in self.versions if v.storage)


# --- schema walking ---


def _strip_optional(tp: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return tp


def type_schema(tp: Any, metadata: tuple[Any, ...] = ()) -> dict[str, Any]:
    """OpenAPI v3 structural schema of one Python type (with Annotated markers)."""
    tp = _strip_optional(tp)
    if typing.get_origin(tp) is typing.Annotated:
        base, *extra = typing.get_args(tp)
        return type_schema(base, (*metadata, *extra))
    for marker in metadata:
        if isinstance(marker, IntOrStringSchema):
            return {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
        if isinstance(marker, PreserveUnknown):
            return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    fmt = next((m.format for m in metadata if isinstance(m, SchemaFormat)), None)
    list_keys = next((m.keys for m in metadata if isinstance(m, ListMapKeys)), None)

    origin = typing.get_origin(tp)
    if tp is Any:
        return {"x-kubernetes-preserve-unknown-fields": True}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer", "format": fmt or "int32"}
    if tp is float:
        return {"type": "number"}
    if tp is str:
        return {"type": "string", "format": fmt} if fmt else {"type": "string"}
    if origin is Literal:
        return {"type": "string"}
    if origin is list:
        (item,) = typing.get_args(tp)
        schema: dict[str, Any] = {"type": "array", "items": type_schema(item)}
        if list_keys:
            schema["x-kubernetes-list-map-keys"] = list(list_keys)
            schema["x-kubernetes-list-type"] = "map"
        return schema
    if origin is dict:
        _key, value = typing.get_args(tp)
        if value is Any:
            return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        return {"type": "object", "additionalProperties": type_schema(value)}
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return model_schema(tp)
    raise TypeError(f"no CRD schema mapping for type {tp!r}")


def model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """Object schema of a model: properties by wire name, required for fields without a default."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    hints = typing.get_type_hints(model, include_extras=True)
    for name, info in model.model_fields.items():
        wire = info.alias or info.serialization_alias or name
        tp = hints[name]
        props = _described(type_schema(tp, tuple(info.metadata)), field_description(model, name))
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        if "crd_enum" in extra:
            props = {**props, "enum": list(extra["crd_enum"])}
        if "crd_default" in extra:
            props = {**props, "default": extra["crd_default"]}
        if "crd_minimum" in extra:
            props = {**props, "minimum": extra["crd_minimum"]}
        properties[wire] = props
        if info.is_required() or extra.get("crd_required"):
            required.append(wire)
    schema: dict[str, Any] = {"type": "object"}
    if properties:
        schema["properties"] = dict(sorted(properties.items()))
    if required:
        schema["required"] = sorted(required)
    if model.model_config.get("extra") == "allow":
        schema["x-kubernetes-preserve-unknown-fields"] = True
    return schema


def field_description(model: type[BaseModel], name: str) -> str | None:
    """The field's docstring, or else that of the nearest base class declaring the field: a subclass that
    only narrows a field's type (a version's `apiVersion` Literal, say) means the same field."""
    for klass in model.__mro__:
        fields = getattr(klass, "__pydantic_fields__", None) or {}
        if name in fields and fields[name].description:
            return fields[name].description
    return None


def description_text(docstring: str) -> str:
    """A docstring as one line per paragraph: source line breaks are wrapping, not meaning, and
    `kubectl explain` wraps the text to the terminal itself."""
    paragraphs = (" ".join(p.split()) for p in docstring.strip().split("\n\n"))
    return "\n\n".join(p for p in paragraphs if p)


def _described(schema: dict[str, Any], description: str | None) -> dict[str, Any]:
    return {"description": description_text(description), **schema} if description else schema


def root_schema(model: type[BaseModel], description: str = "") -> dict[str, Any]:
    """Top-level schema: apiVersion/kind/metadata as every CRD declares them (metadata schemaless: the
    apiserver owns it), then spec/status. Their descriptions are the envelope model's."""
    schema = _described(model_schema(model), description)
    props = schema.setdefault("properties", {})
    props["apiVersion"] = _described({"type": "string"}, field_description(model, "api_version"))
    props["kind"] = _described({"type": "string"}, field_description(model, "kind"))
    props["metadata"] = _described({"type": "object"}, field_description(model, "metadata"))
    schema["properties"] = dict(sorted(props.items()))
    schema.pop("required", None)
    return schema


def build_crd(info: CRDInfo) -> dict[str, Any]:
    versions = []
    for v in info.versions:
        version: dict[str, Any] = {"name": v.name}
        if v.printer_columns:
            version["additionalPrinterColumns"] = [c.to_dict() for c in v.printer_columns]
        version["schema"] = {"openAPIV3Schema": root_schema(v.model, info.description)}
        version["served"] = v.served
        version["storage"] = v.storage
        sub: dict[str, Any] = {}
        if v.scale:
            sub["scale"] = v.scale.to_dict()
        if v.status_subresource:
            sub["status"] = {}
        if sub:
            version["subresources"] = sub
        versions.append(version)
    names: dict[str, Any] = {
        "kind": info.kind,
        "listKind": info.list_kind or f"{info.kind}List",
        "plural": info.plural,
        "singular": info.singular or info.kind.lower(),
    }
    if info.short_names:
        names["shortNames"] = list(info.short_names)
    if info.categories:
        names["categories"] = list(info.categories)
    spec: dict[str, Any] = {"group": info.group, "names": names, "scope": info.scope, "versions": versions}
    if info.conversion_webhook and len(info.versions) > 1:
        spec["conversion"] = {
            "strategy": "Webhook",
            "webhook": {
                "clientConfig": {
                    "service": {
                        "name": "kruise-webhook-service",
                        "namespace": "kruise-system",
                        "path": "/convert",
                    }
                },
                "conversionReviewVersions": ["v1", "v1beta1"],
            },
        }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": info.name},
        "spec": spec,
    }


# --- structural checks (apiextensions "structural schema" rules the apiserver enforces) ---


def structural_errors(schema: dict[str, Any], path: str = "openAPIV3Schema") -> list[str]:
    """Why a schema is not structural; empty when it is (used by tests and `kruise crds check`)."""
    errs: list[str] = []
    if "$ref" in schema:
        errs.append(f"{path}: $ref is not allowed")
    int_or_string = schema.get("x-kubernetes-int-or-string") is True
    preserve = schema.get("x-kubernetes-preserve-unknown-fields") is True
    if "type" not in schema and not (int_or_string or preserve):
        errs.append(f"{path}.type: Required value: must not be empty for specified object fields")
    if "anyOf" in schema:
        if not int_or_string:
            errs.append(f"{path}.anyOf: only allowed together with x-kubernetes-int-or-string")
        for i, sub in enumerate(schema["anyOf"]):
            if set(sub) - {"type"} or sub.get("type") not in ("integer", "string"):
                errs.append(f"{path}.anyOf[{i}]: int-or-string anyOf may only state integer/string types")
    for key in ("oneOf", "allOf", "not"):
        if key in schema:
            errs.append(f"{path}.{key}: not generated by kruise and not structural here")
    if int_or_string and "type" in schema:
        errs.append(f"{path}.type: must be empty for x-kubernetes-int-or-string")
    if "properties" in schema and "additionalProperties" in schema:
        errs.append(f"{path}: properties and additionalProperties are mutually exclusive")
    if schema.get("type") == "array" and "items" not in schema:
        errs.append(f"{path}.items: Required value: must be specified for arrays")
    for name, sub in section(schema, "properties").items():
        errs.extend(structural_errors(sub, f"{path}.properties[{name}]"))
    if isinstance(schema.get("items"), dict):
        errs.extend(structural_errors(schema["items"], f"{path}.items"))
    if isinstance(schema.get("additionalProperties"), dict):
        errs.extend(structural_errors(schema["additionalProperties"], f"{path}.additionalProperties"))
    for name in schema.get("required") or []:
        if name not in section(schema, "properties"):
            errs.append(f"{path}.required: {name} is not a declared property")
    return errs
