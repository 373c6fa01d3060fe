"""`kubectl kruise get all`, `describe rollout` and `exec` against the API emulator: the listing's
shape, the rollout picture, and which pod and container exec hands to kubectl."""

from __future__ import annotations

import asyncio
import re
import shutil
from typing import Any

import pytest

from kruise.cli.kubectl_kruise import execpod
from kruise.cli.kubectl_kruise.describerollout import CLEAR_SCREEN
from kruise.cli.kubectl_kruise.kinds import CLONESETS
from kruise.cli.kubectl_kruise.objects import ROLLOUTS
from kruise.kube.resources import NAMESPACES, PODS, PODUNAVAILABLEBUDGETS, SERVICES, SIDECARSETS
from tests.integration.cli.conftest import install_crds, install_crds_from
from tests.integration.cli.test_kubectl_kruise_live import NS, cloneset, set_status
from tests.integration.cli.test_kubectl_kruise_set_objects import ROLLOUT_CRD, service

HOT_UPGRADE = "kruise.io/sidecarset-working-hotupgrade-container"
PAUSED_MESSAGE = "Rollout is in step(1/2), and you need manually confirm to enter the next step"
AGE_CELL = re.compile(r"(?<= )\d+s(?= )")
AGE = re.compile(r"\t(\d+s)\n")


def ages_out(text: str) -> str:
    """The AGE column depends on the clock: keep its shape (whole seconds), drop its value."""
    return AGE.sub("\t<age>\n", text)


async def running_pod(client, name: str, *, ready: bool, containers: tuple[str, ...] = ("main",),
                      labels: dict[str, str] | None = None, phase: str = "Running",
                      annotations: dict[str, str] | None = None) -> dict[str, Any]:  # fmt: skip
    pod = await client.create(PODS, {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": labels or {"app": "demo"},
                     "annotations": annotations or {}},
        "spec": {"nodeName": "node-1", "containers": [{"name": c, "image": "nginx:1.25"}
                                                      for c in containers]},
    })  # fmt: skip
    pod["status"] = {
        "phase": phase,
        "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                        "lastTransitionTime": "2026-01-01T00:00:00Z"}],
        "containerStatuses": [{"name": c, "ready": ready, "restartCount": 0, "image": "nginx:1.25",
                               "imageID": "", "state": {"running": {}}} for c in containers],
    }  # fmt: skip
    return await client.update_status(PODS, pod)


def sidecarset(name: str = "logger") -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet", "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": "demo"}},
                 "containers": [{"name": "log", "image": "busybox"}]},
    }  # fmt: skip


def rollout(strategy: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
        "metadata": {"name": "rollout-demo", "namespace": NS},
        "spec": {"workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "demo"},
                 "strategy": strategy or {}},
    }  # fmt: skip


# ---- get all ----------------------------------------------------------------------------------


async def test_get_all_lists_each_kruise_kind_with_its_own_columns(plugin):
    client = plugin.client
    await install_crds(client, ("policy.kruise.io_podunavailablebudgets.yaml",))
    empty = await plugin("get", "all")
    assert (empty.code, empty.out, empty.err) == (0, "", "")  # no Rollout CRD here: that kind is skipped

    await client.create(CLONESETS, cloneset(replicas=3))
    await set_status(client, CLONESETS, "demo", {
        "replicas": 3, "readyReplicas": 2, "updatedReplicas": 1, "updatedReadyReplicas": 1,
        "updatedAvailableReplicas": 1})  # fmt: skip
    await client.create(SIDECARSETS, sidecarset())
    await client.create(PODUNAVAILABLEBUDGETS, {
        "apiVersion": "policy.kruise.io/v1alpha1", "kind": "PodUnavailableBudget",
        "metadata": {"name": "guard", "namespace": NS},
        "spec": {"selector": {"matchLabels": {"app": "demo", "tier": "web"}}, "maxUnavailable": "25%"},
    })  # fmt: skip
    await client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    elsewhere = cloneset("elsewhere")
    elsewhere["metadata"]["namespace"] = "other"
    await client.create(CLONESETS, elsewhere)

    result = await plugin("get", "all")
    assert (result.code, result.err) == (0, "")
    assert ages_out(result.out) == (
        "\nclonesets.apps.kruise.io:\n"
        "NAME        \tDESIRED \tUPDATED \tUPDATED_READY \tUPDATED_AVAILABLE \tREADY   \tTOTAL   \tAGE\n"
        "demo        \t3       \t1       \t1             \t1                 \t2       \t3       \t<age>\n"
        "\nsidecarsets.apps.kruise.io:\n"
        "NAME        \tMATCHED \tUPDATED \tREADY   \tINJECTED\tAGE\n"
        "logger      \t0       \t0       \t0       \t-       \t<age>\n"
        "\npodunavailablebudgets.policy.kruise.io:\n"
        "NAME        \tMAXUNAVAILABLE\tUNAVAILABLE\tDISRUPTIONS\tTARGETS \tAGE\n"
        "guard       \t25%     \t0       \t0       \t2       \t<age>\n"
    )
    other = await plugin("get", "all", "-n", "other")
    assert ages_out(other.out).splitlines()[1:4:2] == [
        "clonesets.apps.kruise.io:",
        "elsewhere   \t3       \t0       \t0             \t0                 \t0       \t0       \t<age>",
    ]

    one = await plugin("get", "clonesets.apps.kruise.io", "demo")
    assert ages_out(one.out).startswith("NAME        \tDESIRED ") and one.out.count("\n") == 2


