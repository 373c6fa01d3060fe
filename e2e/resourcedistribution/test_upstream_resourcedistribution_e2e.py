"""Upstream's ResourceDistribution e2e, Describe "ResourceDistribution" — context "ResourceDistribution
distributing functionality [ResourceDistributionInject]" (openkruise/kruise v1.9.0
test/e2e/apps/v1alpha1/resourcedistribution.go, helpers in framework/v1alpha1/resourcedistribution_utils.go)
— translated to kubectl on the AllAlpha sandbox: same distribution, same namespaces (cluster-wide, named by
the case's prefix, as upstream's are), same assertions. Where upstream sleeps 3 s before reading that a
copy is gone, the translation polls for it being gone."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

import pytest
from harness import Cluster
from upstream_kit import Case, Obj, upstream_case

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

RD = "resourcedistributions.v1alpha1.apps.kruise.io"
SECRET_NAME = "resourcedistribution-e2e-test-secret"
HASH_ANNOTATION = "kruise.io/resourcedistribution.resource.hashcode"
MINUTE = 60.0

# `NewBaseResourceDistribution`'s resource, key for key
DOCKER_CONFIG = (
    "eyJhdXRocyI6eyJodHRwczovL2luZGV4LmRvY2tlci5pby92Mi8iOnsidXNlcm5hbWUiOiJtaW5jaG91IiwicGFzc3dvcmQiOiJtaW5nemhvdS5zd3giLCJl"
    "bWFpbCI6InZlYy5nLnN1bkBnbWFpbC5jb20iLCJhdXRoIjoiYldsdVkyaHZkVHB0YVc1bmVtaHZkUzV6ZDNnPSJ9fX0="
)


def base_distribution(prefix: str) -> Obj:
    """`NewBaseResourceDistribution(prefix)`: a Secret for the namespaces `<prefix>-1,-2,-3,-5` and those
    labelled `e2e-rd-group=one`, except `<prefix>-4`."""
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ResourceDistribution",
        "metadata": {"name": prefix},
        "spec": {
            "resource": {
                "apiVersion": "v1",
                "data": {".dockerconfigjson": DOCKER_CONFIG},
                "kind": "Secret",
                "metadata": {"name": SECRET_NAME},
                "type": "Opaque",
            },
            "targets": {
                "excludedNamespaces": {"list": [{"name": f"{prefix}-4"}]},
                "includedNamespaces": {"list": [{"name": f"{prefix}-{i}"} for i in (1, 2, 3, 5)]},
                "namespaceLabelSelector": {"matchLabels": {"e2e-rd-group": "one"}},
            },
        },
    }


def namespace(name: str, labels: dict[str, str] | None = None) -> Obj:
    meta: Obj = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


class DistributionTester:
    """`ResourceDistributionTester`: cluster-scoped distributions and namespaces, namespaced secrets."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self.cluster = case.cluster

    async def kubectl(self, *args: str, stdin: str | None = None, check: bool = True) -> tuple[int, str]:
        return await self.cluster.kubectl(*args, stdin=stdin, check=check)

    async def get_json(self, *args: str) -> Obj | None:
        code, out = await self.kubectl("get", *args, "-o", "json", check=False)
        if code != 0:
            assert "NotFound" in out, out
            return None
        return json.loads(out)

    async def create_distribution(self, rd: Obj) -> Obj:
        await self.kubectl("create", "-f", "-", stdin=json.dumps(rd))
        got = await self.get_json(RD, rd["metadata"]["name"])
        assert got is not None
        return got

    async def get_distribution(self, name: str) -> Obj:
        got = await self.get_json(RD, name)
        assert got is not None, f"ResourceDistribution {name} not found"
        return got

    async def update_distribution(self, name: str, change: Callable[[Obj], None]) -> None:
        """`UpdateResourceDistribution`: re-read and write on conflict."""
        last = ""
        for _ in range(10):
            current = await self.get_distribution(name)
            change(current)
            code, last = await self.kubectl("replace", "-f", "-", stdin=json.dumps(current), check=False)
            if code == 0:
                return
            if "the object has been modified" not in last:
                break
        raise AssertionError(f"updating ResourceDistribution {name}: {last}")

    async def create_namespaces(self, *namespaces: Obj) -> None:
        """`CreateNamespaces`: those that do not exist yet."""
        for ns in namespaces:
            if await self.get_json("namespace", ns["metadata"]["name"]) is None:
                await self.kubectl("create", "-f", "-", stdin=json.dumps(ns))

    async def update_namespace_labels(self, name: str, labels: dict[str, str]) -> None:
        current = await self.get_json("namespace", name)
        assert current is not None
        current["metadata"]["labels"] = {**labels}
        await self.kubectl("replace", "-f", "-", stdin=json.dumps(current))

    async def delete_namespace(self, name: str) -> None:
        """`DeleteNamespace`, which waits until the namespace is gone."""
        await self.kubectl("delete", "namespace", name, "--ignore-not-found", "--wait=true", "--timeout=120s")

    async def delete_namespaces(self, prefix: str) -> None:
        _, out = await self.kubectl("get", "namespaces", "-o", "json")
        for ns in json.loads(out)["items"]:
            if ns["metadata"]["name"].startswith(prefix):
                await self.delete_namespace(ns["metadata"]["name"])

    async def delete_distributions(self, prefix: str) -> None:
        _, out = await self.kubectl("get", RD, "-o", "json")
        for rd in json.loads(out)["items"]:
            if rd["metadata"]["name"].startswith(prefix):
                await self.kubectl("delete", RD, rd["metadata"]["name"], "--wait=true", "--timeout=60s")

    async def poll_secret(self, ns: str) -> Obj | None:
        return await self.get_json("secret", SECRET_NAME, "-n", ns)

    async def wait_secret(self, ns: str, timeout: float = 2 * MINUTE) -> Obj:
        """`GetSecret(ns, name, true)`: waits for the copy to exist."""
        secret = await self.case.eventually(
            lambda: self.poll_secret(ns), lambda s: s is not None, f"secret {ns}/{SECRET_NAME}", timeout
        )
        assert secret is not None
        return secret

    async def wait_secret_gone(self, ns: str) -> None:
        await self.case.eventually(
            lambda: self.poll_secret(ns), lambda s: s is None, f"secret {ns}/{SECRET_NAME} gone", MINUTE
        )

    async def namespaces_for(self, targets: Obj) -> tuple[set[str], set[str]]:
        """`GetNamespaceForDistributor`: (matched, unmatched). Listed namespaces count as matched whether
        or not they exist, as upstream's helper counts them."""
        _, out = await self.kubectl("get", "namespaces", "-o", "json")
        everything = {ns["metadata"]["name"] for ns in json.loads(out)["items"]}
        matched: set[str] = set()
        if targets.get("allNamespaces"):
            matched |= everything
        else:
            selector = targets.get("namespaceLabelSelector") or {}
            labels = selector.get("matchLabels") or {}
            assert not selector.get("matchExpressions"), "the cases select by matchLabels only"
            if labels:
                _, out = await self.kubectl(
                    "get", "namespaces", "-o", "json", "-l", ",".join(f"{k}={v}" for k, v in labels.items())
                )
                matched |= {ns["metadata"]["name"] for ns in json.loads(out)["items"]}
        matched |= {n["name"] for n in (targets.get("includedNamespaces") or {}).get("list") or []}
        matched -= {n["name"] for n in (targets.get("excludedNamespaces") or {}).get("list") or []}
        return matched, everything - matched


