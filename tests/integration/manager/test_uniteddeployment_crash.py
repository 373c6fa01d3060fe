"""UnitedDeployment across a kruise-manager crash: nothing is lost, nothing is done twice.

The UnitedDeployment and CloneSet controllers run against the emulator and the simulator; at the
moment a user fears most (children half-way through a rollout, a resize or a subset removal half
written) they stop and fresh ones take over from nothing (`KruiseCluster.restart_manager`). Each
subset keeps the child workload it had (same name and UID), and the end state is the one a
manager that never crashed reaches.

A crash in the middle of one UnitedDeployment pass is played by a manager whose client "dies" after
its first child write: every later write of that manager fails, as if the process had gone between
two API calls, and a fresh manager with a healthy client takes over.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kruise.api.keys import LABEL_KRUISE_CONTROLLER_REVISION_HASH, LABEL_SUBSET_NAME
from kruise.kube.resources import CLONESETS, CONTROLLER_REVISIONS, PODS, UNITED_DEPLOYMENTS, ResourceRef
from kruise.manager.context import ControllerSetup, ManagerContext
from kruise.manager.controllers.cloneset import SETUP as CLONESET_SETUP
from kruise.manager.controllers.uniteddeployment import SETUP
from tests.integration.manager.test_statefulset_controller import ready, restarts
from tests.integration.manager.test_uniteddeployment_controller import (
    NS,
    children,
    controller_setups,  # noqa: F401 - the fixture: UnitedDeployment and CloneSet controllers
    edit_ud,
    manifest,
    replicas_of,
    zone_subset,
)

OLD_IMAGE = "nginx:alpine"
NEW_IMAGE = "nginx:1.27"
SUBSETS = ("subset-a", "subset-b", "subset-c")


class ManagerDied(ConnectionError):
    """A write the crashed manager never got to make."""


class DyingClient:
    """The UnitedDeployment controller's client in a manager that dies after `child_writes` writes of
    child CloneSets: those go through, every write after them fails (reads still work, the
    informers keep the process looking alive until the test replaces it)."""

    WRITES = ("create", "update", "patch", "delete")

    def __init__(self, client: Any, child_writes: int) -> None:
        self._client = client
        self._left = child_writes
        self.dead = False

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if name not in self.WRITES:
            return attr

        async def write(ref: ResourceRef, *args: Any, **kwargs: Any) -> Any:
            if self.dead:
                raise ManagerDied(f"{name} {ref.plural}: the manager is gone")
            result = await attr(ref, *args, **kwargs)
            if ref == CLONESETS:
                self._left -= 1
                self.dead = self._left <= 0
            return result

        return write


def dying_setup(client: DyingClient) -> ControllerSetup:
    """The UnitedDeployment controller built as the manager builds it, with `client` for its writes."""

    def build(ctx: ManagerContext) -> Any:
        return SETUP.build(dataclasses.replace(ctx, client=client))

    return dataclasses.replace(SETUP, build=build)


async def ud_of(cluster, name: str) -> dict[str, Any]:
    return await cluster.client.get(UNITED_DEPLOYMENTS, name, NS)


async def subset_pods(cluster, ud_name: str) -> dict[str, list[dict[str, Any]]]:
    """The live (not terminating) pods of each subset's child CloneSet."""
    owners = {cs["metadata"]["uid"]: subset for subset, cs in (await children(cluster, ud_name)).items()}
    out: dict[str, list[dict[str, Any]]] = {subset: [] for subset in owners.values()}
    for pod in (await cluster.client.list(PODS, NS))["items"]:
        meta = pod["metadata"]
        if meta.get("deletionTimestamp"):
            continue
        owner = next((r["uid"] for r in meta.get("ownerReferences") or [] if r.get("controller")), None)
        if owner in owners:
            out[owners[owner]].append(pod)
    return out


