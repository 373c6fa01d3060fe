"""Upstream's WorkloadSpread e2e, Describe "WorkloadSpread" — context "WorkloadSpread functionality"
(openkruise/kruise v1.9.0 test/e2e/apps/v1alpha1/workloadspread.go, helpers in
framework/v1alpha1/workloadspread_util.go) — translated to kubectl on the AllAlpha sandbox. Upstream's
BeforeEach labels the sorted worker nodes `zone-a`, `zone-b`, `zone-b` under a fake zone key; the
subsets pin pods to those zones. Where upstream reads the pods or the WorkloadSpread status once right
after the CloneSet is running, the translation polls (briefly) until a read passes the same checks: the
deletion costs and the status are written by kruise-manager after the pods are ready, and upstream's
read only wins that race on a cluster slower than the sandbox."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable

import pytest
from harness import Cluster
from upstream_kit import NEW_WEBSERVER_IMAGE, WEBSERVER_IMAGE, Case, Obj, upstream_case

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

ZONE_KEY = "e2e.kruise.io/workloadspread-fake-zone"  # upstream's WorkloadSpreadFakeZoneKey
MATCHED = "apps.kruise.io/matched-workloadspread"  # MatchedWorkloadSpreadSubsetAnnotations
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"  # PodDeletionCostAnnotation
WS = "workloadspreads.v1alpha1.apps.kruise.io"
CLONESET = "clonesets.v1alpha1.apps.kruise.io"
WS_NAME = "test-workload-spread"
CLONESET_NAME = "busybox"
READ = 30.0  # how long a single upstream read is given to come true
RUNNING = 300.0  # WaitForCloneSetRunning's minutes, cut to what the sandbox needs with room


def zone_term(zone: str) -> Obj:
    return {"matchExpressions": [{"key": ZONE_KEY, "operator": "In", "values": [zone]}]}


def subset(name: str, zone: str, max_replicas: int | None) -> Obj:
    """A subset as upstream's cases write it: a required zone term, and a patch annotating `subset`."""
    out: Obj = {
        "name": name,
        "requiredNodeSelectorTerm": zone_term(zone),
        "patch": {"metadata": {"annotations": {"subset": name}}},
    }
    if max_replicas is not None:
        out["maxReplicas"] = max_replicas
    return out


def new_workloadspread(ns: str, subsets: list[Obj]) -> Obj:
    """`NewWorkloadSpread` targeting the base CloneSet."""
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {"name": WS_NAME, "namespace": ns},
        "spec": {
            "targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": CLONESET_NAME},
            "subsets": subsets,
        },
    }


def new_base_cloneset(ns: str) -> Obj:
    """`NewBaseCloneSet`: 2 httpd replicas selected by `app: <namespace>`, InPlaceOnly updates."""
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": CLONESET_NAME, "namespace": ns},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": ns}},
            "updateStrategy": {"type": "InPlaceOnly"},
            "template": {
                "metadata": {"labels": {"app": ns}},
                "spec": {"containers": [{"name": "main", "image": WEBSERVER_IMAGE}]},
            },
        },
    }


async def label_zones(case: Case) -> None:
    """BeforeEach: the workers (nodes without a master/control-plane label or taint), sorted by name,
    get the fake zone label zone-a, zone-b, zone-b."""
    masters = {"node-role.kubernetes.io/master", "node-role.kubernetes.io/control-plane"}
    workers = sorted(
        node["metadata"]["name"]
        for node in await case.list("nodes")
        if "node-role.kubernetes.io/master" not in (node["metadata"].get("labels") or {})
        and not any(t.get("key") in masters for t in node["spec"].get("taints") or [])
    )
    assert len(workers) > 2, workers
    for node, zone in zip(workers, ("zone-a", "zone-b", "zone-b"), strict=False):
        await case.cluster.kubectl("label", "node", node, f"{ZONE_KEY}={zone}", "--overwrite")


async def observed(case: Case, resource: str, name: str) -> Obj:
    """`WaitForWorkloadSpreadRunning` (and the wait in `UpdateWorkloadSpread`): generation observed."""

    async def read() -> Obj:
        return await case.must_get(resource, name)

    return await case.eventually(
        read,
        lambda o: o["metadata"].get("generation") == (o.get("status") or {}).get("observedGeneration"),
        f"{resource} {name} observed",
    )


async def create_workloadspread(case: Case, ws: Obj) -> Obj:
    await case.create(ws)
    return await observed(case, WS, WS_NAME)


async def update_workloadspread(case: Case, change: Callable[[Obj], None]) -> Obj:
    await case.update(WS, WS_NAME, change)
    return await observed(case, WS, WS_NAME)


def set_replicas(count: int) -> Callable[[Obj], None]:
    def change(cs: Obj) -> None:
        cs["spec"]["replicas"] = count

    return change


def set_image(image: str) -> Callable[[Obj], None]:
    def change(cs: Obj) -> None:
        cs["spec"]["template"]["spec"]["containers"][0]["image"] = image

    return change