async def test_get_lists_rollouts_once_their_crd_is_served_and_refuses_unknown_types(plugin):
    client = plugin.client
    await install_crds_from(client, [ROLLOUT_CRD])
    created = await client.create(ROLLOUTS, rollout())
    await client.update_status(ROLLOUTS, {**created, "status": {
        "phase": "Progressing", "message": PAUSED_MESSAGE,
        "canaryStatus": {"currentStepIndex": 1, "currentStepState": "StepPaused"}}})  # fmt: skip
    result = await plugin("get", "all")
    assert ages_out(result.out) == (
        "\nrollouts.rollouts.kruise.io:\n"
        f"{'NAME':<20}\t{'STATUS':<8}\t{'CANARY_STEP':<12}\t{'CANARY_STATE':<12}\t{'MESSAGE':<40}\tAGE\n"
        f"{'rollout-demo':<20}\tProgressing\t{1:<12}\t{'StepPaused':<12}\t{PAUSED_MESSAGE}\t<age>\n"
    )
    unknown = await plugin("get", "cloneset")
    assert (unknown.code, unknown.out) == (1, "")
    assert unknown.err.startswith('error: resource type "cloneset" is not supported: use "all" or one of '
                                  "clonesets.apps.kruise.io, ")  # fmt: skip
    missing = await plugin("get", "clonesets.apps.kruise.io", "nope")
    assert (missing.code, missing.err) == (
        1,
        'Error from server (NotFound): clonesets.apps.kruise.io "nope" not found\n',
    )
    bare = await plugin("get")
    assert (bare.code, bare.err) == (1, "error: required resource not specified\n")


# ---- describe rollout ---------------------------------------------------------------------------


async def rollout_on_cloneset(client) -> None:
    await install_crds_from(client, [ROLLOUT_CRD])
    await client.create(CLONESETS, cloneset(replicas=4))
    await set_status(client, CLONESETS, "demo", {"replicas": 4, "readyReplicas": 4, "updatedReplicas": 1,
                                                "availableReplicas": 4})  # fmt: skip
    header = {"name": "user", "value": "beta", "type": "Exact"}
    routing = {"service": "front", "ingress": {"classType": "nginx", "name": "front"}}
    created = await client.create(ROLLOUTS, rollout({"canary": {
        "steps": [{"replicas": 1}, {"replicas": "50%", "traffic": "50%", "matches": [{"headers": [header]}]}],
        "trafficRoutings": [routing]}}))  # fmt: skip
    await client.update_status(ROLLOUTS, {**created, "status": {
        "observedGeneration": created["metadata"]["generation"], "phase": "Progressing",
        "message": PAUSED_MESSAGE,
        "canaryStatus": {"currentStepIndex": 1, "currentStepState": "StepPaused", "stableRevision": "demo-1",
                         "canaryRevision": "demo-2", "podTemplateHash": "demo-2"}}})  # fmt: skip
    for name, batch, ready in (("demo-b", "1", False), ("demo-a", "1", True), ("demo-old", "", True)):
        labels = {"app": "demo", "controller-revision-hash": "demo-2" if batch else "demo-1"}
        if batch:
            labels["rollouts.kruise.io/rollout-batch-id"] = batch
        await running_pod(client, name, ready=ready, labels=labels)


