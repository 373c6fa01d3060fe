"""kubectl-kruise commands end to end through kruise.kube against the API emulator."""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

import yaml

from kruise.cli.kubectl_kruise.app import run
from kruise.cli.kubectl_kruise.connection import ConnectionOptions
from kruise.cli.kubectl_kruise.createcrr import CRRS
from kruise.cli.kubectl_kruise.createjob import ADVANCED_CRONJOBS
from kruise.cli.kubectl_kruise.kinds import (
    ADVANCED_DAEMONSETS,
    ADVANCED_STATEFULSETS,
    CLONESETS,
    DAEMONSETS_APPS,
)
from kruise.cli.kubectl_kruise.setimage import SIDECARSETS
from kruise.control.common.revision import new_cloneset_revision
from kruise.control.daemonset.history import new_revision as daemonset_revision
from kruise.kube.client import Client
from kruise.kube.resources import (
    BROADCASTJOBS,
    CONTROLLER_REVISIONS,
    DEPLOYMENTS,
    JOBS,
    NAMESPACES,
    PODS,
    REPLICASETS,
    SERVICES,
)
from tests.kit import until
from tests.kit.pods import pod

NS = "default"


def pod_template(image: str = "nginx:1.25", labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"labels": labels or {"app": "demo"}},
        "spec": {"containers": [{"name": "main", "image": image}]},
    }


def cloneset(name: str = "demo", replicas: int = 3, image: str = "nginx:1.25", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "demo"}},
            "template": pod_template(image),
            **spec,
        },
    }


async def set_status(client: Client, ref, name: str, status: dict[str, Any], namespace: str = NS) -> dict:
    obj = await client.get(ref, name, namespace)
    obj["status"] = {"observedGeneration": obj["metadata"]["generation"], **status}
    return await client.update_status(ref, obj)


async def wait_for_text(buffer: io.StringIO, text: str, timeout: float = 10.0) -> None:
    """The plugin writes to a plain buffer: poll it."""
    await until(lambda: text in buffer.getvalue(), timeout, message=f"{text!r} in the output")


async def test_status_follows_a_cloneset_rollout_to_completion(plugin):
    client = plugin.client
    await client.create(CLONESETS, cloneset())
    out, err = io.StringIO(), io.StringIO()
    task = asyncio.create_task(
        run(["--kubeconfig", str(plugin.kubeconfig), "rollout", "status", "clone/demo"], out, err)
    )
    await wait_for_text(out, "Waiting for CloneSet spec update to be observed...")
    await set_status(client, CLONESETS, "demo", {"replicas": 3, "updatedReplicas": 1, "readyReplicas": 3})
    await wait_for_text(out, "1 out of 3 new pods have been updated")
    await set_status(
        client,
        CLONESETS,
        "demo",
        {"replicas": 3, "updatedReplicas": 3, "readyReplicas": 2, "updatedReadyReplicas": 2},
    )
    await wait_for_text(out, "Waiting for 1 pods to be ready...")
    done = {
        "replicas": 3,
        "updatedReplicas": 3,
        "readyReplicas": 3,
        "updatedReadyReplicas": 3,
        "availableReplicas": 3,
        "updateRevision": "demo-r2",
    }
    await set_status(client, CLONESETS, "demo", done)
    async with asyncio.timeout(10):
        code = await task
    assert (code, err.getvalue()) == (0, "")
    assert out.getvalue() == (
        "Waiting for CloneSet spec update to be observed...\n"
        "Waiting for partitioned roll out to finish: 1 out of 3 new pods have been updated...\n"
        "Waiting for 1 pods to be ready...\n"
        "CloneSet rolling update complete 3 pods at revision demo-r2...\n"
    )


async def test_status_once_timeout_and_missing_object(plugin):
    await plugin.client.create(CLONESETS, cloneset())
    once = await plugin("rollout", "status", "cloneset/demo", "--watch=false")
    assert (once.code, once.out) == (0, "Waiting for CloneSet spec update to be observed...\n")
    timed_out = await plugin("rollout", "status", "cloneset/demo", "--timeout=200ms")
    assert timed_out.code == 1
    assert timed_out.err == "error: timed out waiting for the condition\n"
    missing = await plugin("rollout", "status", "cloneset/nope")
    assert missing.code == 1
    assert missing.err == 'Error from server (NotFound): clonesets.apps.kruise.io "nope" not found\n'