async def cloneset_running(case: Case, *, updated_ready: bool = False) -> None:
    """`WaitForCloneSetRunning` (`WaiteCloneSetUpdate` with `updated_ready`): observed, and every
    replica created, updated and ready."""

    async def done() -> bool:
        cs = await case.must_get(CLONESET, CLONESET_NAME)
        want, status = cs["spec"]["replicas"], cs.get("status") or {}
        keys = ["readyReplicas", "replicas", "updatedReplicas"] + (["updatedReadyReplicas"] * updated_ready)
        return cs["metadata"].get("generation") == status.get("observedGeneration") and all(
            status.get(key, 0) == want for key in keys
        )

    await case.eventually(done, bool, f"cloneset {CLONESET_NAME} running", timeout=RUNNING)


async def cloneset_run_replicas(case: Case, count: int) -> None:
    """`WaitForCloneSetRunReplicas`: observed, and `count` pods ready on the update revision."""

    async def done() -> bool:
        cs = await case.must_get(CLONESET, CLONESET_NAME)
        status = cs.get("status") or {}
        return (
            cs["metadata"].get("generation") == status.get("observedGeneration")
            and status.get("readyReplicas", 0) == count
            and status.get("updatedReadyReplicas", 0) == count
        )

    await case.eventually(done, bool, f"cloneset {CLONESET_NAME} runs {count} replicas", timeout=RUNNING)


async def selector_pods(case: Case) -> list[Obj]:
    """`GetSelectorPods`: the CloneSet's active pods (not being deleted, not Succeeded/Failed)."""
    return [
        pod
        for pod in await case.list("pods", {"app": case.ns})
        if not pod["metadata"].get("deletionTimestamp")
        and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
    ]


def injected(pod: Obj) -> dict | None:
    raw = (pod["metadata"].get("annotations") or {}).get(MATCHED)
    return json.loads(raw) if raw is not None else None


