"""SidecarSet over a live kruise-webhook wired into the emulator: kubectl creates a SidecarSet (stored
with its hashes), then pods, which come back injected; a second SidecarSet reusing the container
name is refused from the webhook's cache."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

from kruise.kube.client import Client
from kruise.sandbox.apiserver.webhooks import WebhookAdmission
from kruise.webhook.caches import SIDECARSETS
from kruise.webhook.main import Options, WebhookProcess
from tests.kit import polling
from tests.kit.ports import free_port

REPO = Path(__file__).resolve().parents[3]
KUBECTL = str(Path(sys.executable).parent / "kubectl")
NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}}}\n"


@dataclass
class Kubectl:
    """kubectl as an asyncio subprocess: the webhook answering it runs on this very event loop."""

    kubeconfig: Path

    async def __call__(
        self, *args: str, stdin: str | None = None, check: bool = True
    ) -> tuple[int, str, str]:
        proc = await asyncio.create_subprocess_exec(
            KUBECTL, "--kubeconfig", str(self.kubeconfig), *args,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "KUBECONFIG": str(self.kubeconfig)},
        )  # fmt: skip
        async with asyncio.timeout(60):
            out, err = await proc.communicate(stdin.encode() if stdin else None)
        code = proc.returncode or 0
        if check and code != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({code}): {err.decode()}")
        return code, out.decode(), err.decode()

    async def apply(self, manifest: str) -> None:
        await self("apply", "-f", "-", stdin=manifest)


@dataclass
class LiveWebhook:
    process: WebhookProcess
    kubectl: Kubectl


SIDECARSET = """
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: %(name)s}
spec:
  selector: {matchLabels: {app: nginx}}
  %(extra)s
  updateStrategy: {type: RollingUpdate, maxUnavailable: 1}
  containers:
  - name: sidecar1
    image: busybox
    command: ["sleep", "999d"]
    volumeMounts: [{name: log-volume, mountPath: /var/log}]
  volumes:
  - name: log-volume
    emptyDir: {}
"""
POD = """
apiVersion: v1
kind: Pod
metadata: {name: %(name)s, namespace: %(namespace)s, labels: {app: nginx}}
spec:
  containers: [{name: app, image: "nginx:1.7.9"}]
"""


@pytest.fixture
async def sidecar_webhook(emulator, tmp_path) -> AsyncIterator[LiveWebhook]:
    server = emulator.server
    server.admission = WebhookAdmission(
        lambda group, version, plural: list(server.store.list((group, plural)))
    )
    kubectl = Kubectl(emulator.kubeconfig)
    await kubectl.apply(NAMESPACE.format(name="kruise-system"))
    await kubectl("apply", "-f", str(REPO / "crds" / "apps.kruise.io_sidecarsets.yaml"))
    await kubectl("wait", "--for=condition=Established", "crd/sidecarsets.apps.kruise.io", "--timeout=30s")
    port = free_port()
    url = f"https://127.0.0.1:{port}"
    options = Options(
        kubeconfig=str(emulator.kubeconfig), namespace="kruise-system", bind_address="127.0.0.1", port=port,
        cert_dir=tmp_path / "certs", webhook_url=url, cert_resync_seconds=30.0, initialize_timeout=30.0,
        cache_sync_timeout=30.0, shutdown_grace=0.5,
    )  # fmt: skip
    client = await Client.from_kubeconfig(emulator.kubeconfig)
    process = WebhookProcess(client, options)
    await process.start()
    try:
        yield LiveWebhook(process, kubectl)
    finally:
        await process.stop()
        await client.close()


async def until(webhook: LiveWebhook, condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Until the webhook's informers have caught up with what kubectl just wrote: re-checked on
    every informer event rather than polled."""
    changed = asyncio.Event()
    handlers = [
        (informer, informer.add_event_handler(lambda *_: changed.set(), lambda *_: changed.set()))
        for informer in webhook.process.factory.informers
    ]
    try:
        async with asyncio.timeout(timeout):
            while not condition():
                changed.clear()
                await changed.wait()
    finally:
        for informer, handler in handlers:
            informer.remove_event_handler(handler)


async def get_json(kubectl: Kubectl, *args: str) -> dict:
    _, out, _ = await kubectl("get", *args, "-o", "json")
    return orjson.loads(out)