async def test_status_reports_deletion(plugin):
    client = plugin.client
    await client.create(CLONESETS, cloneset())
    out, err = io.StringIO(), io.StringIO()
    task = asyncio.create_task(
        run(["--kubeconfig", str(plugin.kubeconfig), "rollout", "status", "cloneset/demo"], out, err)
    )
    await wait_for_text(out, "spec update to be observed")
    await client.delete(CLONESETS, "demo", NS)
    async with asyncio.timeout(10):
        assert await task == 1
    assert err.getvalue() == "error: object has been deleted\n"


async def test_status_of_advanced_statefulset_and_daemonset(plugin):
    client = plugin.client
    await client.create(
        ADVANCED_STATEFULSETS,
        {
            "apiVersion": "apps.kruise.io/v1beta1",
            "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": NS},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "demo"}},
                "template": pod_template(),
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}},
            },
        },
    )
    await set_status(
        client,
        ADVANCED_STATEFULSETS,
        "db",
        {"replicas": 2, "updatedReplicas": 1, "readyReplicas": 2, "updatedReadyReplicas": 1},
    )
    result = await plugin("rollout", "status", "asts/db")
    assert (result.code, result.out) == (
        0,
        "partitioned roll out complete: 1 new pods have been updated...\n",
    )

    await client.create(
        ADVANCED_DAEMONSETS,
        {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "DaemonSet",
            "metadata": {"name": "agent", "namespace": NS},
            "spec": {"selector": {"matchLabels": {"app": "demo"}}, "template": pod_template()},
        },
    )
    counts = {"desiredNumberScheduled": 2, "updatedNumberScheduled": 2, "numberAvailable": 1}
    extra = {"currentNumberScheduled": 2, "numberMisscheduled": 0, "numberReady": 1}
    await set_status(client, ADVANCED_DAEMONSETS, "agent", {**extra, **counts})
    result = await plugin("rollout", "status", "daemon/agent", "--watch=false")
    assert (
        result.out
        == 'Waiting for daemon set "agent" rollout to finish: 1 of 2 updated pods are available...\n'
    )


async def test_pause_resume_round_trip_on_every_kruise_kind(plugin):
    client = plugin.client
    await client.create(CLONESETS, cloneset())
    await client.create(
        ADVANCED_STATEFULSETS,
        {
            "apiVersion": "apps.kruise.io/v1beta1",
            "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": NS},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "demo"}}, "template": pod_template()},
        },
    )
    paused = await plugin("rollout", "pause", "cloneset/demo", "asts/db")
    assert (paused.code, paused.out) == (
        0,
        "cloneset.apps.kruise.io/demo paused\nstatefulset.apps.kruise.io/db paused\n",
    )
    cs = await client.get(CLONESETS, "demo", NS)
    assert cs["spec"]["updateStrategy"]["paused"] is True
    sts = await client.get(ADVANCED_STATEFULSETS, "db", NS)
    assert sts["spec"]["updateStrategy"]["rollingUpdate"]["paused"] is True

    again = await plugin("rollout", "pause", "cloneset/demo")
    assert (again.code, again.err) == (1, 'error: clonesets.apps.kruise.io "demo" is already paused\n')

    resumed = await plugin("rollout", "resume", "cloneset", "demo")
    assert resumed.out == "cloneset.apps.kruise.io/demo resumed\n"
    assert (await client.get(CLONESETS, "demo", NS))["spec"]["updateStrategy"]["paused"] is False
    not_paused = await plugin("rollout", "resume", "cloneset/demo")
    assert not_paused.err == 'error: clonesets.apps.kruise.io "demo" is not paused\n'


async def test_restart_stamps_env_on_kruise_kinds_and_annotation_on_deployments(plugin):
    client = plugin.client
    await client.create(CLONESETS, cloneset())
    result = await plugin("rollout", "restart", "cloneset/demo")
    assert (result.code, result.out) == (0, "cloneset.apps.kruise.io/demo restarted\n")
    container = (await client.get(CLONESETS, "demo", NS))["spec"]["template"]["spec"]["containers"][0]
    assert [e["name"] for e in container["env"]] == ["RESTARTED_AT"]

    await client.create(DEPLOYMENTS, deployment())
    result = await plugin("rollout", "restart", "deploy/web")
    assert result.out == "deployment.apps/web restarted\n"
    template = (await client.get(DEPLOYMENTS, "web", NS))["spec"]["template"]
    assert "kubectl.kubernetes.io/restartedAt" in template["metadata"]["annotations"]