def pod_view(pod: Obj, subsets: list[Obj]) -> tuple:
    """What upstream's per-pod loop checks: the matched subset (and that the WorkloadSpread named is this
    one), that the subset's zone term is the first required node-selector term, and the deletion cost.
    A pod without the annotation shows only its deletion cost (upstream wants none)."""
    annotations = pod["metadata"].get("annotations") or {}
    cost = annotations.get(DELETION_COST, "")
    inject = injected(pod)
    if inject is None:
        return (None, cost)
    term = next((s["requiredNodeSelectorTerm"] for s in subsets if s["name"] == inject["subset"]), None)
    affinity = ((pod["spec"].get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    first = (affinity.get("nodeSelectorTerms") or [{}])[0].get("matchExpressions")
    pinned = term is not None and first == term["matchExpressions"]
    return (inject["subset"], inject["name"] == WS_NAME, pinned, cost)


async def pods_are(
    case: Case, count: int, subsets: list[Obj], want: dict[str, tuple[int, str]], *, uninjected: int = 0
) -> list[Obj]:
    """`GetSelectorPods` + `HaveLen(count)` + the per-pod loop: `want` maps a subset to (pods in it, the
    deletion cost each carries); every injected pod names this WorkloadSpread and is pinned to its zone,
    and `uninjected` pods (none unless told) carry no annotation and no deletion cost."""
    expected = Counter({(name, True, True, cost): n for name, (n, cost) in want.items() if n})
    if uninjected:
        expected[(None, "")] = uninjected

    async def view() -> tuple[list[Obj], Counter]:
        pods = await selector_pods(case)
        return pods, Counter(pod_view(p, subsets) for p in pods)

    pods, _ = await case.eventually(
        view,
        lambda got: len(got[0]) == count and got[1] == expected,
        f"{count} pods spread as {want}",
        timeout=READ,
    )
    return pods


def subset_view(status: Obj, conditions: bool) -> tuple:
    view = (
        status.get("name"),
        status.get("missingReplicas", 0),
        status.get("replicas", 0),
        len(status.get("creatingPods") or {}),
        len(status.get("deletingPods") or {}),
    )
    return (*view, len(status.get("conditions") or [])) if conditions else view


async def status_is(case: Case, want: list[tuple[str, int, int]], *, conditions: bool = False) -> Obj:
    """The status checks after each step: per subset (in spec order) name, missingReplicas and
    replicas, with no creating or deleting pods (and, with `conditions`, no conditions)."""
    expected = [
        (name, missing, replicas, 0, 0) + ((0,) if conditions else ()) for name, missing, replicas in want
    ]

    async def view() -> tuple[Obj, list[tuple]]:
        ws = await case.must_get(WS, WS_NAME)
        statuses = (ws.get("status") or {}).get("subsetStatuses") or []
        return ws, [subset_view(s, conditions) for s in statuses]

    ws, _ = await case.eventually(view, lambda got: got[1] == expected, f"status {expected}", timeout=READ)
    assert [s["name"] for s in ws["spec"]["subsets"]] == [w[0] for w in want]
    return ws


async def test_deploy_in_two_zone_max_replicas_integer(kruise_sandbox_all_gates: Cluster):
    """deploy in two zone, the type of maxReplicas is Integer

    zone-a and zone-b at maxReplicas 3 for a CloneSet of 6: 3 + 3 pinned pods (deletion cost 200 in
    zone-a, 100 in zone-b), kept through an in-place image update; both maxima down to 2 with the
    CloneSet at 4 leaves 2 + 2, both up to 4 with the CloneSet at 8 gives 4 + 4."""
    async with upstream_case(kruise_sandbox_all_gates, "workloadspread") as case:
        await label_zones(case)
        subsets = [subset("zone-a", "zone-a", 3), subset("zone-b", "zone-b", 3)]
        await create_workloadspread(case, new_workloadspread(case.ns, subsets))
        cloneset = new_base_cloneset(case.ns)
        cloneset["spec"]["replicas"] = 6
        await case.create(cloneset)
        await cloneset_running(case)

        await pods_are(case, 6, subsets, {"zone-a": (3, "200"), "zone-b": (3, "100")})
        await status_is(case, [("zone-a", 0, 3), ("zone-b", 0, 3)])

        await case.update(CLONESET, CLONESET_NAME, set_image(NEW_WEBSERVER_IMAGE))
        await cloneset_running(case, updated_ready=True)
        await pods_are(case, 6, subsets, {"zone-a": (3, "200"), "zone-b": (3, "100")})
        await status_is(case, [("zone-a", 0, 3), ("zone-b", 0, 3)])

        def max_replicas(count: int) -> Callable[[Obj], None]:
            def change(ws: Obj) -> None:
                for s in ws["spec"]["subsets"]:
                    s["maxReplicas"] = count

            return change

        await update_workloadspread(case, max_replicas(2))
        await case.update(CLONESET, CLONESET_NAME, set_replicas(4))
        await cloneset_running(case)
        await pods_are(case, 4, subsets, {"zone-a": (2, "200"), "zone-b": (2, "100")})
        await status_is(case, [("zone-a", 0, 2), ("zone-b", 0, 2)])

        await update_workloadspread(case, max_replicas(4))
        await case.update(CLONESET, CLONESET_NAME, set_replicas(8))
        await cloneset_running(case)
        await pods_are(case, 8, subsets, {"zone-a": (4, "200"), "zone-b": (4, "100")})
        await status_is(case, [("zone-a", 0, 4), ("zone-b", 0, 4)])


async def test_elastic_deployment_zone_a_2_zone_b_nil(kruise_sandbox_all_gates: Cluster):
    """elastic deployment, zone-a=2, zone-b=nil

    zone-a holds 2 pods at most, zone-b is unlimited (missingReplicas -1): a CloneSet of 2 lands in
    zone-a, scaled to 6 it adds 4 in zone-b, keeps them through an image update, and scaled back to 2
    it removes the zone-b pods (the lower deletion cost) first."""
    async with upstream_case(kruise_sandbox_all_gates, "workloadspread") as case:
        await label_zones(case)
        subsets = [subset("zone-a", "zone-a", 2), subset("zone-b", "zone-b", None)]
        await create_workloadspread(case, new_workloadspread(case.ns, subsets))
        await case.create(new_base_cloneset(case.ns))
        await cloneset_running(case)
        await pods_are(case, 2, subsets, {"zone-a": (2, "200"), "zone-b": (0, "100")})
        await status_is(case, [("zone-a", 0, 2), ("zone-b", -1, 0)])

        await case.update(CLONESET, CLONESET_NAME, set_replicas(6))
        await cloneset_running(case)
        await pods_are(case, 6, subsets, {"zone-a": (2, "200"), "zone-b": (4, "100")})
        await status_is(case, [("zone-a", 0, 2), ("zone-b", -1, 4)])

        await case.update(CLONESET, CLONESET_NAME, set_image(NEW_WEBSERVER_IMAGE))
        await cloneset_running(case)
        await pods_are(case, 6, subsets, {"zone-a": (2, "200"), "zone-b": (4, "100")})
        await status_is(case, [("zone-a", 0, 2), ("zone-b", -1, 4)])

        await case.update(CLONESET, CLONESET_NAME, set_replicas(2))
        await cloneset_running(case)
        await pods_are(case, 2, subsets, {"zone-a": (2, "200"), "zone-b": (0, "100")})
        await status_is(case, [("zone-a", 0, 2), ("zone-b", -1, 0)])


def schedulable_is(status: str) -> Callable[[Obj], bool]:
    def done(ws: Obj) -> bool:
        first = ((ws.get("status") or {}).get("subsetStatuses") or [{}])[0]
        return any(
            c.get("type") == "Schedulable" and c.get("status") == status
            for c in first.get("conditions") or []
        )

    return done


async def test_reschedule_subset_a(kruise_sandbox_all_gates: Cluster):
    """reschedule subset-a

    subset-a asks for zone-x, which no node has: with the Fixed strategy its 2 pods stay Pending while
    subset-b's 3 run. Switched to Adaptive (rescheduleCriticalSeconds 5), subset-a is marked
    Schedulable=False, its pods are deleted and re-created in subset-b (5 running there), and after the
    5 minutes upstream's controller waits subset-a is Schedulable=True again."""
    async with upstream_case(kruise_sandbox_all_gates, "workloadspread") as case:
        await label_zones(case)
        subsets = [subset("subset-a", "zone-x", 2), subset("subset-b", "zone-b", None)]
        ws = new_workloadspread(case.ns, subsets)
        ws["spec"]["scheduleStrategy"] = {"type": "Fixed"}
        await create_workloadspread(case, ws)
        cloneset = new_base_cloneset(case.ns)
        cloneset["spec"]["replicas"] = 5
        await case.create(cloneset)
        await cloneset_run_replicas(case, 3)

        pods = await pods_are(case, 5, subsets, {"subset-a": (2, "200"), "subset-b": (3, "100")})
        running = Counter(
            injected(p)["subset"] for p in pods if (p.get("status") or {}).get("phase") == "Running"
        )
        assert running == Counter({"subset-b": 3}), running
        for pod in pods:
            assert pod["metadata"]["annotations"]["subset"] == injected(pod)["subset"]
        await status_is(case, [("subset-a", 0, 2), ("subset-b", -1, 3)], conditions=True)

        def adaptive(ws: Obj) -> None:
            ws["spec"]["scheduleStrategy"] = {
                "type": "Adaptive",
                "adaptive": {"disableSimulationSchedule": True, "rescheduleCriticalSeconds": 5},
            }

        await update_workloadspread(case, adaptive)

        async def read() -> Obj:
            return await case.must_get(WS, WS_NAME)

        await case.eventually(read, schedulable_is("False"), "subset-a Schedulable=False", timeout=360)

        await cloneset_run_replicas(case, 5)
        pods = await pods_are(case, 5, subsets, {"subset-a": (0, "200"), "subset-b": (5, "100")})
        for pod in pods:
            assert pod["metadata"]["annotations"]["subset"] == "subset-b"

        await case.eventually(read, schedulable_is("True"), "subset-a Schedulable=True", timeout=360)


async def test_manage_pods_created_before_workloadspread(kruise_sandbox_all_gates: Cluster):
    """manage the pods that were created before workloadspread

    A CloneSet of 4 preferring zone-a runs before the WorkloadSpread exists; two of its pods carry the
    annotation of another WorkloadSpread. The new WorkloadSpread (zone-a at most 2, zone-b unlimited)
    takes all 4 into zone-a; scaled to 6, the 2 new pods go to zone-b, and 4 pods have a positive
    deletion cost, the 2 over zone-a's limit a negative one; scaled to 3, those 2 and one zone-b pod
    go."""
    async with upstream_case(kruise_sandbox_all_gates, "workloadspread") as case:
        await label_zones(case)
        cloneset = new_base_cloneset(case.ns)
        cloneset["spec"]["replicas"] = 4
        cloneset["spec"]["template"]["spec"]["affinity"] = {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 100, "preference": zone_term("zone-a")}
                ]
            }
        }
        subsets = [subset("zone-a", "zone-a", 2), subset("zone-b", "zone-b", None)]
        await case.create(cloneset)
        await cloneset_running(case)

        pods = await selector_pods(case)
        fake = json.dumps({"name": "fakeWS", "subset": "subset-a"})
        for pod in pods[:2]:

            def annotate(obj: Obj) -> None:
                obj["metadata"].setdefault("annotations", {})[MATCHED] = fake

            await case.update("pod", pod["metadata"]["name"], annotate)

        await create_workloadspread(case, new_workloadspread(case.ns, subsets))

        async def read() -> Obj:
            return await case.must_get(WS, WS_NAME)

        def replicas_of(index: int, count: int) -> Callable[[Obj], bool]:
            def done(ws: Obj) -> bool:
                statuses = (ws.get("status") or {}).get("subsetStatuses") or []
                return len(statuses) > index and statuses[index].get("replicas", 0) == count

            return done

        await case.eventually(read, replicas_of(0, 4), "zone-a counts 4 replicas", timeout=RUNNING)

        await case.update(CLONESET, CLONESET_NAME, set_replicas(6))
        await cloneset_running(case)
        await case.eventually(read, replicas_of(1, 2), "zone-b counts 2 replicas", timeout=RUNNING)

        def counts(pods: list[Obj]) -> dict[str, int]:
            """Upstream's tallies: deletion cost sign, subset of this WorkloadSpread, uninjected; a
            zone-b pod must also carry cost 100 and the `subset` annotation."""
            tally: Counter = Counter()
            for pod in pods:
                annotations = pod["metadata"].get("annotations") or {}
                try:
                    cost = int(annotations.get(DELETION_COST, ""))
                except ValueError:
                    tally["unparsable-cost"] += 1
                    continue
                tally["positive" if cost > 0 else "zero" if cost == 0 else "negative"] += 1
                inject = injected(pod)
                if inject is None or inject["name"] != WS_NAME:
                    tally["uninjected"] += 1
                elif inject["subset"] == "zone-b":
                    ok = annotations.get(DELETION_COST) == "100" and annotations.get("subset") == "zone-b"
                    tally["zone-b" if ok else "zone-b-unpatched"] += 1
                elif inject["subset"] == "zone-a":
                    tally["zone-a"] += 1
            return dict(tally)

        async def tallies() -> dict[str, int]:
            return counts(await selector_pods(case))

        want = {"positive": 4, "negative": 2, "zone-a": 4, "zone-b": 2}
        await case.eventually(tallies, lambda got: got == want, f"pods tally {want}", timeout=READ)

        def shrink(cs: Obj) -> None:
            cs["spec"]["replicas"] = 3
            cs["spec"]["template"]["spec"].pop("nodeSelector", None)

        await case.update(CLONESET, CLONESET_NAME, shrink)
        await cloneset_running(case)
        await case.eventually(read, replicas_of(0, 2), "zone-a counts 2 replicas", timeout=RUNNING)
        want = {"positive": 3, "zone-a": 2, "zone-b": 1}
        await case.eventually(tallies, lambda got: got == want, f"pods tally {want}", timeout=READ)


