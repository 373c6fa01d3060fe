"""Upstream's deletion protection e2e (openkruise/kruise v1.9.0
test/e2e/policy/v1alpha1/deletionprotection.go), translated to kubectl on the AllAlpha sandbox: a
`policy.kruise.io/delete-protection` label of `Always` refuses the delete outright, `Cascading` refuses
it while the object still has something under it (a namespace's active pods and PVCs, a CRD's custom
resources, a workload's replicas).

Upstream's kind cluster has the default StorageClass `standard` (local-path, WaitForFirstConsumer; the
case's claim names its node up front). The translation makes a `standard` class on the sandbox's own
provisioner with Immediate binding, which binds the claim as the annotated node would."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator

from cloneset_tester import new_cloneset
from harness import Cluster
from upstream_kit import Case, Obj, upstream_case

NGINX_IMAGE = "registry.k8s.io/e2e-test-images/nginx:1.14-4"  # upstream's common.NginxImage
PROTECTION_KEY = "policy.kruise.io/delete-protection"
ALWAYS = "Always"
CASCADING = "Cascading"
DELETE_FORBIDDEN = "forbidden by ResourcesProtectionDeletion"
CLONESET = "clonesets.v1alpha1.apps.kruise.io"
SANDBOX_PROVISIONER = "sandbox.kruise.io/volumes"
SELECTED_NODE = "volume.kubernetes.io/selected-node"


async def delete_refused(cluster: Cluster, *args: str) -> None:
    """The delete fails, and the webhook's refusal is what failed it."""
    code, out = await cluster.kubectl("delete", *args, "--wait=false", check=False)
    assert code != 0, f"kubectl delete {' '.join(args)} succeeded; expected {DELETE_FORBIDDEN!r}"
    assert DELETE_FORBIDDEN in out, out


async def delete_allowed(cluster: Cluster, *args: str) -> None:
    await cluster.kubectl("delete", *args, "--wait=false")


async def status_replicas(case: Case, name: str, want: int, resource: str = CLONESET) -> None:
    async def replicas() -> int:
        return ((await case.must_get(resource, name)).get("status") or {}).get("replicas", 0)

    await case.eventually(replicas, lambda n: n == want, f"{resource} {name} status.replicas == {want}")


def label_patch(value: str | None) -> Obj:
    return {"metadata": {"labels": {PROTECTION_KEY: value}}}


@contextlib.asynccontextmanager
async def removed_afterwards(cluster: Cluster, *args: str) -> AsyncIterator[None]:
    """An object the case makes outside its namespace goes when the case ends, whatever the outcome
    (unprotected first, since a failed case may leave its label on)."""
    try:
        yield
    finally:
        await cluster.kubectl(
            "label", *args, f"{PROTECTION_KEY}-", "--overwrite", check=False
        )  # a label that is already gone is no failure
        await cluster.kubectl("delete", *args, "--ignore-not-found", "--wait=false", check=False)


async def ensure_standard_class(cluster: Cluster) -> None:
    code, _ = await cluster.kubectl("get", "storageclass", "standard", check=False)
    if code == 0:
        return
    sc = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "standard"},
        "provisioner": SANDBOX_PROVISIONER,
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "Immediate",
    }
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(sc))


