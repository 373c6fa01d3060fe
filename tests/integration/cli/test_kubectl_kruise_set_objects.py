"""`kubectl kruise set serviceaccount|selector|subject` and `rollout approve` against the API
emulator: what is stored, the printed lines, dry runs, and the per-object refusals."""

from __future__ import annotations

import json
from typing import Any

import yaml

from kruise.cli.kubectl_kruise.kinds import ADVANCED_DAEMONSETS, ADVANCED_STATEFULSETS, CLONESETS
from kruise.cli.kubectl_kruise.objects import CLUSTERROLEBINDINGS, ROLEBINDINGS, ROLLOUTS
from kruise.kube.resources import DEPLOYMENTS, SERVICES
from tests.integration.cli.conftest import install_crds_from
from tests.integration.cli.test_kubectl_kruise_live import NS, cloneset, deployment, pod_template

RBAC = "rbac.authorization.k8s.io"


def pod_spec(obj: dict[str, Any]) -> dict[str, Any]:
    return obj["spec"]["template"]["spec"]


def advanced_statefulset(name: str = "db") -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "replicas": 1,
            "serviceName": name,
            "selector": {"matchLabels": {"app": "demo"}},
            "template": pod_template(),
        },
    }


def advanced_daemonset(name: str = "agent") -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"selector": {"matchLabels": {"app": "demo"}}, "template": pod_template()},
    }


def service(name: str = "front", selector: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"selector": selector or {"app": "demo"}, "ports": [{"port": 80}]},
    }


async def test_set_serviceaccount_on_kruise_and_native_workloads(plugin):
    client = plugin.client
    await client.create(CLONESETS, cloneset())
    await client.create(ADVANCED_STATEFULSETS, advanced_statefulset())
    await client.create(ADVANCED_DAEMONSETS, advanced_daemonset())
    await client.create(DEPLOYMENTS, deployment())
    result = await plugin(
        "set", "serviceaccount", "cloneset/demo", "asts/db", "daemon/agent", "deploy/web", "robot"
    )
    assert (result.code, result.err) == (0, "")
    assert result.out == (
        "cloneset.apps.kruise.io/demo serviceaccount updated\n"
        "statefulset.apps.kruise.io/db serviceaccount updated\n"
        "daemonset.apps.kruise.io/agent serviceaccount updated\n"
        "deployment.apps/web serviceaccount updated\n"
    )
    for ref, name in ((CLONESETS, "demo"), (ADVANCED_STATEFULSETS, "db"), (ADVANCED_DAEMONSETS, "agent"),
                      (DEPLOYMENTS, "web")):  # fmt: skip
        assert pod_spec(await client.get(ref, name, NS))["serviceAccountName"] == "robot"

    # As upstream, an object that already has the account is written and printed again.
    again = await plugin("set", "sa", "clone", "demo", "robot")
    assert (again.code, again.out) == (0, "cloneset.apps.kruise.io/demo serviceaccount updated\n")


async def test_set_serviceaccount_dry_runs_output_and_refusals(plugin):
    client = plugin.client
    await client.create(CLONESETS, cloneset())
    await client.create(SERVICES, service())
    server = await plugin("set", "sa", "cloneset/demo", "robot", "--dry-run=server")
    assert server.out == "cloneset.apps.kruise.io/demo serviceaccount updated (server dry run)\n"
    local = await plugin("set", "sa", "cloneset/demo", "robot", "--dry-run=client", "-o", "yaml")
    assert pod_spec(yaml.safe_load(local.out))["serviceAccountName"] == "robot"
    assert "serviceAccountName" not in pod_spec(await client.get(CLONESETS, "demo", NS))
    named = await plugin("set", "sa", "cloneset/demo", "robot", "-o", "name")
    assert named.out == "cloneset.apps.kruise.io/demo\n"

    refused = await plugin("set", "sa", "service/front", "robot")
    assert (refused.code, refused.out) == (1, "")
    assert refused.err == (
        "error: services/front the object is not a pod or does not have a pod template: *v1.Service\n"
    )
    # One missing object stops the command before anything is written, as upstream's Infos().
    missing = await plugin("set", "sa", "cloneset/demo", "cloneset/ghost", "other")
    assert (missing.code, missing.out) == (1, "")
    assert missing.err == 'Error from server (NotFound): clonesets.apps.kruise.io "ghost" not found\n'
    assert pod_spec(await client.get(CLONESETS, "demo", NS))["serviceAccountName"] == "robot"
    nothing = await plugin("set", "sa")
    assert (nothing.code, nothing.err) == (1, "error: serviceaccount is required\n")