async def all_subset_clonesets(cluster) -> list[dict[str, Any]]:
    """Every CloneSet carrying a subset label, owned or not: a duplicate or an orphan shows here."""
    listing = await cluster.client.list(CLONESETS, NS)
    return [cs for cs in listing["items"] if LABEL_SUBSET_NAME in (cs["metadata"].get("labels") or {})]


def identity(found: dict[str, dict[str, Any]]) -> dict[str, tuple[str, str]]:
    return {subset: (cs["metadata"]["name"], cs["metadata"]["uid"]) for subset, cs in found.items()}


def image(pod: dict[str, Any]) -> str:
    return pod["spec"]["containers"][0]["image"]


def converged(replicas: int, updated: int | None = None):
    """The UnitedDeployment's status describes its latest spec with every pod ready."""
    updated = replicas if updated is None else updated

    def check(ud: dict[str, Any]) -> bool:
        status = ud.get("status") or {}
        return (
            status.get("observedGeneration") == ud["metadata"]["generation"]
            and status.get("replicas") == replicas
            and status.get("readyReplicas") == replicas
            and status.get("updatedReplicas") == updated
            and status.get("updatedReadyReplicas") == updated
        )

    return check


def conditions_of(ud: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in ud["status"].get("conditions") or []}


@pytest.mark.parametrize("hard", [False, True], ids=["gentle", "hard"])
async def test_manager_crash_mid_subset_rollouts_keeps_children_and_partitions(kruise_cluster, hard) -> None:
    """Three CloneSet subsets roll a new image in place under manual partitions; the manager dies
    while the children are half-way: afterwards each subset has the same child, exactly
    `replicas - partition` pods moved (each restarted once, none recreated), and the status
    reports the partial rollout, then the full one once the partitions are lifted. `hard` kills
    the in-flight passes (UnitedDeployment and CloneSet) wherever they are awaiting."""
    cluster = kruise_cluster
    partitions = {"subset-a": 1, "subset-b": 0, "subset-c": 2}
    body = manifest(
        "rolling",
        9,
        [zone_subset("zone-a"), zone_subset("zone-b"), zone_subset("zone-c")],
        updateStrategy={"type": "Manual", "manualUpdate": {"partitions": partitions}},
    )
    body["spec"]["template"]["cloneSetTemplate"]["spec"]["updateStrategy"]["type"] = "InPlaceIfPossible"
    # each in-place batch stays unavailable 2 s: the crash surely lands half-way (6 of 9 pods move in the
    # end, and at speed 50 an unhindered rollout can get there between two polls)
    body["spec"]["template"]["cloneSetTemplate"]["spec"]["minReadySeconds"] = 2
    await cluster.client.create(UNITED_DEPLOYMENTS, body, NS)
    ud = await cluster.until(lambda: ud_of(cluster, "rolling"), converged(9), timeout=60)
    old_revision = ud["status"]["currentRevision"]
    before = await children(cluster, "rolling")
    before_pods = {
        s: {p["metadata"]["name"]: p for p in pods}
        for s, pods in (await subset_pods(cluster, "rolling")).items()
    }
    assert {s: len(pods) for s, pods in before_pods.items()} == dict.fromkeys(SUBSETS, 3)
    worst = dict.fromkeys(SUBSETS, 0)

    async def observe() -> dict[str, list[dict[str, Any]]]:
        pods = await subset_pods(cluster, "rolling")
        for subset, members in pods.items():
            worst[subset] = max(worst[subset], 3 - sum(ready(p) for p in members))
        return pods

    def moved(pods: dict[str, list[dict[str, Any]]]) -> int:
        return sum(image(p) == NEW_IMAGE for members in pods.values() for p in members)

    def new_image(ud: dict[str, Any]) -> None:
        containers = ud["spec"]["template"]["cloneSetTemplate"]["spec"]["template"]["spec"]["containers"]
        containers[0]["image"] = NEW_IMAGE

    await edit_ud(cluster, "rolling", new_image)
    await cluster.until(observe, lambda pods: 1 <= moved(pods) < 6)
    fresh = await cluster.restart_manager([SETUP, CLONESET_SETUP], hard=hard)
    assert 1 <= moved(await observe()) < 6, "the crash must land mid-rollout"

    async def status() -> dict[str, Any]:
        await observe()
        return await ud_of(cluster, "rolling")

    ud = await cluster.until(status, converged(9, updated=6), timeout=60)
    after = await children(cluster, "rolling")
    assert identity(after) == identity(before), "each subset keeps its child workload"
    assert len(await all_subset_clonesets(cluster)) == 3, "no duplicate or orphaned child"
    new_revision = ud["status"]["updateStatus"]["updatedRevision"]
    assert new_revision != old_revision
    for subset, cs in after.items():
        assert cs["spec"]["replicas"] == 3
        assert cs["spec"]["updateStrategy"]["partition"] == partitions[subset]
        assert cs["metadata"]["labels"][LABEL_KRUISE_CONTROLLER_REVISION_HASH] == new_revision
    pods = await subset_pods(cluster, "rolling")
    for subset, members in pods.items():
        assert {p["metadata"]["name"]: p["metadata"]["uid"] for p in members} == {
            name: p["metadata"]["uid"] for name, p in before_pods[subset].items()
        }, f"{subset}: a pod was recreated"
        moved_here = [p for p in members if image(p) == NEW_IMAGE]
        assert len(moved_here) == 3 - partitions[subset], subset
        for pod in members:
            assert restarts(pod) == (1 if image(pod) == NEW_IMAGE else 0), pod["metadata"]["name"]
    assert all(w <= 1 for w in worst.values()), worst  # CloneSet maxUnavailable 20% of 3 rounds up to 1
    status_now = ud["status"]
    assert status_now["subsetReplicas"] == dict.fromkeys(SUBSETS, 3)
    assert status_now["currentRevision"] == old_revision, "partitions hold pods back: not yet current"
    assert status_now["updateStatus"]["currentPartitions"] == partitions
    conditions = conditions_of(ud)
    assert conditions["UnitedDeploymentUpdated"]["status"] == "False"
    assert conditions["UnitedDeploymentUpdated"]["reason"] == "UnitedDeploymentRevisionUpdating"
    assert conditions["SubsetProvisioned"]["status"] == "True"
    assert conditions["SubsetUpdated"]["status"] == "True"
    await cluster.client.get(CONTROLLER_REVISIONS, new_revision, NS)

    # The partitions lifted, the fresh manager finishes the rollout and the new revision is current.
    def lift(ud: dict[str, Any]) -> None:
        ud["spec"]["updateStrategy"]["manualUpdate"]["partitions"] = dict.fromkeys(SUBSETS, 0)

    await edit_ud(cluster, "rolling", lift)
    # the pass that makes the revision current writes it; the next one (woken by that status
    # write) flips UnitedDeploymentUpdated, as upstream computes the condition before the status
    ud = await cluster.until(
        status,
        lambda u: (
            converged(9)(u)
            and u["status"].get("currentRevision") == new_revision
            and conditions_of(u)["UnitedDeploymentUpdated"]["status"] == "True"
        ),
        timeout=60,
    )
    assert identity(await children(cluster, "rolling")) == identity(before)
    assert conditions_of(ud)["UnitedDeploymentUpdated"]["reason"] == "UnitedDeploymentRevisionUpdated"
    assert ud["status"]["updateStatus"]["currentPartitions"] == dict.fromkeys(SUBSETS, 0)
    for subset, members in (await subset_pods(cluster, "rolling")).items():
        assert sorted(p["metadata"]["uid"] for p in members) == sorted(
            p["metadata"]["uid"] for p in before_pods[subset].values()
        )
        assert all(image(p) == NEW_IMAGE and restarts(p) == 1 for p in members), subset
    assert all(w <= 1 for w in worst.values()), worst
    for recorder in fresh.recorders:
        await recorder.flush()