async def test_ns_should_be_protected(kruise_sandbox_all_gates: Cluster):
    """ns should be protected"""
    cluster = kruise_sandbox_all_gates
    async with upstream_case(cluster, "deletionprotection") as case:
        name = f"kruise-e2e-deletion-protection-{case.rand}"
        async with removed_afterwards(cluster, "namespace", name):
            namespace = {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": name, "labels": {PROTECTION_KEY: ALWAYS}},
            }
            await cluster.kubectl("create", "-f", "-", stdin=json.dumps(namespace))

            # Delete the namespace should be rejected
            await delete_refused(cluster, "namespace", name)

            # Create a CloneSet in this namespace and wait for pod created
            inner = Case(cluster, name, case.rand)
            cs = await inner.create(new_cloneset(name, f"clone-{case.rand}", 1))
            cs_name = cs["metadata"]["name"]
            await status_replicas(inner, cs_name, 1)

            # Patch the namespace deletion to Cascading
            await cluster.kubectl(
                "patch", "namespace", name, "--type", "strategic", "-p", json.dumps(label_patch(CASCADING))
            )
            await delete_refused(cluster, "namespace", name)

            # Scale CloneSet replicas to 0
            await inner.update(CLONESET, cs_name, lambda obj: obj["spec"].update(replicas=0))
            await status_replicas(inner, cs_name, 0)

            # Create a PVC in this namespace
            _, out = await cluster.kubectl("get", "nodes", "-o", "json")
            nodes = json.loads(out)["items"]
            assert nodes
            await ensure_standard_class(cluster)
            pvc_name = f"pvc-{case.rand}"
            await inner.create({
                "apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": pvc_name, "namespace": name,
                             "annotations": {SELECTED_NODE: nodes[0]["metadata"]["name"]}},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "50Mi"}},
                         "storageClassName": "standard"},
            })  # fmt: skip

            async def phase() -> str:
                return ((await inner.must_get("pvc", pvc_name)).get("status") or {}).get("phase", "")

            await inner.eventually(phase, lambda p: p == "Bound", f"pvc {pvc_name} Bound")

            await delete_refused(cluster, "namespace", name)

            # Delete the PVC just created; upstream then sleeps 3s, the translation waits for it to be gone
            await inner.kubectl("delete", "pvc", pvc_name, "--wait=false")
            await inner.eventually(lambda: inner.get("pvc", pvc_name), lambda p: p is None, "pvc gone")

            # Delete the namespace successfully
            await delete_allowed(cluster, "namespace", name)


def new_crd(name: str, protection: str) -> Obj:
    schema = {"type": "object", "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
    }}  # fmt: skip
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name, "labels": {PROTECTION_KEY: protection}},
        "spec": {
            "group": "e2e.kruise.io",
            "scope": "Namespaced",
            "names": {"plural": "testdeletioncases", "singular": "testdeletioncase",
                      "kind": "TestDeletionCase"},
            "versions": [{"name": "v1beta1", "served": True, "storage": True,
                          "schema": {"openAPIV3Schema": schema}}],
        },
    }  # fmt: skip


async def test_crd_deletion_should_be_protected(kruise_sandbox_all_gates: Cluster):
    """should be protected"""
    cluster = kruise_sandbox_all_gates
    async with upstream_case(cluster, "deletionprotection") as case:
        crd_name = "testdeletioncases.e2e.kruise.io"
        async with removed_afterwards(cluster, "crd", crd_name):
            await cluster.kubectl("create", "-f", "-", stdin=json.dumps(new_crd(crd_name, ALWAYS)))

            await delete_refused(cluster, "crd", crd_name)

            # Create a test CR (upstream sleeps a second first; the translation retries until the
            # new resource is served)
            cr = {
                "apiVersion": "e2e.kruise.io/v1beta1",
                "kind": "TestDeletionCase",
                "metadata": {"name": f"test-cr-{case.rand}", "namespace": case.ns},
            }

            async def create_cr() -> tuple[int, str]:
                return await case.kubectl("create", "-f", "-", stdin=json.dumps(cr), check=False)

            await case.eventually(create_cr, lambda r: r[0] == 0, "test CR created", timeout=30)

            # Patch the CRD deletion to Cascading
            await cluster.kubectl(
                "patch", "crd", crd_name, "--type", "merge", "-p", json.dumps(label_patch(CASCADING))
            )
            await delete_refused(cluster, "crd", crd_name)

            # Delete the test CR
            await case.kubectl("delete", "testdeletioncases.v1beta1.e2e.kruise.io", cr["metadata"]["name"])

            # Delete the CRD should be successful
            await delete_allowed(cluster, "crd", crd_name)