def consistent_version(rd: Obj) -> str:
    """sha256 of `Spec.Resource.Raw` as the client decoded it: the resource as the API server encodes
    it (compact JSON, keys sorted, Go's HTML escaping)."""
    text = json.dumps(rd["spec"]["resource"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(raw, escaped)
    return hashlib.sha256(text.encode()).hexdigest()


def failed_namespaces(rd: Obj, index: int) -> list[str]:
    conditions = (rd.get("status") or {}).get("conditions") or []
    return (conditions[index].get("failedNamespace") or []) if len(conditions) > index else []


async def test_namespace_event_checker(kruise_sandbox_all_gates: Cluster):
    """namespace event checker"""
    async with upstream_case(kruise_sandbox_all_gates, "resourcedistribution") as case:
        tester = DistributionTester(case)
        prefix = "resourcedistribution-e2e-test1"
        await tester.delete_distributions(prefix)
        await tester.delete_namespaces(prefix)

        update_matched = f"{prefix}-update-matched"
        await tester.create_namespaces(namespace(update_matched))

        rd = base_distribution(prefix)
        del rd["spec"]["targets"]["includedNamespaces"]["list"]
        rd["spec"]["targets"]["namespaceLabelSelector"]["matchLabels"] = {prefix: "seven"}
        await tester.create_distribution(rd)

        # create matched namespace, then update the other one to match
        await tester.create_namespaces(namespace(f"{prefix}-creat-matched", {prefix: "seven"}))
        await tester.update_namespace_labels(update_matched, {prefix: "seven"})

        targets = rd["spec"]["targets"]
        await case.eventually(
            lambda: tester.namespaces_for(targets), lambda m: len(m[0]) == 2, "two namespaces matched", MINUTE
        )
        matched, _ = await tester.namespaces_for(targets)
        for ns in matched:
            await tester.wait_secret(ns, MINUTE)

        await tester.delete_distributions(prefix)
        await tester.delete_namespaces(prefix)


async def test_resource_event_checker(kruise_sandbox_all_gates: Cluster):
    """resource event checker"""
    async with upstream_case(kruise_sandbox_all_gates, "resourcedistribution") as case:
        tester = DistributionTester(case)
        prefix = "resourcedistribution-e2e-test2"
        await tester.delete_distributions(prefix)
        await tester.delete_namespaces(prefix)

        first = f"{prefix}-1"
        await tester.create_namespaces(namespace(first), namespace(f"{prefix}-2"))
        await tester.create_distribution(base_distribution(prefix))
        secret = await tester.wait_secret(first, MINUTE)

        # If resource was modified directly, resourceDistribution should modify it back. `UpdateSecret`
        # writes the secret with `stringData` set on top of its data (the API server merges it in).
        secret["stringData"] = {"updated": "yes"}
        await tester.kubectl("replace", "-f", "-", stdin=json.dumps(secret))
        await case.eventually(
            lambda: tester.poll_secret(first),
            lambda s: s is not None and len(s.get("data") or {}) == 1,
            "secret reverted to its one data key",
            3 * MINUTE,
        )

        # If resource was deleted directly, resourceDistribution should create it again
        await tester.kubectl("delete", "secret", SECRET_NAME, "-n", first)
        await case.eventually(
            lambda: tester.poll_secret(first), lambda s: s is not None, "secret recreated", 3 * MINUTE
        )

        await tester.delete_distributions(prefix)
        await tester.delete_namespaces(prefix)


async def test_resourcedistribution_functionality_checker(kruise_sandbox_all_gates: Cluster):
    """resourcedistribution functionality checker"""
    async with upstream_case(kruise_sandbox_all_gates, "resourcedistribution") as case:
        tester = DistributionTester(case)
        prefix = "resourcedistribution-e2e-test3"
        await tester.delete_distributions(prefix)
        await tester.delete_namespaces(prefix)

        rd = base_distribution(prefix)
        name = rd["metadata"]["name"]
        # normal resource distribution case
        all_namespaces = [
            namespace(f"{prefix}-1", {"e2e-rd-group": "one", "environment": "develop"}),  # for create
            namespace(f"{prefix}-2", {"e2e-rd-group": "one", "environment": "develop"}),  # for create
            namespace(f"{prefix}-3", {"e2e-rd-group": "one", "environment": "develop"}),
            namespace(f"{prefix}-4", {"e2e-rd-group": "one", "environment": "test"}),
            namespace(f"{prefix}-5", {"e2e-rd-group": "two", "environment": "test"}),  # for delete
        ]
        await tester.create_namespaces(*all_namespaces)
        await tester.create_distribution(rd)

        targets = rd["spec"]["targets"]
        await case.eventually(
            lambda: tester.namespaces_for(targets),
            lambda m: len(m[0]) == 4,
            "four namespaces matched",
            MINUTE,
        )
        matched, unmatched = await tester.namespaces_for(targets)
        rd = await case.eventually(
            lambda: tester.get_distribution(name),
            lambda got: (got.get("status") or {}).get("succeeded") == len(matched),
            f"status.succeeded == {len(matched)}",
            MINUTE,
        )
        status = rd["status"]
        assert status.get("desired") == status.get("succeeded"), status

        # checking created and updated resources
        version = consistent_version(rd)
        for ns in matched:
            secret = await tester.wait_secret(ns)
            annotations = secret["metadata"].get("annotations")
            assert annotations is not None, f"secret {ns}/{SECRET_NAME} has no annotations"
            assert annotations.get(HASH_ANNOTATION) == version, (ns, annotations)

        # checking deleted secrets
        for ns in unmatched:
            if ns.startswith(prefix):
                await tester.wait_secret_gone(ns)

        # check status.conditions
        conditions = status.get("conditions") or []
        assert len(conditions) == 6, conditions
        for cond in conditions:
            assert cond.get("status") == "False", conditions

        # checking after some included namespaces is deleted
        await tester.delete_namespace(all_namespaces[0]["metadata"]["name"])
        await case.eventually(
            lambda: tester.get_distribution(name),
            lambda got: len(failed_namespaces(got, 5)) == 1,
            "conditions[5] naming one failed namespace",
            MINUTE,
        )
        assert status.get("desired") == status.get("succeeded"), status

        # checking after updating spec.targets
        def retarget(current: Obj) -> None:
            current["spec"]["targets"]["includedNamespaces"]["list"] = [{"name": f"{prefix}-2"}]
            current["spec"]["targets"]["namespaceLabelSelector"]["matchLabels"] = {"e2e-rd-group": "two"}

        await tester.update_distribution(name, retarget)
        await case.eventually(
            lambda: tester.get_distribution(name),
            lambda got: (got.get("status") or {}).get("succeeded") == 2,
            "status.succeeded == 2",
            MINUTE,
        )
        rd = await tester.get_distribution(name)
        matched, unmatched = await tester.namespaces_for(rd["spec"]["targets"])
        assert len(matched) == 2, matched

        for ns in matched:
            secret = await tester.wait_secret(ns)
            assert (secret["metadata"].get("annotations") or {}).get(HASH_ANNOTATION) == version, (ns, secret)
        for ns in unmatched:
            if ns.startswith(prefix):
                await tester.wait_secret_gone(ns)

        # checking all matched namespaces after distributor was deleted
        await tester.delete_distributions(prefix)
        for ns in matched:
            if ns.startswith(prefix):
                await tester.wait_secret_gone(ns)
        await tester.delete_namespaces(prefix)
