"""Which handler answers which path: the full routing table of the webhook process."""

from __future__ import annotations

from kruise.api.registry import KINDS
from kruise.webhook import paths
from kruise.webhook.admission import Handler
from kruise.webhook.handlers import deletion, kinds, pod
from kruise.webhook.handlers.deletion import NamespaceContents


def build_routes(namespace_contents: NamespaceContents) -> dict[str, Handler]:
    routes: dict[str, Handler] = {}
    for info in KINDS:
        hooks = kinds.hooks_for(info)
        versions = tuple(v.name for v in info.versions)
        mutate = kinds.mutating_handler(hooks)
        validate = kinds.validating_handler(hooks)
        for path in paths.kind_paths("mutate", info.group, info.kind, versions):
            routes[path] = mutate
        for path in paths.kind_paths("validate", info.group, info.kind, versions):
            routes[path] = validate
    routes[paths.POD_MUTATE] = pod.pod_create_handler()
    workload = deletion.builtin_workload_handler()
    for path in (paths.DEPLOYMENT, paths.REPLICASET, paths.STATEFULSET):
        routes[path] = workload
    always = deletion.always_only_handler()
    routes[paths.SERVICE] = always
    routes[paths.INGRESS] = always
    routes[paths.CRD] = deletion.crd_handler()
    routes[paths.NAMESPACE] = deletion.namespace_handler(namespace_contents)
    return routes