async def test_cloneset_should_be_protected(kruise_sandbox_all_gates: Cluster):
    """CloneSet should be protected"""
    cluster = kruise_sandbox_all_gates
    async with upstream_case(cluster, "deletionprotection") as case:
        cs = new_cloneset(case.ns, f"clone-{case.rand}", 0)
        cs["metadata"]["labels"] = {PROTECTION_KEY: ALWAYS}
        name = (await case.create(cs))["metadata"]["name"]

        await delete_refused(cluster, CLONESET, name, "-n", case.ns)

        def scale_up_cascading(obj: Obj) -> None:
            obj["spec"]["replicas"] = 2
            obj["metadata"]["labels"][PROTECTION_KEY] = CASCADING

        await case.update(CLONESET, name, scale_up_cascading)
        await status_replicas(case, name, 2)

        await delete_refused(cluster, CLONESET, name, "-n", case.ns)

        await case.update(CLONESET, name, lambda obj: obj["spec"].update(replicas=0))
        await status_replicas(case, name, 0)

        await delete_allowed(cluster, CLONESET, name, "-n", case.ns)


async def test_deployment_should_be_protected(kruise_sandbox_all_gates: Cluster):
    """Deployment should be protected"""
    cluster = kruise_sandbox_all_gates
    async with upstream_case(cluster, "deletionprotection") as case:
        name = f"deploy-{case.rand}"
        await case.create({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": case.ns, "labels": {PROTECTION_KEY: ALWAYS}},
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"owner": name}},
                "template": {"metadata": {"labels": {"owner": name}}, "spec": {"containers": [
                    {"name": "nginx", "image": NGINX_IMAGE, "env": [{"name": "test", "value": "foo"}]},
                ]}},
            },
        })  # fmt: skip

        await delete_refused(cluster, "deployment", name, "-n", case.ns)

        patch = {"metadata": {"labels": {PROTECTION_KEY: CASCADING}}, "spec": {"replicas": 2}}
        await case.patch("deployment", name, "strategic", patch)
        await status_replicas(case, name, 2, resource="deployment")

        await delete_refused(cluster, "deployment", name, "-n", case.ns)

        await case.patch("deployment", name, "strategic", {"spec": {"replicas": 0}})
        await status_replicas(case, name, 0, resource="deployment")

        await delete_allowed(cluster, "deployment", name, "-n", case.ns)


async def test_service_deletion_should_be_protected(kruise_sandbox_all_gates: Cluster):
    """should be protected"""
    cluster = kruise_sandbox_all_gates
    async with upstream_case(cluster, "deletionprotection") as case:
        name = f"svc-{case.rand}"
        await case.create({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": case.ns, "labels": {PROTECTION_KEY: ALWAYS}},
            "spec": {"selector": {"owner": "foo"},
                     "ports": [{"port": 80, "name": "http", "protocol": "TCP"}]},
        })  # fmt: skip

        await delete_refused(cluster, "service", name, "-n", case.ns)

        await case.patch("service", name, "strategic", label_patch(None))

        await delete_allowed(cluster, "service", name, "-n", case.ns)


async def test_ingress_deletion_should_be_protected(kruise_sandbox_all_gates: Cluster):
    """should be protected"""
    cluster = kruise_sandbox_all_gates
    async with upstream_case(cluster, "deletionprotection") as case:
        name = f"ing-{case.rand}"
        backend = {"service": {"name": "test", "port": {"number": 80}}}
        await case.create({
            "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": name, "namespace": case.ns, "labels": {PROTECTION_KEY: ALWAYS}},
            "spec": {"rules": [{"host": "foo.bar.com", "http": {"paths": [
                {"path": "/", "pathType": "Prefix", "backend": backend},
            ]}}]},
        })  # fmt: skip

        await delete_refused(cluster, "ingress", name, "-n", case.ns)

        await case.patch("ingress", name, "strategic", label_patch(None))

        await delete_allowed(cluster, "ingress", name, "-n", case.ns)