async def seed_cloneset_history(client: Client) -> dict[str, Any]:
    """A CloneSet at nginx:3 with revisions 1..3, written as its controller would write them."""
    created = await client.create(CLONESETS, cloneset(image="nginx:1"))
    for number, image in ((1, "nginx:1"), (2, "nginx:2"), (3, "nginx:3")):
        cs = await client.get(CLONESETS, "demo", NS)
        cs["spec"]["template"]["spec"]["containers"][0]["image"] = image
        cs["metadata"]["annotations"] = {"kubernetes.io/change-cause": f"image {image}"}
        cs = await client.update(CLONESETS, cs)
        await client.create(CONTROLLER_REVISIONS, new_cloneset_revision(cs, number, None))
    return created


async def test_history_lists_and_describes_cloneset_revisions(plugin):
    await seed_cloneset_history(plugin.client)
    await plugin.client.create(CONTROLLER_REVISIONS, {  # same labels, other owner: not listed
        "apiVersion": "apps/v1", "kind": "ControllerRevision", "revision": 7, "data": {},
        "metadata": {"name": "stranger", "namespace": NS, "labels": {"app": "demo"}},
    })  # fmt: skip
    table = await plugin("rollout", "history", "cloneset/demo")
    assert table.code == 0
    assert table.out == (
        "cloneset.apps.kruise.io/demo \n"
        "REVISION  CHANGE-CAUSE\n"
        "1         image nginx:1\n"
        "2         image nginx:2\n"
        "3         image nginx:3\n"
        "\n"
    )
    one = await plugin("rollout", "history", "cloneset/demo", "--revision=2")
    assert one.out.startswith(
        "cloneset.apps.kruise.io/demo with revision #2\nPod Template:\n  Labels:\tapp=demo\n"
    )
    assert "    Image:\tnginx:2\n" in one.out
    missing = await plugin("rollout", "history", "cloneset/demo", "--revision=9")
    assert (missing.code, missing.err) == (1, "error: unable to find the specified revision\n")


async def test_undo_restores_the_previous_template(plugin):
    client = plugin.client
    await seed_cloneset_history(client)

    preview = await plugin("rollout", "undo", "cloneset/demo", "--dry-run=client")
    assert preview.out.startswith("cloneset.apps.kruise.io/demo will roll back to Pod Template:\n")
    assert "Image:\tnginx:2" in preview.out and preview.out.endswith(" (dry run)\n")
    server = await plugin("rollout", "undo", "cloneset/demo", "--dry-run=server")
    assert server.out == "cloneset.apps.kruise.io/demo rolled back (server dry run)\n"
    assert image_of(await client.get(CLONESETS, "demo", NS)) == "nginx:3"

    undone = await plugin("rollout", "undo", "cloneset/demo")
    assert (undone.code, undone.out) == (0, "cloneset.apps.kruise.io/demo rolled back\n")
    assert image_of(await client.get(CLONESETS, "demo", NS)) == "nginx:2"

    to_first = await plugin("rollout", "undo", "cloneset/demo", "--to-revision=1")
    assert to_first.out == "cloneset.apps.kruise.io/demo rolled back\n"
    assert image_of(await client.get(CLONESETS, "demo", NS)) == "nginx:1"
    skipped = await plugin("rollout", "undo", "cloneset/demo", "--to-revision=1")
    assert skipped.out == (
        "cloneset.apps.kruise.io/demo skipped rollback (current template already matches revision 1)\n"
    )
    missing = await plugin("rollout", "undo", "cloneset/demo", "--to-revision=8")
    assert missing.err == "error: unable to find specified revision 8 in history\n"


def image_of(obj: dict[str, Any]) -> str:
    return obj["spec"]["template"]["spec"]["containers"][0]["image"]


def deployment(name: str = "web", image: str = "nginx:1") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": pod_template(image, {"app": "web"}),
        },
    }


