"""Switching a running install from the 1.9 API set to 2.0 and back keeps every object.

Live: the emulator, a real kruise-webhook (admission and `/convert`, restarted with the other
`--api-set` at each switch, as `helm upgrade --set apiSet=...` rolls it) and kruise-manager's
`storageversion` controller. One object of each of the fourteen kinds whose versions differ between the
sets is created on 1.9 (with a status), and after each switch: the CRDs are written exactly as
docs/api.md "Switching API sets" says (1.9 -> 2.0 `kubectl apply --server-side`, as the chart's
templates; 2.0 -> 1.9 `kubectl replace -f crds/`, which drops kruise-webhook's conversion settings from
the CRDs that serve one version again in the same update, as kube-apiserver requires; a server-side
apply is refused there), storedVersions gains the new storage version (kube-apiserver's rule), the
controller rewrites every object at the storage version and trims storedVersions to it, and every
object reads back at v1alpha1 exactly as it was (spec, status, labels, annotations, generation),
updated in between at v1beta1 where the set serves it.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kruise.api.apisets import UPSTREAM_1_9
from kruise.api.crdfiles import SET_DIRS
from kruise.api.features import FeatureGates
from kruise.kube.client import Client
from kruise.kube.errors import ApiError, NotFound
from kruise.kube.informer import SharedInformerFactory
from kruise.kube.resources import CRDS, PODS, SECRETS, ResourceRef
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.storageversion import SETUP
from kruise.sandbox.apiserver.webhooks import WebhookAdmission
from kruise.webhook.main import Options, WebhookProcess
from tests.integration.webhook.apiset_objects import NS, OBJECTS, PLURALS, POD
from tests.integration.webhook.conftest import NAMESPACE, Kubectl
from tests.kit.polling import until
from tests.kit.ports import free_port

REPO = Path(__file__).resolve().parents[3]
STORAGE_2_0 = "v1alpha1"  # kruise-py's 2.0 set stores these fourteen kinds at v1alpha1
VOLATILE = ("resourceVersion", "managedFields")
# every kind admitted: the gates of ResourceDistribution and the image pull jobs are off by default
GATES = "ResourceDistributionGate=true,ImagePullJobGate=true"


def ref(kind: str, version: str, namespaced: bool) -> ResourceRef:
    group = "policy.kruise.io" if kind == "PodUnavailableBudget" else "apps.kruise.io"
    return ResourceRef(group, version, PLURALS[kind], namespaced, kind)


def crd_name(kind: str) -> str:
    return f"{ref(kind, 'v1alpha1', True).plural}.{ref(kind, 'v1alpha1', True).group}"


def storage_1_9(kind: str) -> str:
    return UPSTREAM_1_9[crd_name(kind)].storage


def comparable(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    for key in VOLATILE:
        out["metadata"].pop(key, None)
    return out


@dataclass
class Install:
    emulator: Any
    client: Client
    kubectl: Kubectl
    tmp: Path
    webhook: WebhookProcess | None = None
    url: str = ""

    async def switch_to(self, api_set: str, write: str = "apply") -> None:
        """What `helm upgrade --set apiSet=<set>` does, with the set's CRDs written as the docs say:
        `write="apply"` is the chart's server-side apply (install, and 2.0's templates),
        `write="replace"` is `kubectl replace -f crds/` (the way back to 1.9); kruise-webhook is
        restarted with `--api-set <set>`."""
        if self.webhook is not None:
            await self.webhook.stop()
        crds = str(REPO / SET_DIRS[api_set])
        if write == "replace":
            await self.kubectl("replace", "-f", crds)
        else:
            await self.kubectl(
                "apply", "--server-side", "--force-conflicts", "--field-manager=helm", "-f", crds
            )
        for kind in PLURALS:
            await self.kubectl(
                "wait", "--for=condition=Established", f"crd/{crd_name(kind)}", "--timeout=30s"
            )
        port = free_port()
        self.url = f"https://127.0.0.1:{port}"
        options = Options(
            kubeconfig=str(self.emulator.kubeconfig), namespace="kruise-system", bind_address="127.0.0.1",
            port=port, cert_dir=self.tmp / f"certs-{port}", webhook_url=self.url, initialize_timeout=30.0,
            cache_sync_timeout=30.0, shutdown_grace=0.5, api_set=api_set, feature_gates=GATES,
        )  # fmt: skip
        self.webhook = WebhookProcess(self.client, options)
        await self.webhook.start()
        await until(self.conversion_ready, timeout=30, interval=0.05, message="every conversion CRD calls us")

    async def conversion_ready(self) -> bool:
        secret = await self.client.get(SECRETS, "kruise-webhook-certs", "kruise-system")
        ca = base64.b64encode(base64.b64decode(secret["data"]["ca-cert.pem"])).decode()
        for crd in (await self.client.list(CRDS))["items"]:
            conversion = crd["spec"].get("conversion") or {}
            if conversion.get("strategy") != "Webhook":
                continue
            config = (conversion.get("webhook") or {}).get("clientConfig") or {}
            if config.get("caBundle") != ca or config.get("url") != self.url + "/convert":
                return False
        return True

    async def stored_versions(self) -> dict[str, list[str]]:
        return {
            kind: (await self.client.get(CRDS, crd_name(kind)))["status"]["storedVersions"]
            for kind in PLURALS
        }

    def stored_at(self) -> dict[str, str]:
        """The version each object is encoded at in storage (what etcd holds)."""
        out = {}
        for obj, _ in OBJECTS:
            meta = obj["metadata"]
            group = obj["apiVersion"].split("/")[0]
            stored = self.emulator.server.store.get(
                (group, PLURALS[obj["kind"]]), meta.get("namespace", ""), meta["name"]
            )
            out[obj["kind"]] = stored["apiVersion"].split("/")[1]
        return out

    async def read_all(self, version: str = "v1alpha1") -> dict[str, dict[str, Any]]:
        out = {}
        for obj, _ in OBJECTS:
            meta = obj["metadata"]
            r = ref(obj["kind"], version, "namespace" in meta)
            out[obj["kind"]] = await self.client.get(r, meta["name"], meta.get("namespace"))
        return out

    async def migrate(self) -> None:
        """kruise-manager's storageversion controller, run until every CRD lists only its storage version."""
        ctx = ManagerContext(
            client=self.client, informers=SharedInformerFactory(self.client), feature_gates=FeatureGates()
        )
        controller = SETUP.build(ctx)
        ctx.informers.start()
        try:
            assert await ctx.informers.wait_for_cache_sync(30)
            controller.start()

            async def trimmed() -> bool:
                return all(len(v) == 1 for v in (await self.stored_versions()).values())

            await until(
                trimmed, timeout=60, interval=0.05, message="storedVersions trimmed to the storage version"
            )
        finally:
            await controller.stop()
            await ctx.informers.stop()


