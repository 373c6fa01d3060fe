"""kubectl versions of upstream's `UnitedDeploymentTester` / `UnitedDeploymentManager`
(`test/e2e/framework/v1alpha1/uniteddeployment.go`): the UnitedDeployment the cases build subset by
subset, its scale/update helpers and the checks on subset replicas, subset pods, reserved pods and
the subsets' `Schedulable` condition.

Upstream draws the template kind at random for every run (any of the four, or CloneSet/Deployment
when `statelessOnly`), leaving flakes to `FlakeAttempts(3)`. A random kind would make a red CI run
unreproducible, so each translated case names its kind and the cases together cover all four."""

from __future__ import annotations

import copy
import json
from typing import Any

from upstream_kit import Case, Obj

UD = "uniteddeployments.v1alpha1.apps.kruise.io"
SUBSET_LABEL = "apps.kruise.io/subset-name"
RESERVED_LABEL = "apps.kruise.io/united-deployment-reserved-pod"

DEPLOYMENT = "deploymentTemplate"
CLONESET = "cloneSetTemplate"
STATEFULSET = "statefulSetTemplate"
ADVANCED_STATEFULSET = "advancedStatefulSetTemplate"

MINUTE = 60.0

Quantity = int | str | None
"""A subset's replicas / minReplicas / maxReplicas: a count, a percentage or unset."""


def replicas_map(*replicas: int) -> dict[str, int]:
    return {f"subset-{i}": r for i, r in enumerate(replicas)}


def unschedulable_map(*flags: bool) -> dict[str, bool]:
    return {f"subset-{i}": f for i, f in enumerate(flags)}


def is_reserved(pod: Obj) -> bool:
    """`uniteddeployment.IsPodMarkedAsReserved`."""
    return (pod["metadata"].get("labels") or {}).get(RESERVED_LABEL) == "true"