async def test_deployment_history_and_undo_through_replicasets(plugin):
    client = plugin.client
    dep = await client.create(DEPLOYMENTS, deployment(image="nginx:2"))
    owner = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": dep["metadata"]["uid"],
             "controller": True}  # fmt: skip
    for number, image in ((1, "nginx:1"), (2, "nginx:2")):
        labels = {"app": "web", "pod-template-hash": f"h{number}"}
        await client.create(REPLICASETS, {
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": f"web-h{number}", "namespace": NS, "ownerReferences": [owner],
                         "labels": labels, "annotations": {"deployment.kubernetes.io/revision": str(number)}},
            "spec": {"replicas": 0, "selector": {"matchLabels": labels},
                     "template": pod_template(image, labels)},
        })  # fmt: skip
    table = await plugin("rollout", "history", "deployment/web")
    assert table.out == "deployment.apps/web \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n"
    undone = await plugin("rollout", "undo", "deployment/web")
    assert (undone.code, undone.out, undone.err) == (0, "deployment.apps/web rolled back\n", "")
    restored = await client.get(DEPLOYMENTS, "web", NS)
    assert image_of(restored) == "nginx:1"
    assert "pod-template-hash" not in restored["spec"]["template"]["metadata"]["labels"]


def demo_pod(name: str, owner: dict[str, Any] | None = None) -> dict[str, Any]:
    """An app=demo pod to create, controlled by `owner` if given."""
    return pod(
        name,
        namespace=NS,
        labels={"app": "demo"},
        owner=owner,
        containers=[{"name": "c", "image": "x"}],
        typed=True,
    )


async def test_scaledown_deletes_exactly_the_named_pods(plugin):
    client = plugin.client
    cs = await client.create(CLONESETS, cloneset(replicas=3))
    owner = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "demo",
             "uid": cs["metadata"]["uid"], "controller": True}  # fmt: skip
    for name in ("demo-a", "demo-b", "demo-c"):
        await client.create(PODS, demo_pod(name, owner))
    await client.create(PODS, demo_pod("loner"))

    result = await plugin("scaledown", "cloneset/demo", "--pods", "demo-a,demo-c")
    assert (result.code, result.err) == (0, "")
    assert result.out == (
        "# demo delete pods [demo-a demo-c] successfully\n"
        "cloneset.apps.kruise.io/demo selective pod deletion\n"
    )
    updated = await client.get(CLONESETS, "demo", NS)
    assert updated["spec"]["replicas"] == 1
    assert updated["spec"]["scaleStrategy"]["podsToDelete"] == ["demo-a", "demo-c"]

    stranger = await plugin("scaledown", "cloneset/demo", "--pods", "loner")
    assert (stranger.code, stranger.err) == (1, 'error: pod "loner" is not owned by CloneSet demo\n')
    no_pods = await plugin("scaledown", "cloneset/demo")
    assert no_pods.err == "error: must specify one pod name\n"
    wrong_kind = await plugin("scaledown", "asts/demo", "--pods", "demo-b")
    assert wrong_kind.err == "error: currently only supported CloneSet selective pods deletion\n"


async def test_namespace_flag_scopes_every_request(plugin):
    client = plugin.client
    await client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    body = cloneset()
    body["metadata"]["namespace"] = "team"
    await client.create(CLONESETS, body)
    assert (await plugin("rollout", "pause", "cloneset/demo")).code == 1  # not in default
    result = await plugin("-n", "team", "rollout", "pause", "cloneset/demo")
    assert (result.code, result.out) == (0, "cloneset.apps.kruise.io/demo paused\n")
    assert (await client.get(CLONESETS, "demo", "team"))["spec"]["updateStrategy"]["paused"] is True


async def test_unsupported_operations_name_the_object(plugin):
    result = await plugin("rollout", "pause", "sts/web")
    assert result.code == 1
    assert result.err == 'Error from server (NotFound): statefulsets.apps "web" not found\n'
    unknown = await plugin("rollout", "pause", "widget/web")
    assert unknown.err == 'error: the server doesn\'t have a resource type "widget"\n'