async def test_seed_sidecarset_injects_sidecar1(sidecar_webhook):
    kubectl, cache = sidecar_webhook.kubectl, sidecar_webhook.process.sidecarsets
    await kubectl.apply(SIDECARSET % {"name": "test-sidecarset", "extra": ""})
    stored = await get_json(kubectl, "sidecarsets.apps.kruise.io", "test-sidecarset")
    assert set(stored["metadata"]["annotations"]) >= {
        "kruise.io/sidecarset-hash",
        "kruise.io/sidecarset-hash-without-image",
    }
    await until(sidecar_webhook, lambda: cache.get("test-sidecarset") is not None)

    await kubectl.apply(POD % {"name": "test-pod", "namespace": "default"})
    pod = await get_json(kubectl, "pod", "test-pod", "-n", "default")
    assert [c["name"] for c in pod["spec"]["containers"]] == ["sidecar1", "app"]
    sidecar = pod["spec"]["containers"][0]
    assert {"name": "IS_INJECTED", "value": "true"} in sidecar["env"]
    assert {"name": "log-volume", "mountPath": "/var/log"} in sidecar["volumeMounts"]
    assert {"name": "log-volume", "emptyDir": {}} in pod["spec"]["volumes"]
    assert pod["metadata"]["annotations"]["kruise.io/sidecarset-injected-list"] == "test-sidecarset"

    code, _, err = await kubectl(
        "apply", "-f", "-", stdin=SIDECARSET % {"name": "dup", "extra": ""}, check=False
    )
    assert code != 0
    assert 'admission webhook "vsidecarset.kb.io" denied the request' in err
    assert "container sidecar1 already exist in test-sidecarset" in err


async def test_namespace_selector_follows_namespace_labels(sidecar_webhook):
    kubectl, cache = sidecar_webhook.kubectl, sidecar_webhook.process.sidecarsets
    await kubectl.apply(
        SIDECARSET % {"name": "ns-scoped", "extra": "namespaceSelector: {matchLabels: {inject: 'yes'}}"}
    )
    await kubectl.apply(
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: chosen, labels: {inject: 'yes'}}\n"
    )
    await kubectl.apply(NAMESPACE.format(name="ignored"))
    chosen = {"inject": "yes", "kubernetes.io/metadata.name": "chosen"}
    await until(
        sidecar_webhook,
        lambda: (
            cache.get("ns-scoped") is not None
            and cache.namespace_labels("chosen") == chosen
            and cache.namespace_labels("ignored") is not None
        ),
    )
    for namespace, expected in (("chosen", ["sidecar1", "app"]), ("ignored", ["app"])):
        await kubectl.apply(POD % {"name": "p", "namespace": namespace})
        pod = await get_json(kubectl, "pod", "p", "-n", namespace)
        assert [c["name"] for c in pod["spec"]["containers"]] == expected


PATCHING = """
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: patching}
spec:
  selector: {matchLabels: {app: web}}
  containers: [{name: agent, image: busybox}]
  patchPodMetadata: [{annotations: {"team.io/owner": "platform"}}]
"""
WHITELIST = """
apiVersion: v1
kind: ConfigMap
metadata: {name: kruise-configuration, namespace: kruise-system}
data:
  SidecarSet_PatchPodMetadata_WhiteList: '{"rules":[{"allowedAnnotationKeyExprs":["^team\\\\.io/"]}]}'
"""


async def test_patch_pod_metadata_whitelist_from_the_configmap(sidecar_webhook):
    kubectl, cache = sidecar_webhook.kubectl, sidecar_webhook.process.sidecarsets
    code, _, err = await kubectl("apply", "-f", "-", stdin=PATCHING, check=False)
    assert code != 0
    assert "spec.patchPodMetadata: Required value: SidecarSet patch metadata whitelist not found" in err
    await kubectl.apply(WHITELIST)
    await until(sidecar_webhook, lambda: bool(cache.configuration()))
    await kubectl.apply(PATCHING)
    await until(sidecar_webhook, lambda: cache.get("patching") is not None)
    await kubectl.apply(POD.replace("nginx", "web") % {"name": "web", "namespace": "default"})
    pod = await get_json(kubectl, "pod", "web", "-n", "default")
    assert pod["metadata"]["annotations"]["team.io/owner"] == "platform"
    assert [c["name"] for c in pod["spec"]["containers"]] == ["agent", "app"]


NATIVE = """
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: native}
spec:
  selector: {matchLabels: {app: mesh}}
  %(strategy)s
  initContainers:
  - {name: proxy, image: "envoyproxy/envoy:v1.30", restartPolicy: Always}
"""