class UnitedDeploymentManager:
    """`NewUnitedDeploymentManager(name, ...)` with the template kind chosen by the case: a busybox
    container sleeping, grace period 0, selector and labels `app: <name>`."""

    def __init__(self, case: Case, name: str, kind: str) -> None:
        self.case = case
        self.name = name
        self.kind = kind
        labels = {"app": name}
        pod_template = {
            "metadata": {"labels": dict(labels)},
            "spec": {
                "terminationGracePeriodSeconds": 0,
                "containers": [
                    {"name": "busybox", "image": "busybox:1.32", "command": ["/bin/sh", "-c", "sleep 100d"]}
                ],
            },
        }
        self.ud: Obj = {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "UnitedDeployment",
            "metadata": {"name": name, "namespace": case.ns},
            "spec": {
                "selector": {"matchLabels": dict(labels)},
                "template": {
                    kind: {
                        "metadata": {"labels": dict(labels)},
                        "spec": {"selector": {"matchLabels": dict(labels)}, "template": pod_template},
                    }
                },
                "topology": {"subsets": []},
            },
        }

    @property
    def spec(self) -> Obj:
        return self.ud["spec"]

    def add_subset(self, name: str, replicas: Quantity, lower: Quantity, upper: Quantity) -> None:
        subset: dict[str, Any] = {"name": name}
        bounds = (("replicas", replicas), ("minReplicas", lower), ("maxReplicas", upper))
        for field, value in bounds:
            if value is not None:
                subset[field] = value
        self.spec["topology"]["subsets"].append(subset)

    def pin_subset(self, index: int, key: str, value: str) -> None:
        """Subset `index` runs only on nodes whose label `key` is `value` (the cases' nodeSelectorTerm)."""
        self.spec["topology"]["subsets"][index]["nodeSelectorTerm"] = {
            "matchExpressions": [{"key": key, "operator": "In", "values": [value]}]
        }

    def set_image(self, image: str) -> None:
        self.spec["template"][self.kind]["spec"]["template"]["spec"]["containers"][0]["image"] = image

    async def get(self) -> Obj:
        return await self.case.must_get(UD, self.name)

    async def create_only(self, replicas: int) -> None:
        """The adaptive cases' direct `Create` (no wait)."""
        self.spec["replicas"] = replicas
        await self.case.create(self.ud)

    async def create(self, replicas: int) -> None:
        """`Create`: then status.replicas reaches `replicas` with the generation observed."""
        await self.create_only(replicas)
        await self._replicas_observed(replicas, "UnitedDeploymentManager.Create")

    async def scale(self, replicas: int) -> None:
        """`Scale`: a merge patch of spec.replicas, then status.replicas follows."""
        self.spec["replicas"] = replicas
        await self.case.patch(UD, self.name, "merge", {"spec": {"replicas": replicas}})
        await self._replicas_observed(replicas, f"UnitedDeploymentManager.Scale({replicas})")

    async def _replicas_observed(self, replicas: int, what: str) -> None:
        def done(ud: Obj) -> bool:
            status = ud.get("status") or {}
            return status.get("replicas", 0) == replicas and ud["metadata"]["generation"] == status.get(
                "observedGeneration"
            )

        await self.case.eventually(self.get, done, what, timeout=MINUTE)

    async def update(self) -> None:
        """`Update`: the live object's spec becomes the manager's (read, replace, retry on conflict)."""
        spec = copy.deepcopy(self.spec)

        def change(ud: Obj) -> None:
            ud["spec"] = copy.deepcopy(spec)

        await self.case.update(UD, self.name, change)

    async def check_subsets(self, expected: dict[str, int]) -> None:
        """`CheckSubsets`: generation observed, status.replicas == spec.replicas, subsetReplicas exact."""

        def done(ud: Obj) -> bool:
            status = ud.get("status") or {}
            return (
                ud["metadata"]["generation"] == status.get("observedGeneration")
                and ud["spec"].get("replicas") == status.get("replicas", 0)
                and status.get("subsetReplicas") == expected
            )

        await self.case.eventually(self.get, done, f"subsetReplicas == {expected}", timeout=3 * MINUTE)

    async def wait_all_pods_ready(self) -> None:
        """`WaitAllPodsReady`: status.readyReplicas == status.replicas."""

        def done(ud: Obj) -> bool:
            status = ud.get("status") or {}
            return status.get("readyReplicas", 0) == status.get("replicas", 0)

        await self.case.eventually(self.get, done, "all pods ready", timeout=MINUTE)

    async def _subset_pods(self, subsets: list[str]) -> dict[str, list[Obj]]:
        return {name: await self.case.list("pods", {SUBSET_LABEL: name}) for name in subsets}

    async def _subset_names(self) -> list[str]:
        """Upstream reads the UnitedDeployment once, before polling, and counts its subsets then."""
        return [s["name"] for s in (await self.get())["spec"]["topology"]["subsets"]]

    async def check_subset_pods(self, expected: dict[str, int]) -> None:
        """`CheckSubsetPods`: the pods labelled with each subset's name, counted (terminating too)."""
        names = await self._subset_names()

        async def counts() -> dict[str, int]:
            return {name: len(pods) for name, pods in (await self._subset_pods(names)).items()}

        await self.case.eventually(counts, lambda got: got == expected, f"subset pods == {expected}", MINUTE)

    async def check_reserved_pods(self, replicas: dict[str, int], reserved: dict[str, int]) -> None:
        """`CheckReservedPods`: per subset, its pods and how many of them are marked reserved."""
        names = await self._subset_names()

        async def counts() -> tuple[dict[str, int], dict[str, int]]:
            got_replicas = dict.fromkeys(reserved, 0)
            got_reserved = dict.fromkeys(replicas, 0)
            for name, pods in (await self._subset_pods(names)).items():
                got_replicas[name] = len(pods)
                got_reserved[name] = sum(1 for pod in pods if is_reserved(pod))
            return got_replicas, got_reserved

        await self.case.eventually(
            counts,
            lambda got: got == (replicas, reserved),
            f"subset pods == {replicas}, reserved == {reserved}",
            MINUTE,
        )

    async def check_pod_image(self, image: str) -> None:
        """`CheckPodImage`: every subset pod's first container runs `image`."""
        names = await self._subset_names()

        async def images() -> set[str]:
            found: set[str] = set()
            for pods in (await self._subset_pods(names)).values():
                found.update(pod["spec"]["containers"][0]["image"] for pod in pods)
            return found

        await self.case.eventually(images, lambda got: got <= {image}, f"every pod on {image}", MINUTE)

    async def check_unschedulable_status(self, expected: dict[str, bool]) -> None:
        """`CheckUnschedulableStatus`: a subset is unschedulable when its `Schedulable` condition is
        False."""

        def actual(ud: Obj) -> dict[str, bool] | None:
            statuses = {s.get("name"): s for s in (ud.get("status") or {}).get("subsetStatuses") or []}
            if not all(name in statuses for name in expected):
                return None
            got = {}
            for name in expected:
                conditions = statuses[name].get("conditions") or []
                got[name] = any(c["type"] == "Schedulable" and c.get("status") == "False" for c in conditions)
            return got

        await self.case.eventually(
            self.get, lambda ud: actual(ud) == expected, f"subsets unschedulable == {expected}", MINUTE
        )


class NodeLabels:
    """`SetNodeLabel`, which upstream applies to kind's `ci-testing-worker`: here the first sandbox
    node by name. The sandbox's nodes are shared by the session, so the keys a case set are taken off
    again at the end (`clear`)."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self.keys: set[str] = set()
        self.node = ""

    async def set(self, key: str, value: str) -> None:
        if not self.node:
            _, out = await self.case.cluster.kubectl("get", "nodes", "-o", "json")
            self.node = sorted(n["metadata"]["name"] for n in json.loads(out)["items"])[0]
        self.keys.add(key)
        await self.case.cluster.kubectl("label", "node", self.node, f"{key}={value}", "--overwrite")

    async def clear(self) -> None:
        if self.node and self.keys:
            await self.case.cluster.kubectl("label", "node", self.node, *(f"{k}-" for k in sorted(self.keys)))