async def test_only_one_subset_zone_a_nil(kruise_sandbox_all_gates: Cluster):
    """only one subset, zone-a=nil

    One unlimited subset whose patch also sets priorityClassName `test-priority-class` (value 100): every
    pod of the CloneSet (2, then 6, then after an image update) is in zone-a with that class, priority
    100 and deletion cost 100; the status says missingReplicas -1."""
    async with upstream_case(kruise_sandbox_all_gates, "workloadspread") as case:
        await label_zones(case)
        # `CreatePriorityClass` ignores AlreadyExists: the class is cluster-wide and outlives the case
        priority_class = {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "test-priority-class"},
            "value": 100,
            "globalDefault": False,
        }
        code, out = await case.cluster.kubectl(
            "create", "-f", "-", stdin=json.dumps(priority_class), check=False
        )
        assert code == 0 or "AlreadyExists" in out or "already exists" in out, out

        zone_a = subset("zone-a", "zone-a", None)
        zone_a["patch"]["spec"] = {"priorityClassName": "test-priority-class"}
        subsets = [zone_a]
        await create_workloadspread(case, new_workloadspread(case.ns, subsets))
        await case.create(new_base_cloneset(case.ns))

        def prioritized(pods: list[Obj]) -> None:
            for pod in pods:
                assert pod["spec"].get("priorityClassName") == "test-priority-class", pod["metadata"]["name"]
                assert pod["spec"].get("priority") == 100, pod["metadata"]["name"]

        await cloneset_running(case)
        prioritized(await pods_are(case, 2, subsets, {"zone-a": (2, "100")}))
        await status_is(case, [("zone-a", -1, 2)])

        await case.update(CLONESET, CLONESET_NAME, set_replicas(6))
        await cloneset_running(case)
        prioritized(await pods_are(case, 6, subsets, {"zone-a": (6, "100")}))
        await status_is(case, [("zone-a", -1, 6)])

        await case.update(CLONESET, CLONESET_NAME, set_image(NEW_WEBSERVER_IMAGE))
        await cloneset_running(case)
        prioritized(await pods_are(case, 6, subsets, {"zone-a": (6, "100")}))
        await status_is(case, [("zone-a", -1, 6)])


