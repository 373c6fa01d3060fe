"""`kubectl kruise create broadcastJob` for real: kubectl finds the plugin on PATH, kruise-webhook
admits the BroadcastJob it creates and kruise-manager runs it on every node to completion, both
from an image and by hand from an AdvancedCronJob whose template is a BroadcastJob (the plugin
waits for nothing: it needs the AdvancedCronJob's status.type, which kruise-manager writes)."""

from __future__ import annotations

import json
import uuid

import pytest
from harness import Cluster, kubectl_kruise, until

pytestmark = pytest.mark.e2e


async def apply(cluster: Cluster, obj: dict) -> None:
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(obj))


def advanced_cronjob(ns: str) -> dict:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "AdvancedCronJob",
        "metadata": {"name": "sweep", "namespace": ns},
        "spec": {
            "schedule": "0 0 1 1 *",  # once a year: only the manual run below happens
            "template": {
                "broadcastJobTemplate": {
                    "metadata": {"labels": {"team": "a"}},
                    "spec": {
                        "template": {
                            "spec": {
                                "restartPolicy": "Never",
                                "containers": [{"name": "c", "image": "busybox", "command": ["true"]}],
                            }
                        },
                        "completionPolicy": {"type": "Always"},
                    },
                }
            },
        },
    }


async def bcj(cluster: Cluster, name: str, ns: str) -> dict:
    _, out = await cluster.kubectl("get", "broadcastjobs.apps.kruise.io", name, "-n", ns, "-o", "json")
    return json.loads(out)


async def test_create_broadcastjob_from_an_image_and_from_an_advanced_cronjob(kruise_sandbox: Cluster):
    cluster = kruise_sandbox
    ns = f"e2e-bcj-{uuid.uuid4().hex[:6]}"
    await apply(cluster, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    try:
        _, out, err = await kubectl_kruise(
            cluster,
            "create",
            "broadcastJob",
            "once",
            "-n",
            ns,
            "--image=busybox",
            "--",
            "sh",
            "-c",
            "echo hi",
        )
        assert (out, err) == ("broadcastjob.apps.kruise.io/once created\n", "")
        await cluster.kubectl(
            "wait", "broadcastjobs.apps.kruise.io/once", "-n", ns,
            f"--for=jsonpath={{.status.succeeded}}={cluster.nodes}", "--timeout=120s",
        )  # fmt: skip
        once = await bcj(cluster, "once", ns)
        assert once["status"]["desired"] == cluster.nodes
        container = once["spec"]["template"]["spec"]["containers"][0]
        assert (container["name"], container["command"]) == ("once", ["sh", "-c", "echo hi"])

        await apply(cluster, advanced_cronjob(ns))

        async def acj_type() -> str:
            _, out = await cluster.kubectl(
                "get", "advancedcronjobs.apps.kruise.io", "sweep", "-n", ns, "-o", "jsonpath={.status.type}"
            )
            return out

        await until(acj_type, lambda kind: kind == "BroadcastJob", "kruise-manager's status.type on the ACJ")
        _, out, _ = await kubectl_kruise(
            cluster, "create", "broadcastJob", "sweep-1", "-n", ns, "--from=acj/sweep"
        )
        assert out == "broadcastjob.apps.kruise.io/sweep-1 created\n"
        await cluster.kubectl(
            "wait", "broadcastjobs.apps.kruise.io/sweep-1", "-n", ns,
            f"--for=jsonpath={{.status.succeeded}}={cluster.nodes}", "--timeout=120s",
        )  # fmt: skip
        manual = await bcj(cluster, "sweep-1", ns)
        assert manual["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
        assert manual["metadata"]["labels"]["team"] == "a"
        (owner,) = manual["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["name"]) == ("AdvancedCronJob", "sweep")

        code, _, err = await kubectl_kruise(
            cluster, "create", "broadcastJob", "sweep-1", "-n", ns, "--from=acj/sweep", check=False
        )
        assert (code, err) == (
            1, 'error: failed to create job: broadcastjobs.apps.kruise.io "sweep-1" already exists\n'
        )  # fmt: skip
    finally:
        await cluster.kubectl("delete", "namespace", ns, "--wait=false", check=False)