async def test_describe_rollout_prints_steps_workload_and_the_batch_pods(plugin):
    await rollout_on_cloneset(plugin.client)
    result = await plugin("describe", "rollout", "rollout-demo", "--no-color")
    assert (result.code, result.err) == (0, "")
    pods_at = result.out.index("NAME ")
    assert result.out[:pods_at] == (
        "Name:              rollout-demo\n"
        "Namespace:         default\n"
        "Status:             Progressing\n"
        f"Message:           {PAUSED_MESSAGE}\n"
        "Strategy:          Canary\n"
        " Step:             1/2\n"
        " Steps:\n"
        "  -  Replicas:     1\n"
        "     State:        StepPaused\n"
        "  -  Replicas:     50%\n"
        "     Traffic:      50%\n"
        "     Matches: \n"
        "      - Headers: \n"
        "       - Name:     user\n"
        "         Value:    beta\n"
        "         Type:     Exact\n"
        "Traffic Routings:\n"
        "  -  Service:      front\n"
        "     Ingress: \n"
        "      classType:   nginx\n"
        "      name:        front\n"
        "Images:            nginx:1.25\n"
        "Current Revision:  demo-1\n"
        "Update Revision:   demo-2\n"
        "Replicas:\n"
        " Desired:          4\n"
        " Updated:          1\n"
        " Current:          4\n"
        " Ready:            4\n"
        " Available:        4\n"
    )
    # The pods of the current batch on the canary revision, ready ones first; AGE is HumanDuration.
    table = result.out[pods_at:].splitlines()
    assert table[0] == "NAME    READY  BATCH ID  REVISION  AGE  RESTARTS  STATUS"
    assert [AGE_CELL.sub("<age>", line).split() for line in table[1:]] == [
        ["demo-a", "1/1", "1", "demo-2", "<age>", "0", "Running"],
        ["demo-b", "0/1", "1", "demo-2", "<age>", "0", "Running"],
    ]

    coloured = await plugin("describe", "ro", "rollout-demo")
    assert "Status:            \033[33m⚠\033[0m Progressing\n" in coloured.out
    assert "\033[32m  -  Replicas:     1\n     State:        StepPaused\n\033[0m" in coloured.out
    assert "\033[32m✔\033[0m Running\n" in coloured.out


async def test_describe_rollout_reports_what_it_cannot_read(plugin):
    client = plugin.client
    no_crd = await plugin("describe", "rollout", "rollout-demo")
    assert (no_crd.code, no_crd.err) == (1, 'error: the server doesn\'t have a resource type "rollouts"\n')
    await rollout_on_cloneset(client)
    missing = await plugin("describe", "rollout", "nope")
    assert (missing.code, missing.err) == (
        1,
        'Error from server (NotFound): rollouts.rollouts.kruise.io "nope" not found\n',
    )
    await client.delete(CLONESETS, "demo", NS)
    gone = await plugin("describe", "rollout", "rollout-demo", "--no-color")
    assert gone.code == 0
    assert gone.out.endswith(
        'name:        front\nError getting resources: clonesets.apps.kruise.io "demo" not found\n'
    )
    stored = await client.get(ROLLOUTS, "rollout-demo", NS)
    stored["spec"]["workloadRef"] = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent"}
    await client.update(ROLLOUTS, stored)
    native = await plugin("describe", "rollout", "rollout-demo", "--no-color")
    assert native.out.endswith("Error getting resources: unsupported workload kind *v1.DaemonSet\n")
    unnamed = await plugin("describe", "rollout")
    assert (unnamed.code, unnamed.err) == (1, "error: required rollout name not specified\n")


async def test_describe_rollout_watch_redraws_until_the_timeout(plugin):
    await rollout_on_cloneset(plugin.client)
    result = await plugin("describe", "rollout", "rollout-demo", "-w", "--timeout", "1", "--no-color")
    assert result.out.startswith(CLEAR_SCREEN + "Name:              rollout-demo\n")
    assert (result.code, result.err) == (1, "error: context deadline exceeded\n")


# ---- exec -------------------------------------------------------------------------------------


def options(resource: str, **flags: Any) -> execpod.ExecOptions:
    return execpod.ExecOptions(resource=resource, command=("date",), **flags)


async def test_exec_picks_the_most_active_pod_and_the_first_container(plugin):
    client = plugin.client
    await client.create(CLONESETS, cloneset())
    await running_pod(client, "demo-starting", ready=False)
    await running_pod(client, "demo-serving", ready=True, containers=("main", "log"))
    await running_pod(client, "demo-pending", ready=False, phase="Pending")
    choice = await execpod.choose(client, NS, options("cloneset/demo"))
    assert (choice.pod["metadata"]["name"], choice.container) == ("demo-serving", "main")
    assert choice.notes == (
        "Defaulting container name to main.\n",
        "Use 'kubectl describe pod/demo-serving -n default' to see all of the containers in this pod.\n",
    )
    named = await execpod.choose(client, NS, options("demo-starting", container="main"))
    assert (named.pod["metadata"]["name"], named.container, named.notes) == ("demo-starting", "main", ())