async def test_only_one_subset_zone_a_2(kruise_sandbox_all_gates: Cluster):
    """only one subset, zone-a=2

    One subset holding at most 2 pods: a CloneSet of 2 lands there (deletion cost 100); scaled to 6, the
    4 pods no subset can take are created without the WorkloadSpread's annotation or a deletion cost,
    and scaled back to 2 those 4 go first. The status stays missingReplicas 0, replicas 2."""
    async with upstream_case(kruise_sandbox_all_gates, "workloadspread") as case:
        await label_zones(case)
        subsets = [subset("zone-a", "zone-a", 2)]
        await create_workloadspread(case, new_workloadspread(case.ns, subsets))
        await case.create(new_base_cloneset(case.ns))
        await cloneset_running(case)
        await pods_are(case, 2, subsets, {"zone-a": (2, "100")})
        await status_is(case, [("zone-a", 0, 2)])

        await case.update(CLONESET, CLONESET_NAME, set_replicas(6))
        await cloneset_running(case)
        await pods_are(case, 6, subsets, {"zone-a": (2, "100")}, uninjected=4)
        await status_is(case, [("zone-a", 0, 2)])

        await case.update(CLONESET, CLONESET_NAME, set_replicas(2))
        await cloneset_running(case)
        await pods_are(case, 2, subsets, {"zone-a": (2, "100")})
        await status_is(case, [("zone-a", 0, 2)])