async def crash_around(cluster, name: str, change, crash: str) -> dict[str, dict[str, Any]]:
    """Write `change` to the UnitedDeployment and crash the manager, returning its children as the
    crash left them (before the fresh manager starts). `unseen`: the manager is down when the spec
    is written (it never reconciles it); `mid_pass`: the manager dies right after the first child
    write of the pass that handles it."""
    if crash == "unseen":
        await cluster.stop_controllers()
        await edit_ud(cluster, name, change)
    else:
        dying = DyingClient(cluster.client, child_writes=1)
        await cluster.restart_manager([dying_setup(dying), CLONESET_SETUP])
        await edit_ud(cluster, name, change)
        await cluster.until(lambda: _dead(dying), bool)
    left = await children(cluster, name)
    await cluster.restart_manager([SETUP, CLONESET_SETUP])
    return left


async def _dead(dying: DyingClient) -> bool:
    return dying.dead


ELASTIC = {"subset-a": 2, "subset-b": "50%"}
"""maxReplicas per subset; subset-c has none."""


def max_of(subset: str, replicas: int) -> int:
    bound = ELASTIC.get(subset)
    if bound is None:
        return replicas
    if isinstance(bound, int):
        return bound
    return int(replicas * int(bound[:-1]) / 100 + 0.5)