@pytest.fixture
async def install(emulator, tmp_path) -> AsyncIterator[Install]:
    server = emulator.server
    server.admission = WebhookAdmission(
        lambda group, version, plural: list(server.store.list((group, plural)))
    )
    kubectl = Kubectl(emulator.kubeconfig)
    await kubectl.apply(NAMESPACE.format(name="kruise-system"))
    await kubectl.apply(NAMESPACE.format(name=NS))
    client = await Client.from_kubeconfig(emulator.kubeconfig)
    inst = Install(emulator, client, kubectl, tmp_path)
    try:
        yield inst
    finally:
        if inst.webhook is not None:
            await inst.webhook.stop()
        await client.close()


async def running_pod(client: Client) -> None:
    """The pod the ContainerRecreateRequest names: scheduled, running, its container started."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": POD, "namespace": NS},
        "spec": {"nodeName": "n1", "containers": [{"name": "main", "image": "nginx:alpine"}]},
    }
    created = await client.create(PODS, pod)
    created["status"] = {
        "phase": "Running",
        "containerStatuses": [
            {"name": "main", "containerID": "containerd://abc", "restartCount": 0, "ready": True,
             "image": "nginx:alpine", "imageID": "", "started": True,
             "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}
        ],
    }  # fmt: skip
    await client.update_status(PODS, created)


async def create_objects(client: Client) -> None:
    for obj, status in OBJECTS:
        namespaced = "namespace" in obj["metadata"]
        r = ref(obj["kind"], "v1alpha1", namespaced)
        # the webhook's caches (the pod a CRR names) may lag the create just made: retry until admitted
        created = await until(
            lambda r=r, obj=obj: client.create(r, copy.deepcopy(obj)),
            timeout=15,
            interval=0.1,
            ignore=(ApiError,),
        )
        await client.update_status(r, {**created, "status": status})


async def label_everything_at_v1beta1(client: Client, kinds: list[str]) -> None:
    """An update through v1beta1 (kubectl's preferred version on 2.0) of each kind: a label."""
    for obj, _ in OBJECTS:
        if obj["kind"] not in kinds:
            continue
        meta = obj["metadata"]
        r = ref(obj["kind"], "v1beta1", "namespace" in meta)
        await client.patch(
            r, meta["name"], {"metadata": {"labels": {"seen-on": "2.0"}}}, meta.get("namespace")
        )


async def test_switch_1_9_to_2_0_and_back_keeps_every_object(install):
    await install.switch_to("1.9")
    await running_pod(install.client)
    await create_objects(install.client)
    assert await install.stored_versions() == {kind: [storage_1_9(kind)] for kind in PLURALS}
    assert install.stored_at() == {kind: storage_1_9(kind) for kind in PLURALS}
    before = {kind: comparable(obj) for kind, obj in (await install.read_all()).items()}
    for kind, obj in before.items():  # the status went in and stayed (the schema pruned nothing we compare)
        assert obj["status"], kind

    # ---- 1.9 -> 2.0: the seven kinds stored at v1beta1 move to v1alpha1
    await install.switch_to("2.0")
    moved = sorted(kind for kind in PLURALS if storage_1_9(kind) != STORAGE_2_0)
    assert len(moved) == 7
    assert await install.stored_versions() == {
        kind: ["v1beta1", "v1alpha1"] if kind in moved else ["v1alpha1"] for kind in PLURALS
    }
    assert install.stored_at() == {kind: storage_1_9(kind) for kind in PLURALS}  # nothing rewritten yet
    assert {k: comparable(o) for k, o in (await install.read_all()).items()} == before
    await install.migrate()
    assert await install.stored_versions() == {kind: ["v1alpha1"] for kind in PLURALS}
    assert install.stored_at() == {kind: "v1alpha1" for kind in PLURALS}
    assert {k: comparable(o) for k, o in (await install.read_all()).items()} == before

    # on 2.0 every kind is served at v1beta1 too: read and update there
    beta = await install.read_all("v1beta1")
    assert {k: o["apiVersion"].split("/")[1] for k, o in beta.items()} == {k: "v1beta1" for k in PLURALS}
    await label_everything_at_v1beta1(install.client, list(PLURALS))
    for obj in before.values():
        obj["metadata"]["labels"]["seen-on"] = "2.0"
    after_2_0 = {k: comparable(o) for k, o in (await install.read_all()).items()}
    assert after_2_0 == before

    # ---- 2.0 -> 1.9: back to v1beta1 storage for the seven; v1beta1 no longer served for the others.
    # A server-side apply of crds/ is refused here (kruise-webhook's caBundle, under its own field manager,
    # would stay on a CRD that no longer converts); `kubectl replace` is the documented way.
    code, _, err = await install.kubectl(
        "apply", "--server-side", "--force-conflicts", "--field-manager=helm",
        "-f", str(REPO / SET_DIRS["1.9"]), check=False,
    )  # fmt: skip
    assert code != 0
    assert "spec.conversion.webhookClientConfig: Forbidden" in err, err
    await install.switch_to("1.9", write="replace")
    for kind in PLURALS:
        conversion = (await install.client.get(CRDS, crd_name(kind)))["spec"].get("conversion") or {}
        assert conversion.get("strategy", "None") == ("Webhook" if kind in moved else "None"), kind
    assert await install.stored_versions() == {
        kind: ["v1alpha1", "v1beta1"] if kind in moved else ["v1alpha1"] for kind in PLURALS
    }
    await install.migrate()
    assert await install.stored_versions() == {kind: [storage_1_9(kind)] for kind in PLURALS}
    assert install.stored_at() == {kind: storage_1_9(kind) for kind in PLURALS}
    assert {k: comparable(o) for k, o in (await install.read_all()).items()} == before
    crd = await install.client.get(CRDS, crd_name("CloneSet"))
    assert [v["name"] for v in crd["spec"]["versions"]] == ["v1alpha1"], crd["spec"]["versions"]
    cloneset = before["CloneSet"]["metadata"]
    # the raw path: Client.get maps a version to the storage version it reads on the wire
    with pytest.raises(NotFound):
        await install.client.request(
            "GET", ref("CloneSet", "v1beta1", True).path(cloneset["namespace"], cloneset["name"])
        )
