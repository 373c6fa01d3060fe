"""Discovery documents (legacy and aggregated v2) and the OpenAPI v3 slices kubectl consults.

kubectl needs OpenAPI v3 to learn that PATCH supports `fieldValidation` (so it validates
server-side) and, for `kubectl explain`, the schemas of custom resources (`openapi.py`);
built-in kinds are described by their operations only.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from typing import Any

import orjson

from kruise.sandbox.apiserver.openapi import component_schemas
from kruise.sandbox.apiserver.resources import ResourceType

AGGREGATED_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
_SUB_VERBS = {
    "status": ["get", "patch", "update"],
    "scale": ["get", "patch", "update"],
    "eviction": ["create"],
    "binding": ["create"],
    "finalize": ["update"],
    "token": ["create"],
    "ephemeralcontainers": ["get", "patch", "update"],
    "resize": ["get", "patch", "update"],
    "exec": ["create", "get"],
    "attach": ["create", "get"],
}
_SUB_KIND = {
    "scale": ("autoscaling", "v1", "Scale"),
    "eviction": ("policy", "v1", "Eviction"),
    "binding": ("", "v1", "Binding"),
    "token": ("authentication.k8s.io", "v1", "TokenRequest"),
    "exec": ("", "v1", "PodExecOptions"),
    "attach": ("", "v1", "PodAttachOptions"),
}


def _version_key(version: str) -> tuple[int, int, int]:
    """Kubernetes version priority: GA > beta > alpha, higher numbers first."""
    import re

    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not m:
        return (-1, 0, 0)
    stage = {"alpha": 0, "beta": 1, None: 2}[m.group(2)]
    return (stage, int(m.group(1)), int(m.group(3) or 0))


def group_versions(types: list[ResourceType]) -> dict[str, list[str]]:
    by_group: dict[str, set[str]] = defaultdict(set)
    for rt in types:
        by_group[rt.group].add(rt.version)
    return {g: sorted(v, key=_version_key, reverse=True) for g, v in by_group.items()}


def api_versions() -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}],
    }


def _group_doc(group: str, versions: list[str]) -> dict[str, Any]:
    gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"name": group, "versions": gvs, "preferredVersion": gvs[0]}


def api_group_list(types: list[ResourceType]) -> dict[str, Any]:
    groups = [_group_doc(g, v) for g, v in group_versions(types).items() if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(types: list[ResourceType], group: str) -> dict[str, Any] | None:
    versions = group_versions(types).get(group)
    if not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_doc(group, versions)}


def resource_list(types: list[ResourceType], group: str, version: str) -> dict[str, Any] | None:
    chosen = [rt for rt in types if rt.group == group and rt.version == version]
    if not chosen:
        return None
    resources = []
    for rt in chosen:
        entry: dict[str, Any] = {
            "name": rt.plural,
            "singularName": rt.singular,
            "namespaced": rt.namespaced,
            "kind": rt.kind,
            "verbs": rt.verbs,
        }
        if rt.short_names:
            entry["shortNames"] = rt.short_names
        if rt.categories:
            entry["categories"] = rt.categories
        if rt.is_custom:
            entry["storageVersionHash"] = hashlib.sha256(
                f"{rt.group}/{rt.storage_version}/{rt.kind}".encode()
            ).hexdigest()[:11]
        resources.append(entry)
        for sub in rt.subresources:
            g, v, k = _SUB_KIND.get(sub, (rt.group, rt.version, rt.kind))
            sub_entry: dict[str, Any] = {
                "name": f"{rt.plural}/{sub}",
                "singularName": "",
                "namespaced": rt.namespaced,
                "kind": k,
                "verbs": _SUB_VERBS.get(sub, ["get"]),
            }
            if g != rt.group:
                sub_entry["group"] = g
                sub_entry["version"] = v
            resources.append(sub_entry)
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": chosen[0].api_version,
        "resources": resources,
    }


def aggregated(types: list[ResourceType], legacy: bool) -> dict[str, Any]:
    """apidiscovery.k8s.io/v2 APIGroupDiscoveryList for /api (legacy) or /apis."""
    items = []
    for group, versions in group_versions(types).items():
        if bool(group) == legacy:
            continue
        vdocs = []
        for version in versions:
            resources = []
            for rt in (t for t in types if t.group == group and t.version == version):
                entry: dict[str, Any] = {
                    "resource": rt.plural,
                    "responseKind": {"group": rt.group, "version": rt.version, "kind": rt.kind},
                    "scope": "Namespaced" if rt.namespaced else "Cluster",
                    "singularResource": rt.singular,
                    "verbs": rt.verbs,
                }
                if rt.short_names:
                    entry["shortNames"] = rt.short_names
                if rt.categories:
                    entry["categories"] = rt.categories
                subs = []
                for sub in rt.subresources:
                    g, v, k = _SUB_KIND.get(sub, (rt.group, rt.version, rt.kind))
                    subs.append(
                        {
                            "subresource": sub,
                            "responseKind": {"group": g, "version": v, "kind": k},
                            "verbs": _SUB_VERBS.get(sub, ["get"]),
                        }
                    )
                if subs:
                    entry["subresources"] = subs
                resources.append(entry)
            vdocs.append({"version": version, "resources": resources, "freshness": "Current"})
        items.append({"metadata": {"name": group, "creationTimestamp": None}, "versions": vdocs})
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    }


_PATCH_PARAMS = [
    {"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": True}}
    for name in ("dryRun", "fieldManager", "fieldValidation", "force", "pretty")
]


def openapi_v3_root(types: list[ResourceType]) -> dict[str, Any]:
    paths = {}
    for group, versions in group_versions(types).items():
        for version in versions:
            gv = f"api/{version}" if not group else f"apis/{group}/{version}"
            digest = hashlib.sha512(orjson.dumps(openapi_v3_gv(types, group, version))).hexdigest().upper()
            paths[gv] = {"serverRelativeURL": f"/openapi/v3/{gv}?hash={digest}"}
    return {"paths": paths}


def openapi_v3_gv(types: list[ResourceType], group: str, version: str) -> dict[str, Any] | None:
    chosen = [rt for rt in types if rt.group == group and rt.version == version]
    if not chosen:
        return None
    paths: dict[str, Any] = {}
    for rt in chosen:
        prefix = f"/api/{version}" if not group else f"/apis/{group}/{version}"
        ns = "/namespaces/{namespace}" if rt.namespaced else ""
        gvk = [{"group": rt.group, "version": rt.version, "kind": rt.kind}]
        op = {
            "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": gvk[0],
            "operationId": f"patch{rt.kind}",
            "parameters": _PATCH_PARAMS,
            "responses": {"200": {"description": "OK"}},
        }
        paths[f"{prefix}{ns}/{rt.plural}/{{name}}"] = {
            "get": {
                "x-kubernetes-action": "get",
                "x-kubernetes-group-version-kind": gvk[0],
                "responses": {"200": {"description": "OK"}},
            },
            "patch": op,
            "parameters": [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}],
        }
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.36.0"},
        "paths": paths,
        "components": {"schemas": component_schemas(chosen)},
    }