async def test_set_selector_replaces_a_service_selector_and_refuses_workloads(plugin):
    client = plugin.client
    await client.create(SERVICES, service(selector={"app": "demo", "tier": "web"}))
    await client.create(CLONESETS, cloneset())
    result = await plugin("set", "selector", "svc/front", "app=shop,env=qa")
    assert (result.code, result.out, result.err) == (0, "service/front selector updated\n", "")
    stored = await client.get(SERVICES, "front", NS)
    assert stored["spec"]["selector"] == {"app": "shop", "env": "qa"}

    local = await plugin("set", "selector", "service/front", "app=x", "--dry-run=client", "-o", "json")
    assert json.loads(local.out)["spec"]["selector"] == {"app": "x"}
    assert (await client.get(SERVICES, "front", NS))["spec"]["selector"] == {"app": "shop", "env": "qa"}

    # --resource-version: a stale version is refused by the server.
    stale = await plugin("set", "selector", "service/front", "app=y", "--resource-version=1")
    assert stale.code == 1 and stale.err.startswith("Error from server (Conflict): ")
    current = stored["metadata"]["resourceVersion"]
    fresh = await plugin("set", "selector", "service/front", "app=y", f"--resource-version={current}")
    assert (fresh.code, fresh.out) == (0, "service/front selector updated\n")

    both = await plugin("set", "selector", "cloneset/demo", "service/front", "app=z")
    assert both.code == 1
    assert both.out == "service/front selector updated\n"
    assert both.err == "error: clonesets/demo setting a selector is only supported for Services\n"
    expression = await plugin("set", "selector", "service/front", "env in (qa,dev)")
    assert expression.err == (
        "error: services/front match expression [{env In [dev qa]}] not supported on this object\n"
    )
    not_equal = await plugin("set", "selector", "service/front", "env!=qa")
    assert (not_equal.code, not_equal.err) == (1, 'error: "!=" is not a valid label selector operator\n')


async def test_set_subject_adds_users_groups_and_service_accounts(plugin):
    client = plugin.client
    role_ref = {"apiGroup": RBAC, "kind": "ClusterRole", "name": "view"}
    await client.create(ROLEBINDINGS, {
        "apiVersion": f"{RBAC}/v1", "kind": "RoleBinding", "metadata": {"name": "admin", "namespace": NS},
        "roleRef": role_ref, "subjects": [{"kind": "User", "apiGroup": RBAC, "name": "alice"}],
    })  # fmt: skip
    await client.create(CLUSTERROLEBINDINGS, {
        "apiVersion": f"{RBAC}/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "viewers"},
        "roleRef": role_ref,
    })  # fmt: skip
    result = await plugin(
        "set",
        "subject",
        "rolebinding/admin",
        "--user=bob",
        "--user=alice",
        "--group=ops",
        "--serviceaccount=:robot",
    )
    assert (result.code, result.out, result.err) == (
        0,
        "rolebinding.rbac.authorization.k8s.io/admin subjects updated\n",
        "",
    )
    stored = await client.get(ROLEBINDINGS, "admin", NS)
    assert stored["subjects"] == [
        {"kind": "User", "apiGroup": RBAC, "name": "alice"},
        {"kind": "User", "apiGroup": RBAC, "name": "bob"},
        {"kind": "Group", "apiGroup": RBAC, "name": "ops"},
        {"kind": "ServiceAccount", "name": "robot", "namespace": NS},
    ]
    unchanged = await plugin("set", "subject", "rolebinding/admin", "--user=bob")
    assert (unchanged.code, unchanged.out, unchanged.err) == (0, "", "")

    cluster = await plugin("set", "subject", "clusterrolebinding/viewers", "--serviceaccount=kube-system:bot")
    assert cluster.out == "clusterrolebinding.rbac.authorization.k8s.io/viewers subjects updated\n"
    assert (await client.get(CLUSTERROLEBINDINGS, "viewers"))["subjects"] == [
        {"kind": "ServiceAccount", "name": "bot", "namespace": "kube-system"}
    ]
    no_ns = await plugin("set", "subject", "clusterrolebinding/viewers", "--serviceaccount=:bot")
    assert no_ns.err == "error: serviceaccount must be <namespace>:<name>, namespace must be specified\n"
    dry = await plugin("set", "subject", "rolebinding/admin", "--group=dev", "--dry-run=server")
    assert dry.out == "rolebinding.rbac.authorization.k8s.io/admin subjects updated (server dry run)\n"
    assert len((await client.get(ROLEBINDINGS, "admin", NS))["subjects"]) == 4