@pytest.mark.parametrize("crash", ["unseen", "mid_pass"])
async def test_manager_crash_during_resize_splits_as_without_crash(kruise_cluster, crash: str) -> None:
    """6 -> 9 replicas over subsets capped at 2 and 50%: the elastic split after the crash is the
    one a healthy manager computes (2/5/2), no subset ever holds more than its cap, and no child
    is replaced."""
    cluster = kruise_cluster
    subsets = [
        zone_subset("zone-a", maxReplicas=ELASTIC["subset-a"]),
        zone_subset("zone-b", maxReplicas=ELASTIC["subset-b"]),
        zone_subset("zone-c"),
    ]
    await cluster.client.create(UNITED_DEPLOYMENTS, manifest("elastic", 6, subsets), NS)
    await cluster.until(lambda: ud_of(cluster, "elastic"), converged(6), timeout=60)
    before = await children(cluster, "elastic")
    assert replicas_of(before) == {"subset-a": 2, "subset-b": 3, "subset-c": 1}
    highest: dict[str, int] = dict.fromkeys(SUBSETS, 0)

    async def observe() -> dict[str, Any]:
        found = await children(cluster, "elastic")
        pods = await subset_pods(cluster, "elastic")
        for subset, cs in found.items():
            highest[subset] = max(highest[subset], cs["spec"]["replicas"], len(pods.get(subset, [])))
        return await ud_of(cluster, "elastic")

    half = await crash_around(cluster, "elastic", lambda u: u["spec"].__setitem__("replicas", 9), crash)
    if crash == "unseen":
        assert identity(half) == identity(before)
    else:
        # the pass was cut after its first child write: one subset resized, the others not yet
        assert replicas_of(half) == {"subset-a": 2, "subset-b": 5, "subset-c": 1}

    ud = await cluster.until(observe, converged(9), timeout=60)
    after = await children(cluster, "elastic")
    assert identity(after) == identity(before)
    assert len(await all_subset_clonesets(cluster)) == 3
    expected = {"subset-a": 2, "subset-b": 5, "subset-c": 2}
    assert replicas_of(after) == expected
    assert ud["status"]["subsetReplicas"] == expected
    assert {s: len(p) for s, p in (await subset_pods(cluster, "elastic")).items()} == expected
    for subset in SUBSETS:
        assert highest[subset] <= max_of(subset, 9), (subset, highest)
    assert highest["subset-a"] <= 2
    conditions = conditions_of(ud)
    assert conditions["SubsetUpdated"]["status"] == "True"
    assert conditions["UnitedDeploymentUpdated"]["status"] == "True"


