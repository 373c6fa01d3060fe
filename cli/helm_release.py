"""`kruise sandbox up` (default; `--host-processes` opts out): kruise-py installed by its own chart.

Instead of starting kruise-webhook/manager/daemon as host processes, the sandbox's kubelets run the
containers of kruise-py's image (``PROCESS_IMAGE``) as real processes, and this component runs
``helm install kruise helm/kruise`` against the sandbox, then waits until the kruise-system
Deployments and the kruise-daemon DaemonSet are available - so ``kubectl get pods -n
kruise-system`` shows what a cluster would, ``kubectl logs`` shows their output, and webhooks are
reached through ``kruise-webhook-service``'s endpoints.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path

import yaml

from kruise.api.apisets import DEFAULT_API_SET
from kruise.kube.client import Client
from kruise.kube.errors import NotFound
from kruise.kube.resources import DEPLOYMENTS, ResourceRef
from kruise.sandbox.binaries import find_binary
from kruise.sandbox.cluster import Sandbox
from kruise.sandbox.simulator import ProcessImage
from kruise.sandbox.simulator.deathsignal import die_with_parent

CHART_DIR = Path(__file__).resolve().parent.parent / "helm" / "kruise"
RELEASE = "kruise"
KRUISE_NAMESPACE = "kruise-system"
DEPLOYMENTS_OF_CHART = ("kruise-webhook", "kruise-controller-manager")
DAEMONSET_OF_CHART = "kruise-daemon"  # absent with daemon.enabled=false
DAEMONSETS_APPS = ResourceRef("apps", "v1", "daemonsets", True, "DaemonSet")
# docker/Dockerfile builds `kruise-py:<tag>` with these three entry points (ENTRYPOINT first).
PROCESS_IMAGE = "kruise-py:*=kruise-manager,kruise-webhook,kruise-daemon"


def find_helm() -> str:
    return find_binary("helm")


def kruise_process_images() -> list[ProcessImage]:
    """kruise-py's image mapped to the venv's console scripts."""
    return [ProcessImage.parse(PROCESS_IMAGE)]


def deployment_available(deployment: dict) -> bool:
    """All wanted replicas updated and available for the current generation (kubectl rollout status)."""
    spec, status = deployment.get("spec") or {}, deployment.get("status") or {}
    wanted = spec.get("replicas", 1)
    return (
        status.get("observedGeneration", 0) >= deployment["metadata"].get("generation", 1)
        and status.get("updatedReplicas", 0) == wanted
        and status.get("replicas", 0) == wanted  # no old replicas left to terminate
        and status.get("availableReplicas", 0) == wanted
    )


def daemonset_available(daemonset: dict) -> bool:
    """Every node that should run a pod runs an updated, available one (kubectl rollout status)."""
    status = daemonset.get("status") or {}
    desired = status.get("desiredNumberScheduled", 0)
    return (
        status.get("observedGeneration", 0) >= daemonset["metadata"].get("generation", 1)
        and status.get("updatedNumberScheduled", 0) == desired
        and status.get("numberAvailable", 0) == desired
    )


class HelmRelease:
    """``helm install`` of kruise-py's chart once the cluster is up; the release dies with the cluster."""

    def __init__(
        self,
        *,
        feature_gates: str = "",
        api_set: str = DEFAULT_API_SET,
        chart: Path = CHART_DIR,
        timeout: float = 120.0,
        helm: str | None = None,
        image_tag: str = "",
    ) -> None:
        self.name = f"helm/{RELEASE}"
        self.feature_gates = feature_gates
        self.image_tag = image_tag
        """``image.tag`` (``kruise-py:<tag>``); empty: the chart's default, its appVersion."""
        self.api_set = api_set
        self.chart = chart
        self.timeout = timeout
        self.helm = helm
        self._home: tempfile.TemporaryDirectory[str] | None = None
        self.log_hint = (
            f"logs of kruise-py: kubectl get pods -n {KRUISE_NAMESPACE}; "
            f"kubectl logs -n {KRUISE_NAMESPACE} <pod>"
        )
        """What `kruise sandbox up` prints instead of a log file: the pods log like any cluster's."""

    def install_args(self, values_file: Path) -> list[str]:
        args = ["install", RELEASE, str(self.chart), "--namespace", "default", "-f", str(values_file)]
        if self.api_set != DEFAULT_API_SET:
            # the chart renders the 2.0 CRDs as templates; its crds/ (the 1.9 set) must not go in first
            args.append("--skip-crds")
        return args

    async def start(self, sandbox: Sandbox) -> None:
        self._home = tempfile.TemporaryDirectory(prefix="kruise-helm-")
        values = Path(self._home.name) / "values.yaml"
        # no --feature-gates: the chart's default (ImagePullJobGate=true, as upstream's chart)
        chosen = {"featureGates": self.feature_gates} if self.feature_gates else {}
        if self.api_set != DEFAULT_API_SET:
            chosen["apiSet"] = self.api_set
        if self.image_tag:
            chosen["image"] = {"tag": self.image_tag}
        values.write_text(yaml.safe_dump(chosen))
        await self.run(sandbox, *self.install_args(values))
        await self.wait_available(sandbox)

    async def run(self, sandbox: Sandbox, *args: str) -> str:
        """Run helm against the sandbox with this release's own helm home; its output, or a
        RuntimeError carrying it."""
        if self._home is None:
            self._home = tempfile.TemporaryDirectory(prefix="kruise-helm-")
        home = Path(self._home.name)
        env = {
            **os.environ,
            "KUBECONFIG": str(sandbox.kubeconfig),
            "HELM_CACHE_HOME": str(home / "cache"),
            "HELM_CONFIG_HOME": str(home / "config"),
            "HELM_DATA_HOME": str(home / "data"),
        }
        process = await asyncio.create_subprocess_exec(
            self.helm or find_helm(),
            *args,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            preexec_fn=die_with_parent(),  # a SIGKILLed sandbox leaves no helm behind
        )
        output, _ = await asyncio.wait_for(process.communicate(), self.timeout)
        text = output.decode(errors="replace").strip()
        if process.returncode != 0:
            raise RuntimeError(f"helm {' '.join(args[:3])}: {text}")
        return text

    async def wait_available(self, sandbox: Sandbox) -> None:
        """Poll the chart's workloads until each is available (a clear error naming the laggards)."""
        client = await Client.from_kubeconfig(sandbox.kubeconfig)
        deadline = time.monotonic() + self.timeout
        pending = [f"deployment/{name}" for name in DEPLOYMENTS_OF_CHART] + [
            f"daemonset/{DAEMONSET_OF_CHART}"
        ]
        try:
            while pending:
                still = []
                for workload in pending:
                    kind, _, name = workload.partition("/")
                    ref, ready = (
                        (DEPLOYMENTS, deployment_available)
                        if kind == "deployment"
                        else (DAEMONSETS_APPS, daemonset_available)
                    )
                    try:
                        obj = await client.get(ref, name, KRUISE_NAMESPACE)
                    except NotFound:
                        if kind == "deployment":
                            still.append(workload)
                        continue  # the chart renders no daemon when daemon.enabled is false
                    if not ready(obj):
                        still.append(workload)
                pending = still
                if pending and time.monotonic() > deadline:
                    raise RuntimeError(
                        f"helm release {RELEASE}: {', '.join(pending)} in {KRUISE_NAMESPACE} "
                        f"not available after {self.timeout:.0f}s (kubectl get pods -n {KRUISE_NAMESPACE})"
                    )
                if pending:
                    await asyncio.sleep(0.5)
        finally:
            await client.close()

    async def stop(self) -> None:
        """The release goes with the cluster; only helm's own scratch directory is removed."""
        home, self._home = self._home, None
        if home is not None:
            home.cleanup()