def preferring(name: str, weights: dict[str, int], max_replicas: int | None) -> Obj:
    """A subset with only preferred zone terms (weight per zone) and a toleration of `node-taint`."""
    out: Obj = {
        "name": name,
        "tolerations": [{"key": "node-taint", "operator": "Exists", "effect": "NoSchedule"}],
        "preferredNodeSelectorTerms": [
            {"weight": weight, "preference": zone_term(zone)} for zone, weight in weights.items()
        ],
    }
    if max_replicas is not None:
        out["maxReplicas"] = max_replicas
    return out


async def test_manage_existing_pods_by_preferred_node_selector_then_delete_subset_b(
    kruise_sandbox_all_gates: Cluster,
):
    """manage existing pods by only preferredNodeSelector, then deletion subset-b

    A CloneSet of 3 preferring zone-b runs before the WorkloadSpread; subset-a (at most 3) prefers
    zone-a, subset-b (unlimited) zone-b, neither requires a zone. The WorkloadSpread counts all 3 in
    subset-b, each with deletion cost 100; with subset-b removed from the spec every pod's cost is -200."""
    async with upstream_case(kruise_sandbox_all_gates, "workloadspread") as case:
        await label_zones(case)
        cloneset = new_base_cloneset(case.ns)
        cloneset["spec"]["replicas"] = 3
        cloneset["spec"]["template"]["spec"]["affinity"] = {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 100, "preference": zone_term("zone-b")}
                ]
            }
        }
        await case.create(cloneset)
        await cloneset_running(case)

        subsets = [
            preferring("subset-a", {"zone-a": 20, "zone-b": 10}, 3),
            preferring("subset-b", {"zone-a": 10, "zone-b": 20}, None),
        ]
        await create_workloadspread(case, new_workloadspread(case.ns, subsets))

        async def read() -> Obj:
            return await case.must_get(WS, WS_NAME)

        def replicas(ws: Obj) -> dict[str, int]:
            tally: Counter = Counter()
            for status in (ws.get("status") or {}).get("subsetStatuses") or []:
                tally[status["name"]] += status.get("replicas", 0)
            return {name: tally[name] for name in ("subset-a", "subset-b")}

        want = {"subset-a": 0, "subset-b": 3}
        await case.eventually(read, lambda ws: replicas(ws) == want, f"replicas {want}", timeout=READ)

        def costs(want: str) -> Callable[[list[Obj]], bool]:
            def done(pods: list[Obj]) -> bool:
                return len(pods) == 3 and all(
                    (p["metadata"].get("annotations") or {}).get(DELETION_COST) == want for p in pods
                )

            return done

        async def pods() -> list[Obj]:
            return await selector_pods(case)

        await case.eventually(pods, costs("100"), "every pod's deletion cost 100", timeout=READ)

        def drop_subset_b(ws: Obj) -> None:
            ws["spec"]["subsets"] = ws["spec"]["subsets"][:1]

        await update_workloadspread(case, drop_subset_b)
        await case.eventually(pods, costs("-200"), "every pod's deletion cost -200", timeout=READ)


def new_base_headless_statefulset(ns: str) -> tuple[Obj, Obj]:
    """`NewBaseHeadlessStatefulSet`: an Advanced StatefulSet (v1alpha1, no serviceName, as upstream's)
    of 2 httpd pods selected by `app: <namespace>`, and a headless Service over them."""
    sts = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "StatefulSet",
        "metadata": {"name": CLONESET_NAME, "namespace": ns},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": ns}},
            "template": {
                "metadata": {"labels": {"app": ns}},
                "spec": {"containers": [{"name": "main", "image": WEBSERVER_IMAGE}]},
            },
        },
    }
    svc = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": CLONESET_NAME, "namespace": ns},
        "spec": {
            "selector": {"app": ns},
            "clusterIP": "None",
            "ports": [{"name": "web-port", "port": 8080}],
        },
    }
    return sts, svc


async def workload_running(case: Case, resource: str) -> None:
    """`WaitForStatefulSetRunning` / `WaitForDeploymentRunning`: observed, and every replica created,
    updated and ready."""

    async def done() -> bool:
        obj = await case.must_get(resource, CLONESET_NAME)
        want, status = obj["spec"]["replicas"], obj.get("status") or {}
        return obj["metadata"].get("generation") == status.get("observedGeneration") and all(
            status.get(key, 0) == want for key in ("readyReplicas", "replicas", "updatedReplicas")
        )

    await case.eventually(done, bool, f"{resource} {CLONESET_NAME} running", timeout=RUNNING)


def patch_only(name: str, max_replicas: int | None) -> Obj:
    out: Obj = {"name": name, "patch": {"metadata": {"annotations": {"subset": name}}}}
    if max_replicas is not None:
        out["maxReplicas"] = max_replicas
    return out