@pytest.mark.parametrize("crash", ["unseen", "mid_pass"])
async def test_manager_crash_after_subset_removal_deletes_only_its_child(kruise_cluster, crash: str) -> None:
    """subset-a leaves the spec and the manager crashes: its CloneSet (and pods) go, subset-b and
    subset-c keep their children and take its share, nothing comes back."""
    cluster = kruise_cluster
    subsets = [zone_subset("zone-a"), zone_subset("zone-b"), zone_subset("zone-c")]
    await cluster.client.create(UNITED_DEPLOYMENTS, manifest("shrink", 6, subsets), NS)
    await cluster.until(lambda: ud_of(cluster, "shrink"), converged(6), timeout=60)
    before = await children(cluster, "shrink")
    assert replicas_of(before) == dict.fromkeys(SUBSETS, 2)
    removed = before["subset-a"]["metadata"]["uid"]

    def drop_a(ud: dict[str, Any]) -> None:
        topology = ud["spec"]["topology"]
        topology["subsets"] = [s for s in topology["subsets"] if s["name"] != "subset-a"]

    half = await crash_around(cluster, "shrink", drop_a, crash)
    if crash == "unseen":
        assert identity(half) == identity(before)
    else:
        # the pass was cut after its first child write, the delete: the others are not resized yet
        assert replicas_of(half) == {"subset-b": 2, "subset-c": 2}

    ud = await cluster.until(lambda: ud_of(cluster, "shrink"), converged(6), timeout=60)
    after = await children(cluster, "shrink")
    assert replicas_of(after) == {"subset-b": 3, "subset-c": 3}
    assert identity(after) == {s: identity(before)[s] for s in ("subset-b", "subset-c")}
    remaining = await all_subset_clonesets(cluster)
    assert removed not in {cs["metadata"]["uid"] for cs in remaining}
    assert len(remaining) == 2
    assert ud["status"]["subsetReplicas"] == {"subset-b": 3, "subset-c": 3}

    async def orphans() -> list[str]:
        """Pods of the removed child the garbage collector has not deleted (a terminating pod is
        deleted: the kubelet finishing it is none of the manager's business)."""
        listing = await cluster.client.list(PODS, NS)
        return [
            p["metadata"]["name"]
            for p in listing["items"]
            if not p["metadata"].get("deletionTimestamp")
            and any(r.get("uid") == removed for r in p["metadata"].get("ownerReferences") or [])
        ]

    try:
        await cluster.until(orphans, lambda pods: not pods, timeout=60)
    except TimeoutError:
        raise AssertionError(f"pods of the removed child remain: {await orphans()}") from None


async def test_manager_crash_mid_provision_creates_each_child_once(kruise_cluster) -> None:
    """The manager dies after creating the first of three children: the fresh one creates the other
    two, keeps the first (children carry generated names, so only the subset label tells them
    apart) and never a second child for any subset."""
    cluster = kruise_cluster
    dying = DyingClient(cluster.client, child_writes=1)
    await cluster.restart_manager([dying_setup(dying), CLONESET_SETUP])
    subsets = [zone_subset("zone-a"), zone_subset("zone-b"), zone_subset("zone-c")]
    await cluster.client.create(UNITED_DEPLOYMENTS, manifest("fresh", 6, subsets), NS)
    await cluster.until(lambda: _dead(dying), bool)
    left = await children(cluster, "fresh")
    assert len(left) == 1, left.keys()
    await cluster.restart_manager([SETUP, CLONESET_SETUP])

    ud = await cluster.until(lambda: ud_of(cluster, "fresh"), converged(6), timeout=60)
    after = await children(cluster, "fresh")
    assert replicas_of(after) == dict.fromkeys(SUBSETS, 2)
    assert {s: identity(after)[s] for s in left} == identity(left)
    assert len(await all_subset_clonesets(cluster)) == 3
    assert ud["status"]["subsetReplicas"] == dict.fromkeys(SUBSETS, 2)
    conditions = conditions_of(ud)
    assert conditions["SubsetProvisioned"]["status"] == "True"
    assert conditions["UnitedDeploymentUpdated"]["status"] == "True"