async def test_create_job_from_an_advanced_cronjob_and_from_an_image(plugin):
    client = plugin.client
    acj = await client.create(ADVANCED_CRONJOBS, {
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "AdvancedCronJob",
        "metadata": {"name": "nightly", "namespace": NS},
        "spec": {"schedule": "0 0 * * *", "template": {"jobTemplate": {
            "metadata": {"labels": {"team": "a"}},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                                           "containers": [{"name": "c", "image": "busybox"}]}}}}}},
    })  # fmt: skip
    result = await plugin("create", "job", "run-1", "--from=acj/nightly")
    assert (result.code, result.out, result.err) == (0, "job.batch/run-1 created\n", "")
    job = await client.get(JOBS, "run-1", NS)
    assert job["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
    assert job["metadata"]["ownerReferences"][0]["uid"] == acj["metadata"]["uid"]
    assert job["metadata"]["labels"]["team"] == "a"

    again = await plugin("create", "job", "run-1", "--from=acj/nightly")
    assert again.code == 1
    assert again.err == 'error: failed to create job: jobs.batch "run-1" already exists\n'

    preview = await plugin("create", "job", "once", "--image", "busybox", "--dry-run=client", "--", "date")
    assert preview.out == "job.batch/once created (dry run)\n"
    created = await plugin("create", "job", "once", "--image", "busybox", "--", "date", "-u")
    assert created.out == "job.batch/once created\n"
    container = (await client.get(JOBS, "once", NS))["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == ["date", "-u"]


async def test_create_broadcastjob_from_an_advanced_cronjob_and_from_an_image(plugin):
    client = plugin.client
    acj = await client.create(ADVANCED_CRONJOBS, {
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "AdvancedCronJob",
        "metadata": {"name": "sweep", "namespace": NS},
        "spec": {"schedule": "0 0 * * *", "template": {"broadcastJobTemplate": {
            "metadata": {"labels": {"team": "a"}, "annotations": {"note": "x"}},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                                           "containers": [{"name": "c", "image": "busybox"}]}},
                     "completionPolicy": {"type": "Always"}}}}},
    })  # fmt: skip
    # kruise-tools goes by status.type, which kruise-manager writes once it has seen the template
    unseen = await plugin("create", "broadcastJob", "sweep-1", "--from=acj/sweep")
    assert (unseen.code, unseen.err) == (1, "error: from must be a broadcastJob template, but got \n")
    acj["status"] = {"type": "BroadcastJob"}
    acj = await client.update_status(ADVANCED_CRONJOBS, acj)

    result = await plugin("create", "broadcastJob", "sweep-1", "--from=advancedcronjob/sweep")
    assert (result.code, result.out, result.err) == (0, "broadcastjob.apps.kruise.io/sweep-1 created\n", "")
    bcj = await client.get(BROADCASTJOBS, "sweep-1", NS)
    assert bcj["metadata"]["annotations"] == {"cronjob.kubernetes.io/instantiate": "manual", "note": "x"}
    assert bcj["metadata"]["labels"] == {"team": "a"}
    (owner,) = bcj["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"]) == (
        "AdvancedCronJob",
        "sweep",
        acj["metadata"]["uid"],
    )
    assert "controller" not in owner  # owned, not controlled, as kruise-tools builds it
    assert bcj["spec"]["completionPolicy"] == {"type": "Always"}
    assert bcj["spec"]["template"]["spec"]["containers"][0]["image"] == "busybox"

    again = await plugin("create", "broadcastjob", "sweep-1", "--from=acj/sweep")
    assert again.err == 'error: failed to create job: broadcastjobs.apps.kruise.io "sweep-1" already exists\n'
    cron = await plugin("create", "broadcastJob", "x", "--from=cronjob/nightly")
    assert (cron.code, cron.err) == (1, "error: unknown object type *v1.CronJob\n")
    missing = await plugin("create", "broadcastJob", "x", "--from=acj/ghost")
    assert missing.err == 'Error from server (NotFound): advancedcronjobs.apps.kruise.io "ghost" not found\n'
    both = await plugin("create", "broadcastJob", "x", "--image=busybox", "--from=acj/sweep")
    assert (both.code, both.err) == (1, "error: either --image or --from must be specified\n")
    command = await plugin("create", "broadcastJob", "x", "--from=acj/sweep", "--", "date")
    assert command.err == "error: cannot specify --from and command\n"

    preview = await plugin(
        "create", "broadcastJob", "once", "--image", "busybox", "--dry-run=client", "--", "date"
    )
    assert preview.out == "broadcastjob.apps.kruise.io/once created (dry run)\n"
    server = await plugin("create", "broadcastJob", "once", "--image", "busybox", "--dry-run=server")
    assert server.out == "broadcastjob.apps.kruise.io/once created (server dry run)\n"
    created = await plugin(
        "create", "broadcastJob", "once", "--image", "busybox", "-o", "name", "--", "date", "-u"
    )
    assert created.out == "broadcastjob.apps.kruise.io/once\n"
    template = (await client.get(BROADCASTJOBS, "once", NS))["spec"]["template"]["spec"]
    assert template["restartPolicy"] == "Never"
    assert template["containers"] == [{"name": "once", "image": "busybox", "command": ["date", "-u"]}]