async def test_manage_statefulset_pods_only_with_patch(kruise_sandbox_all_gates: Cluster):
    """manage statefulset pods only with patch

    Subsets without any node term, only a patch: subset-a and subset-b at most 2, subset-c unlimited.
    An Advanced StatefulSet of 5 (with its headless Service) gets 2 + 2 + 1 pods, counted so in the
    status and annotated so by the patches."""
    async with upstream_case(kruise_sandbox_all_gates, "workloadspread") as case:
        await label_zones(case)
        sts, svc = new_base_headless_statefulset(case.ns)
        ws = new_workloadspread(
            case.ns, [patch_only("subset-a", 2), patch_only("subset-b", 2), patch_only("subset-c", None)]
        )
        ws["spec"]["targetRef"] = {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "StatefulSet",
            "name": sts["metadata"]["name"],
        }
        await create_workloadspread(case, ws)

        sts["spec"]["replicas"] = 5
        await case.create(svc)
        await case.create(sts)
        await workload_running(case, "statefulsets.v1beta1.apps.kruise.io")

        want = {"subset-a": 2, "subset-b": 2, "subset-c": 1}

        async def read() -> Obj:
            return await case.must_get(WS, WS_NAME)

        def replicas(ws: Obj) -> dict[str, int]:
            tally: Counter = Counter()
            for status in (ws.get("status") or {}).get("subsetStatuses") or []:
                tally[status["name"]] += status.get("replicas", 0)
            return {name: tally[name] for name in want}

        await case.eventually(read, lambda ws: replicas(ws) == want, f"replicas {want}", timeout=READ)
        pods = await selector_pods(case)
        patched = Counter((p["metadata"].get("annotations") or {}).get("subset") for p in pods)
        assert {name: patched[name] for name in want} == want, patched


