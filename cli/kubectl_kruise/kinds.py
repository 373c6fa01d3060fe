"""Which workload a `TYPE/NAME` argument names.

kubectl resolves resource types through discovery; the plugin only acts on a fixed set of
workloads (each needs its own status, pause and history rules), so a static table of their
names is both enough and exact. Ambiguous short names resolve the way kubectl's RESTMapper
does: the built-in `apps` group wins, so `sts` and `statefulset` are the native StatefulSet and
`asts` (or `statefulsets.apps.kruise.io`) is the Advanced StatefulSet.
"""

from __future__ import annotations

from dataclasses import dataclass

from kruise.cli.kubectl_kruise.errors import PluginError
from kruise.kube.resources import DEPLOYMENTS, STATEFULSETS_APPS, ResourceRef


@dataclass(frozen=True)
class Workload:
    """One kind the plugin manages, with every name a user may type for it."""

    ref: ResourceRef
    singular: str
    short_names: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        return self.ref.kind

    @property
    def group(self) -> str:
        return self.ref.group

    @property
    def resource(self) -> str:
        """`clonesets.apps.kruise.io`: how kubectl names the resource in errors."""
        return f"{self.ref.plural}.{self.group}" if self.group else self.ref.plural

    def display(self, name: str) -> str:
        """`cloneset.apps.kruise.io/demo`: kubectl's name printer."""
        prefix = f"{self.kind.lower()}.{self.group}" if self.group else self.kind.lower()
        return f"{prefix}/{name}"

    @property
    def is_kruise(self) -> bool:
        return self.group == "apps.kruise.io"

    def names(self) -> set[str]:
        base = {self.ref.plural, self.singular, self.kind.lower(), *self.short_names}
        qualified = {self.ref.plural, self.singular, self.kind.lower()}
        out = set(base)
        for name in qualified:
            out.add(f"{name}.{self.group}")
            out.add(f"{name}.{self.ref.version}.{self.group}")
        return out


DAEMONSETS_APPS = ResourceRef("apps", "v1", "daemonsets", True, "DaemonSet")
CLONESETS = ResourceRef("apps.kruise.io", "v1alpha1", "clonesets", True, "CloneSet")
ADVANCED_STATEFULSETS = ResourceRef("apps.kruise.io", "v1beta1", "statefulsets", True, "StatefulSet")
ADVANCED_DAEMONSETS = ResourceRef("apps.kruise.io", "v1alpha1", "daemonsets", True, "DaemonSet")

DEPLOYMENT = Workload(DEPLOYMENTS, "deployment", ("deploy",))
STATEFULSET = Workload(STATEFULSETS_APPS, "statefulset", ("sts",))
DAEMONSET = Workload(DAEMONSETS_APPS, "daemonset", ("ds",))
CLONESET = Workload(CLONESETS, "cloneset", ("clone",))
ADVANCED_STATEFULSET = Workload(ADVANCED_STATEFULSETS, "statefulset", ("asts",))
ADVANCED_DAEMONSET = Workload(ADVANCED_DAEMONSETS, "daemonset", ("daemon", "ads"))

# Order is priority: the first workload claiming a name wins (built-in groups first, as kubectl).
WORKLOADS: tuple[Workload, ...] = (
    DEPLOYMENT,
    STATEFULSET,
    DAEMONSET,
    CLONESET,
    ADVANCED_STATEFULSET,
    ADVANCED_DAEMONSET,
)


class ResolveError(PluginError, ValueError):
    """An argument that does not name a supported workload; the text is kubectl's."""


def resolve_type(name: str, table: tuple[Workload, ...] = WORKLOADS) -> Workload:
    wanted = name.lower()
    for workload in table:
        if wanted in workload.names():
            return workload
    raise ResolveError(f'the server doesn\'t have a resource type "{name}"')


@dataclass(frozen=True)
class Target:
    workload: Workload
    name: str

    def display(self) -> str:
        return self.workload.display(self.name)


def parse_targets(args: list[str], table: tuple[Workload, ...] = WORKLOADS) -> list[Target]:
    """kubectl's `(TYPE NAME... | TYPE/NAME...)` argument forms, over the kinds in `table`."""
    if not args:
        raise ResolveError("required resource not specified")
    if all("/" in arg for arg in args):
        targets = []
        for arg in args:
            kind, _, name = arg.partition("/")
            if not kind or not name:
                raise ResolveError(
                    f"arguments in resource/name form must have a single resource and name: {arg}"
                )
            targets.append(Target(resolve_type(kind, table), name))
        return targets
    if any("/" in arg for arg in args):
        raise ResolveError(
            "there is no need to specify a resource type as a separate argument when passing arguments "
            "in resource/name form (e.g. 'kubectl get resource/<resource_name>' instead of "
            "'kubectl get resource resource/<resource_name>'"
        )
    workload = resolve_type(args[0], table)
    if len(args) == 1:
        raise ResolveError("resource(s) were provided, but no name was specified")
    return [Target(workload, name) for name in args[1:]]