async def test_context_flag_picks_the_kubeconfig_context(plugin):
    await plugin.client.create(CLONESETS, cloneset())
    chosen = await plugin("--context", "sandbox", "rollout", "pause", "cloneset/demo")
    assert (chosen.code, chosen.out) == (0, "cloneset.apps.kruise.io/demo paused\n")
    unknown = await plugin("rollout", "resume", "cloneset/demo", "--context", "elsewhere")
    assert (unknown.code, unknown.err) == (
        1,
        "error: context was not found for specified context: elsewhere\n",
    )


async def test_set_image_on_a_cloneset_and_a_cluster_scoped_sidecarset(plugin):
    client = plugin.client
    await client.create(CLONESETS, cloneset(image="nginx:1"))
    result = await plugin("set", "image", "cloneset/demo", "main=nginx:2")
    assert (result.code, result.out, result.err) == (0, "cloneset.apps.kruise.io/demo image updated\n", "")
    assert image_of(await client.get(CLONESETS, "demo", NS)) == "nginx:2"

    unchanged = await plugin("set", "image", "clone", "demo", "main=nginx:2")
    assert (unchanged.code, unchanged.out) == (0, "")
    ghost = await plugin("set", "image", "cloneset/demo", "ghost=x")
    assert (ghost.code, ghost.err) == (1, 'error: unable to find container named "ghost"\n')
    preview = await plugin("set", "image", "cloneset/demo", "*=nginx:3", "--dry-run=server")
    assert preview.out == "cloneset.apps.kruise.io/demo image updated (server dry run)\n"
    assert image_of(await client.get(CLONESETS, "demo", NS)) == "nginx:2"

    await client.create(SIDECARSETS, {
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet", "metadata": {"name": "logs"},
        "spec": {"selector": {"matchLabels": {"app": "demo"}},
                 "containers": [{"name": "sidecar1", "image": "centos:6"}]},
    })  # fmt: skip
    result = await plugin("-n", "team", "set", "image", "sidecarset/logs", "sidecar1=centos:7")
    assert (result.code, result.out) == (0, "sidecarset.apps.kruise.io/logs image updated\n")
    sidecarset = await client.get(SIDECARSETS, "logs")
    assert sidecarset["spec"]["containers"][0]["image"] == "centos:7"
    missing = await plugin("set", "image", "cloneset/nope", "main=x")
    assert missing.err == 'Error from server (NotFound): clonesets.apps.kruise.io "nope" not found\n'