async def test_exec_enters_the_working_hot_upgrade_container(plugin):
    client = plugin.client
    working = {HOT_UPGRADE: '{"log":"log-2"}'}
    await running_pod(client, "hot", ready=True, containers=("main", "log-1", "log-2"), annotations=working)
    choice = await execpod.choose(client, NS, options("pod/hot", sidecar_container="log"))
    assert (choice.container, choice.notes) == ("log-2", ("Enter working container log-2 of SidecarSet.\n",))


async def test_exec_waits_for_a_pod_and_refuses_with_the_reason(plugin):
    client = plugin.client
    await client.create(CLONESETS, cloneset())
    waiting = asyncio.create_task(execpod.choose(client, NS, options("clone/demo", pod_running_timeout=30)))
    await running_pod(client, "demo-late", ready=True)
    assert (await waiting).pod["metadata"]["name"] == "demo-late"

    await client.create(SERVICES, {**service("headless"), "spec": {"ports": [{"port": 80}]}})
    await client.create(SIDECARSETS, sidecarset())
    await running_pod(client, "done", ready=False, phase="Succeeded")
    for argv, message in (
        (["svc/headless"], "error: cannot attach to *v1.Service: invalid service 'headless': "
                           "Service is defined without a selector\n"),
        (["sidecarset/logger"], "error: cannot attach to *v1alpha1.SidecarSet: "
                                "selector for *v1alpha1.SidecarSet not implemented\n"),
        (["done"], "error: cannot exec into a container in a completed pod; current phase is Succeeded\n"),
        (["clone/nope"], 'Error from server (NotFound): clonesets.apps.kruise.io "nope" not found\n'),
        (["widget/x"], 'error: the server doesn\'t have a resource type "widget"\n'),
    ):  # fmt: skip
        result = await plugin("exec", *argv, "--", "date")
        assert (result.code, result.err) == (1, message), argv
    no_command = await plugin("exec", "done", "--")
    assert no_command.err == "error: you must specify at least one command for the container\n"
    nothing = await plugin("exec")
    assert nothing.err == "error: pod, type/name or --filename must be specified\n"
    await client.create(CLONESETS, {**cloneset("idle"), "spec": {**cloneset()["spec"],
                                    "selector": {"matchLabels": {"app": "idle"}}}})  # fmt: skip
    timed_out = await plugin("exec", "cloneset/idle", "--pod-running-timeout=0.2s", "--", "date")
    assert timed_out.err == "error: timed out waiting for the condition\n"


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not on PATH")
async def test_exec_hands_the_chosen_pod_and_container_to_kubectl(plugin):
    client = plugin.client
    await client.create(CLONESETS, cloneset())
    await running_pod(client, "demo-serving", ready=True)
    await running_pod(client, "demo-starting", ready=False)
    # The emulator validates the container before streaming: kubectl's refusal names the chosen pod and
    # the container the plugin passed on, and kubectl's exit status is the plugin's.
    result = await plugin("exec", "cloneset/demo", "-c", "sidecar", "--", "date")
    assert result.code == 1
    assert "container sidecar is not valid for pod demo-serving" in result.err, result.err
    deprecated = await plugin("exec", "-c", "sidecar", "demo-serving", "date")
    assert deprecated.err.startswith("kubectl exec [POD] [COMMAND] is DEPRECATED")
    assert "container sidecar is not valid for pod demo-serving" in deprecated.err


async def test_exec_output_of_a_stub_stream_reaches_the_plugin_streams(plugin, tmp_path, monkeypatch):
    """Without a kubelet the emulator cannot run a command; a kubectl stand-in on PATH shows the exact
    argv the plugin builds and that its output, error and status come back unchanged."""
    fake = tmp_path / "kubectl"
    fake.write_text('#!/bin/sh\necho "argv: $*"\necho "to stderr" >&2\nexit 3\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    await running_pod(plugin.client, "solo", ready=True)
    result = await plugin("exec", "solo", "-it", "--", "sh", "-c", "echo hi")
    assert result.code == 3
    assert result.out == (
        f"argv: --kubeconfig {plugin.kubeconfig} exec solo -n default -c main -i -t -- sh -c echo hi\n"
    )
    assert result.err == "to stderr\n"