async def test_set_subject_refusals(plugin):
    await plugin.client.create(CLONESETS, cloneset())
    wrong = await plugin("set", "subject", "cloneset/demo", "--user=bob")
    assert (wrong.code, wrong.err) == (
        1, "error: clonesets/demo setting subjects is only supported for RoleBinding/ClusterRoleBinding\n"
    )  # fmt: skip
    empty = await plugin("set", "subject", "rolebinding/admin")
    assert empty.err == "error: you must specify at least one value of user, group or serviceaccount\n"
    bad = await plugin("set", "subject", "rolebinding/admin", "--serviceaccount=robot")
    assert bad.err == "error: serviceaccount must be <namespace>:<name>\n"
    missing = await plugin("set", "subject", "rolebinding/nope", "--user=bob")
    assert missing.err == (
        'Error from server (NotFound): rolebindings.rbac.authorization.k8s.io "nope" not found\n'
    )


ROLLOUT_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "rollouts.rollouts.kruise.io"},
    "spec": {
        "group": "rollouts.kruise.io",
        "scope": "Namespaced",
        "names": {"kind": "Rollout", "plural": "rollouts", "singular": "rollout", "shortNames": ["ro"],
                  "listKind": "RolloutList"},
        "versions": [{
            "name": "v1beta1", "served": True, "storage": True, "subresources": {"status": {}},
            "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
        }],
    },
}  # fmt: skip


def rollout(name: str, status: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "Rollout",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}},
        "status": status,
    }


async def test_rollout_approve_moves_a_paused_step_on(plugin):
    client = plugin.client
    await install_crds_from(client, [ROLLOUT_CRD])
    for name, status in (
        ("canary", {"canaryStatus": {"currentStepIndex": 1, "currentStepState": "StepPaused"}}),
        ("bluegreen", {"blueGreenStatus": {"currentStepIndex": 1, "currentStepState": "StepPaused"}}),
        ("upgrading", {"canaryStatus": {"currentStepIndex": 1, "currentStepState": "StepUpgrade"}}),
        ("idle", {"phase": "Healthy"}),
    ):
        created = await client.create(ROLLOUTS, rollout(name, {}))
        await client.update_status(ROLLOUTS, {**created, "status": status})
    await client.create(CLONESETS, cloneset())

    result = await plugin("rollout", "approve", "rollout/canary", "ro/bluegreen")
    assert (result.code, result.err) == (0, "")
    assert (
        result.out
        == "rollout.rollouts.kruise.io/canary approved\nrollout.rollouts.kruise.io/bluegreen approved\n"
    )
    canary = await client.get(ROLLOUTS, "canary", NS)
    assert canary["status"]["canaryStatus"] == {"currentStepIndex": 1, "currentStepState": "StepReady"}
    bluegreen = await client.get(ROLLOUTS, "bluegreen", NS)
    assert bluegreen["status"]["blueGreenStatus"]["currentStepState"] == "StepReady"

    refused = await plugin(
        "rollout", "approve", "rollout/canary", "rollout/upgrading", "rollout/idle", "cloneset/demo"
    )
    assert (refused.code, refused.out) == (1, "")
    assert refused.err == (
        'error: rollouts.rollouts.kruise.io "canary" does not allow to approve, because current canary state '
        "is not 'StepPaused'\n"
        'error: rollouts.rollouts.kruise.io "upgrading" does not allow to approve, because current canary '
        "state is not 'StepPaused'\n"
        'error: rollouts.rollouts.kruise.io "idle" no need to approve: not in canary or blue-green progress\n'
        'error: clonesets.apps.kruise.io "demo" approving is not supported\n'
    )
    named = await plugin("rollout", "approve", "rollout/missing")
    assert named.err == 'Error from server (NotFound): rollouts.rollouts.kruise.io "missing" not found\n'