async def test_expose_a_cloneset_as_a_service(plugin):
    client = plugin.client
    body = cloneset()
    body["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"containerPort": 80}]
    await client.create(CLONESETS, body)
    preview = await plugin("expose", "cloneset/demo", "--dry-run=client")
    assert preview.out == "service/demo exposed (dry run)\n"
    result = await plugin("expose", "cloneset", "demo", "--port=8080", "--target-port=80", "--name=front")
    assert (result.code, result.out, result.err) == (0, "service/front exposed\n", "")
    service = await client.get(SERVICES, "front", NS)
    assert service["spec"]["selector"] == {"app": "demo"}
    assert [(p["port"], p["targetPort"]) for p in service["spec"]["ports"]] == [(8080, 80)]
    again = await plugin("expose", "cloneset/demo", "--name=front")
    assert again.err == 'Error from server (AlreadyExists): services "front" already exists\n'


async def test_output_flag_prints_names_or_the_stored_object(plugin):
    client = plugin.client
    await client.create(CLONESETS, cloneset(image="nginx:1"))
    named = await plugin("rollout", "pause", "cloneset/demo", "-o", "name")
    assert named.out == "cloneset.apps.kruise.io/demo\n"
    as_json = await plugin("rollout", "restart", "cloneset/demo", "-o", "json")
    restarted = json.loads(as_json.out)
    assert restarted["spec"]["template"]["spec"]["containers"][0]["env"][0]["name"] == "RESTARTED_AT"
    assert "managedFields" not in restarted["metadata"]
    preview = await plugin("set", "image", "cloneset/demo", "main=nginx:9", "--dry-run=client", "-o", "yaml")
    assert image_of(yaml.safe_load(preview.out)) == "nginx:9"
    assert image_of(await client.get(CLONESETS, "demo", NS)) == "nginx:1"


async def test_status_survives_dropped_and_compacted_watches(plugin, emulator):
    client = plugin.client
    await client.create(CLONESETS, cloneset())
    out, err = io.StringIO(), io.StringIO()
    task = asyncio.create_task(
        run(["--kubeconfig", str(plugin.kubeconfig), "rollout", "status", "cloneset/demo"], out, err)
    )
    await wait_for_text(out, "spec update to be observed")
    emulator.server.drop_watches()
    await set_status(
        client,
        CLONESETS,
        "demo",
        {"replicas": 3, "updatedReplicas": 3, "readyReplicas": 1, "updatedReadyReplicas": 1},
    )
    await wait_for_text(out, "Waiting for 2 pods to be ready...")
    emulator.server.compact_watch_history()
    emulator.server.drop_watches()
    done = {
        "replicas": 3,
        "updatedReplicas": 3,
        "readyReplicas": 3,
        "updatedReadyReplicas": 3,
        "availableReplicas": 3,
        "updateRevision": "r",
    }
    await set_status(client, CLONESETS, "demo", done)
    async with asyncio.timeout(10):
        assert await task == 0
    assert out.getvalue().splitlines()[-1] == "CloneSet rolling update complete 3 pods at revision r..."
    assert err.getvalue() == ""


async def test_detail_status_lists_updated_pods_by_readiness(plugin):
    client = plugin.client
    cs = await client.create(CLONESETS, cloneset(replicas=3))
    owner = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "demo",
             "uid": cs["metadata"]["uid"], "controller": True}  # fmt: skip
    for name, revision, ready in (
        ("demo-a", "demo-new", True),
        ("demo-b", "demo-new", False),
        ("demo-c", "demo-old", True),
    ):
        body = demo_pod(name, owner)
        body["metadata"]["labels"]["controller-revision-hash"] = revision
        created = await client.create(PODS, body)
        created["status"] = {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
        await client.update_status(PODS, created)
    counts = {"replicas": 3, "updatedReplicas": 2, "readyReplicas": 2, "updateRevision": "demo-new"}
    await set_status(client, CLONESETS, "demo", counts)
    result = await plugin("rollout", "status", "cloneset/demo", "-d", "--watch=false")
    assert (result.code, result.err) == (0, "")
    assert result.out == (
        "CloneSet demo Waiting for partitioned roll out to finish: 2 out of 3 new pods have been updated...\n"
        "Updated ready pods: [demo-a]\nUpdated not ready pods: [demo-b]\n"
    )


async def test_native_daemonset_history_and_undo_through_controller_revisions(plugin):
    client = plugin.client
    ds = await client.create(DAEMONSETS_APPS, {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": NS},
        "spec": {"selector": {"matchLabels": {"app": "demo"}}, "template": pod_template("agent:2")},
    })  # fmt: skip
    for number, image in ((1, "agent:1"), (2, "agent:2")):
        revision = new_cloneset_revision(
            {**ds, "spec": {**ds["spec"], "template": pod_template(image)}}, number, None
        )
        revision["metadata"]["name"] = f"agent-{number}"
        revision["metadata"]["ownerReferences"][0].update(apiVersion="apps/v1", kind="DaemonSet")
        await client.create(CONTROLLER_REVISIONS, revision)
    table = await plugin("rollout", "history", "ds/agent")
    assert (
        table.out == "daemonset.apps/agent \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n"
    )
    undone = await plugin("rollout", "undo", "daemonset/agent")
    assert (undone.code, undone.out) == (0, "daemonset.apps/agent rolled back\n")
    assert image_of(await client.get(DAEMONSETS_APPS, "agent", NS)) == "agent:1"
    paused = await plugin("rollout", "pause", "ds/agent")
    assert paused.err == 'error: daemonsets.apps "agent" pausing is not supported\n'


async def test_set_env_updates_lists_and_removes(plugin):
    client = plugin.client
    await client.create(CLONESETS, cloneset())
    result = await plugin("set", "env", "cloneset/demo", "LOG=debug", "-e", "MODE=fast")
    assert (result.code, result.out, result.err) == (0, "cloneset.apps.kruise.io/demo env updated\n", "")
    env = (await client.get(CLONESETS, "demo", NS))["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env == [{"name": "MODE", "value": "fast"}, {"name": "LOG", "value": "debug"}]

    listed = await plugin("set", "env", "cloneset/demo", "--list")
    assert listed.out == "# CloneSet demo, container main\nMODE=fast\nLOG=debug\n"
    refused = await plugin("set", "env", "cloneset/demo", "LOG=info", "--overwrite=false")
    assert refused.err == "error: 'LOG' already has a value (debug), and --overwrite is false\n"
    removed = await plugin("set", "env", "cloneset/demo", "MODE-")
    assert removed.out == "cloneset.apps.kruise.io/demo env updated\n"
    env = (await client.get(CLONESETS, "demo", NS))["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env == [{"name": "LOG", "value": "debug"}]
    nothing = await plugin("set", "env", "cloneset/demo", "X=1", "-c", "sidecar")
    assert (nothing.code, nothing.out) == (0, "")
    assert nothing.err == 'warning: CloneSet/demo does not have any containers matching "sidecar"\n'


async def test_create_container_recreate_request_for_a_pod(plugin):
    client = plugin.client
    await client.create(PODS, demo_pod("web-0"))
    result = await plugin("create", "crr", "restart-web", "--pod=web-0", "--containers=c", "-u", "5")
    assert (result.code, result.out, result.err) == (
        0, "containerrecreaterequest.apps.kruise.io/restart-web created\n", ""
    )  # fmt: skip
    crr = await client.get(CRRS, "restart-web", NS)
    assert crr["spec"]["podName"] == "web-0" and crr["spec"]["containers"] == [{"name": "c"}]
    assert crr["spec"]["strategy"]["unreadyGracePeriodSeconds"] == 5
    missing = await plugin("create", "ContainerRecreateRequest", "r2", "--pod=ghost")
    assert missing.err == "error: pod ghost in namespace default not exist\n"
    again = await plugin("create", "crr", "restart-web", "--pod=web-0")
    assert again.err.startswith("error: failed to create crr: ")


async def test_request_timeout_reaches_the_client(plugin):
    await plugin.client.create(CLONESETS, cloneset())
    result = await plugin("--request-timeout=10s", "rollout", "pause", "cloneset/demo")
    assert (result.code, result.out) == (0, "cloneset.apps.kruise.io/demo paused\n")
    connection = ConnectionOptions(str(plugin.kubeconfig), request_timeout=7.0)
    client = await connection.client()
    try:
        assert client.request_timeout == 7.0
    finally:
        await client.close()


async def test_advanced_daemonset_pause_resume_history_and_undo(plugin):
    """`daemon/<name>`: pause/resume toggle `rollingUpdate.paused`; history and undo read the
    ControllerRevisions as the Advanced DaemonSet controller writes them (`new_revision`)."""
    client = plugin.client
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": NS},
        "spec": {"selector": {"matchLabels": {"app": "demo"}}, "template": pod_template("agent:1"),
                 "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}}},
    }  # fmt: skip
    ds = await client.create(ADVANCED_DAEMONSETS, body)
    for number, image in ((1, "agent:1"), (2, "agent:2")):
        ds = await client.get(ADVANCED_DAEMONSETS, "agent", NS)
        ds["spec"]["template"] = pod_template(image)
        ds = await client.update(ADVANCED_DAEMONSETS, ds)
        await client.create(CONTROLLER_REVISIONS, daemonset_revision(ds, number))

    paused = await plugin("rollout", "pause", "daemon/agent")
    assert (paused.code, paused.out) == (0, "daemonset.apps.kruise.io/agent paused\n")
    stored = await client.get(ADVANCED_DAEMONSETS, "agent", NS)
    assert stored["spec"]["updateStrategy"]["rollingUpdate"] == {"maxUnavailable": 1, "paused": True}
    again = await plugin("rollout", "pause", "ads/agent")
    assert again.err == 'error: daemonsets.apps.kruise.io "agent" is already paused\n'
    resumed = await plugin("rollout", "resume", "daemonsets.apps.kruise.io/agent")
    assert resumed.out == "daemonset.apps.kruise.io/agent resumed\n"
    stored = await client.get(ADVANCED_DAEMONSETS, "agent", NS)
    assert stored["spec"]["updateStrategy"]["rollingUpdate"]["paused"] is False

    table = await plugin("rollout", "history", "daemon/agent")
    assert table.out == (
        "daemonset.apps.kruise.io/agent \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n"
    )
    undone = await plugin("rollout", "undo", "daemon/agent")
    assert (undone.code, undone.out) == (0, "daemonset.apps.kruise.io/agent rolled back\n")
    assert image_of(await client.get(ADVANCED_DAEMONSETS, "agent", NS)) == "agent:1"
    # `daemonset/agent` is the built-in kind, as in kubectl: there is none of that name.
    native = await plugin("rollout", "pause", "daemonset/agent")
    assert native.code == 1 and 'daemonsets.apps "agent" not found' in native.err