def new_base_deployment(ns: str) -> Obj:
    """`NewBaseDeployment`: an apps/v1 Deployment of 2 httpd pods selected by `app: <namespace>`."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": CLONESET_NAME, "namespace": ns},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": ns}},
            "template": {
                "metadata": {"labels": {"app": ns}},
                "spec": {"containers": [{"name": "main", "image": WEBSERVER_IMAGE}]},
            },
        },
    }


async def test_elastic_deploy_for_deployment_zone_a_2_zone_b_nil(kruise_sandbox_all_gates: Cluster):
    """elastic deploy for deployment, zone-a=2, zone-b=nil

    The "elastic deployment" case with an apps/v1 Deployment as the target: 2 pods in zone-a (cost
    200); scaled to 6, 4 more in zone-b (cost 100), kept so through an image update (a rolling update
    through a new ReplicaSet); scaled back to 2, the zone-b pods go."""
    async with upstream_case(kruise_sandbox_all_gates, "workloadspread") as case:
        await label_zones(case)
        subsets = [subset("zone-a", "zone-a", 2), subset("zone-b", "zone-b", None)]
        ws = new_workloadspread(case.ns, subsets)
        ws["spec"]["targetRef"] = {"apiVersion": "apps/v1", "kind": "Deployment", "name": CLONESET_NAME}
        await create_workloadspread(case, ws)

        await case.create(new_base_deployment(case.ns))
        await workload_running(case, "deployments.apps")
        await pods_are(case, 2, subsets, {"zone-a": (2, "200"), "zone-b": (0, "100")})

        await case.update("deployments.apps", CLONESET_NAME, set_replicas(6))
        await workload_running(case, "deployments.apps")
        await pods_are(case, 6, subsets, {"zone-a": (2, "200"), "zone-b": (4, "100")})

        async def read() -> Obj:
            return await case.must_get(WS, WS_NAME)

        def zone_a_settled(ws: Obj) -> bool:
            first = ((ws.get("status") or {}).get("subsetStatuses") or [{}])[0]
            return (
                first.get("name") == "zone-a"
                and first.get("missingReplicas", 0) == 0
                and not first.get("creatingPods")
                and not first.get("deletingPods")
            )

        await case.eventually(read, zone_a_settled, "zone-a status settled", timeout=READ)

        await case.update("deployments.apps", CLONESET_NAME, set_image(NEW_WEBSERVER_IMAGE))
        await workload_running(case, "deployments.apps")
        await pods_are(case, 6, subsets, {"zone-a": (2, "200"), "zone-b": (4, "100")})

        await case.update("deployments.apps", CLONESET_NAME, set_replicas(2))
        await workload_running(case, "deployments.apps")
        await pods_are(case, 2, subsets, {"zone-a": (2, "200"), "zone-b": (0, "100")})


def two_subsets(a_max: int | str, b_max: int | str) -> list[Obj]:
    return [{"name": "subset-a", "maxReplicas": a_max}, {"name": "subset-b", "maxReplicas": b_max}]


def spread_on(ns: str, name: str, target: Obj, subsets: list[Obj]) -> Obj:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "WorkloadSpread",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"targetRef": target, "subsets": subsets},
    }


def sleeper(labels: dict[str, str]) -> Obj:
    return {
        "metadata": {"labels": labels},
        "spec": {
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {"name": "main", "image": WEBSERVER_IMAGE, "command": ["/bin/sh", "-c", "sleep 10000000"]}
            ],
        },
    }


async def create_tfjob(
    case: Case, name: str, spec_replicas: tuple[int, int, int], pods: tuple[int, int, int]
) -> None:
    """`NewTFJob` + `CreateTFJob`: the TFJob with PS/MASTER/Worker replicas, then the pods a TFJob
    operator would make (there is none), controlled by it: `pods` PS, MASTER and Worker pods."""
    ps, master, worker = spec_replicas
    tfjob = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": case.ns},
        "spec": {
            "tfReplicaSpecs": {
                "PS": {"replicas": ps},
                "MASTER": {"replicas": master},
                "Worker": {"replicas": worker},
            }
        },
    }
    created = await case.create(tfjob)
    owner = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "name": name,
        "uid": created["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    names = [(f"tfjob-{name}-ps-{i}", "ps") for i in range(pods[0])]
    names += [(f"tfjob-{name}-master-{i}", "master") for i in range(pods[1])]
    names += [(f"fake-tfjob-worker-{i}", "worker") for i in range(pods[2])]
    for pod_name, role in names:
        pod = {"apiVersion": "v1", "kind": "Pod", **sleeper({"app": "tfjob", "role": role})}
        pod["metadata"].update(name=pod_name, namespace=case.ns, ownerReferences=[owner])
        await case.create(pod)


async def test_job_like_custom_workload(kruise_sandbox_all_gates: Cluster):
    """job-like custom workload

    Upstream's e2e config whitelists TFJob (replicas at MASTER) and the Advanced DaemonSet; its CI
    applies it (and the TFJob CRD) around installing kruise, as the all-gates sandbox does with
    `--apply e2e/upstream_setup`. A WorkloadSpread with an invalid targetFilter selector is refused;
    one over a DaemonSet (3 pods, no replicas: 2 and 5 hold 2 and 1); one over a TFJob of 5 MASTER
    replicas at 20%/80% (1 PS + 3 MASTER pods: 1/1 and 3/4); one filtering Worker pods and reading
    Worker replicas (4) at 25%/75% (2 workers: 1/1 and 1/3)."""
    async with upstream_case(kruise_sandbox_all_gates, "workloadspread") as case:
        await label_zones(case)
        await job_like_body(case)


async def job_like_body(case: Case) -> None:
    def status_of_spread(name: str) -> Callable[[], object]:
        async def read() -> list[tuple]:
            ws = await case.must_get(WS, name)
            return [
                (s.get("replicas", 0), s.get("missingReplicas", 0))
                for s in (ws.get("status") or {}).get("subsetStatuses") or []
            ]

        return read

    async def check(name: str, want: list[tuple[int, int]]) -> None:
        await case.eventually(
            status_of_spread(name), lambda got: got == want, f"{name} subsets {want}", timeout=60
        )

    daemonset_ref = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "DaemonSet"}
    invalid = spread_on(
        case.ns,
        "ws-invalid-target-filter",
        {**daemonset_ref, "name": "invalid-target-filter"},
        two_subsets(2, 5),
    )
    invalid["spec"]["targetFilter"] = {"selector": {"matchExpressions": [{"key": "key", "operator": "In"}]}}
    code, out = await case.cluster.kubectl("create", "-f", "-", stdin=json.dumps(invalid), check=False)
    assert code != 0, out

    await case.create(
        spread_on(case.ns, "ws-no-replicas", {**daemonset_ref, "name": "no-replicas"}, two_subsets(2, 5))
    )
    ads = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "DaemonSet",
        "metadata": {"name": "no-replicas", "namespace": case.ns},
        "spec": {
            "selector": {"matchLabels": {"app": "no-replicas"}},
            "template": sleeper({"app": "no-replicas"}),
        },
    }
    await case.create(ads)

    async def daemonset() -> Obj:
        return await case.must_get("daemonsets.v1alpha1.apps.kruise.io", "no-replicas")

    await case.eventually(
        daemonset, lambda d: (d.get("status") or {}).get("numberReady") == 3, "3 daemon pods ready"
    )
    await check("ws-no-replicas", [(2, 0), (1, 4)])

    tfjob_ref = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob"}
    await case.create(
        spread_on(
            case.ns,
            "ws-replicas-whitelist",
            {**tfjob_ref, "name": "replicas-whitelist"},
            two_subsets("20%", "80%"),
        )
    )
    await create_tfjob(case, "replicas-whitelist", (1, 5, 0), (1, 3, 0))
    await check("ws-replicas-whitelist", [(1, 0), (3, 1)])

    filtered = spread_on(
        case.ns, "ws-with-filter", {**tfjob_ref, "name": "with-filter"}, two_subsets("25%", "75%")
    )
    filtered["spec"]["targetFilter"] = {
        "selector": {"matchLabels": {"role": "worker"}},
        "replicasPathList": ["spec.tfReplicaSpecs.Worker.replicas"],
    }
    await case.create(filtered)
    await create_tfjob(case, "with-filter", (1, 1, 4), (1, 1, 2))
    await check("ws-with-filter", [(1, 0), (1, 2)])