async def test_native_sidecar_needs_not_update_and_is_injected_after_the_pods_init_containers(
    sidecar_webhook,
):
    """Upstream refuses RollingUpdate (the default) for native sidecars: they are never upgraded in
    place, only injected into new pods."""
    kubectl, cache = sidecar_webhook.kubectl, sidecar_webhook.process.sidecarsets
    code, _, err = await kubectl("apply", "-f", "-", stdin=NATIVE % {"strategy": ""}, check=False)
    assert code != 0
    assert (
        "spec.updateStrategy: Required value: The initContainer in-place upgrade is not currently supported."
    ) in err
    await kubectl.apply(NATIVE % {"strategy": "updateStrategy: {type: NotUpdate}"})
    await until(sidecar_webhook, lambda: cache.get("native") is not None)

    code, _, err = await kubectl(
        "patch", "sidecarset", "native", "--type=merge",
        "-p", '{"spec":{"updateStrategy":{"type":"RollingUpdate"}}}', check=False,
    )  # fmt: skip
    assert code != 0 and "The initContainer in-place upgrade is not currently supported." in err

    await kubectl.apply(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: meshed, namespace: default, labels: {app: mesh}}\n"
        "spec:\n  initContainers: [{name: setup, image: busybox}]\n"
        "  containers: [{name: app, image: nginx}]\n"
    )
    pod = await get_json(kubectl, "pod", "meshed", "-n", "default")
    assert [c["name"] for c in pod["spec"]["initContainers"]] == ["setup", "proxy"]
    proxy = pod["spec"]["initContainers"][1]
    assert proxy["restartPolicy"] == "Always"
    assert {"name": "IS_INJECTED", "value": "true"} in proxy["env"]
    hashes = orjson.loads(pod["metadata"]["annotations"]["kruise.io/sidecarset-hash"])
    assert hashes["native"]["sidecarList"] == ["proxy"]


async def test_pod_admitted_while_the_sidecarset_cache_relists_gets_the_sidecar(sidecar_webhook, emulator):
    """Issue 28: every watch of this replica ends and resumes into 410 Gone (as after a CRD redefinition
    or a compaction), and its SidecarSet re-list is held. A SidecarSet stored in that gap (admitted by
    another replica: this one's webhooks are not called for it) reaches this replica's cache only
    through the re-list, so a pod this replica admits meanwhile must wait for it, not be admitted from
    the cache with the gap: the pod gets sidecar1."""
    process, kubectl, server = sidecar_webhook.process, sidecar_webhook.kubectl, emulator.server
    # the SidecarSet as a webhook admits it (defaulted, hashes stamped), not stored yet
    _, out, _ = await kubectl(
        "apply", "--dry-run=server", "-o", "json", "-f", "-",
        stdin=SIDECARSET % {"name": "made-in-the-gap", "extra": ""},
    )  # fmt: skip
    sidecarset = orjson.loads(out)
    for field in ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"):
        sidecarset["metadata"].pop(field, None)
    listing, release = asyncio.Event(), asyncio.Event()
    list_all = process.client.list_all

    async def held_sidecarset_list(ref, *args, **kwargs):
        if ref == SIDECARSETS:
            listing.set()
            await release.wait()
        return await list_all(ref, *args, **kwargs)

    process.client.list_all = held_sidecarset_list
    server.compact_watch_history()
    server.drop_watches()
    await polling.until(listing.is_set, message="the SidecarSet cache re-lists after 410 Gone")

    admission, server.admission = server.admission, None
    try:
        await process.client.create(SIDECARSETS, sidecarset)
    finally:
        server.admission = admission

    created = asyncio.create_task(kubectl.apply(POD % {"name": "in-the-gap", "namespace": "default"}))
    metrics = process.app.state.metrics.registry

    def pod_at_the_webhook() -> bool:
        in_flight = metrics.get_sample_value(
            "controller_runtime_webhook_requests_in_flight", {"webhook": "/mutate-pod"}
        )
        return created.done() or bool(in_flight)

    await polling.until(pod_at_the_webhook, message="the pod's admission reached this replica")
    release.set()
    await created
    pod = await get_json(kubectl, "pod", "in-the-gap", "-n", "default")
    assert [c["name"] for c in pod["spec"]["containers"]] == ["sidecar1", "app"]
