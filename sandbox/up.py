"""``kruise sandbox up``: run a Sandbox in the foreground until Ctrl-C or SIGTERM.

Kept apart from the CLI so the same run loop serves ``python -m`` style use and tests: it
prints one ``ready`` line a script can wait for, then how to point kubectl at the cluster.
The ``--demo`` script drives the real kubectl binary, so what a newcomer sees is what they
would type themselves.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from kruise.sandbox.cluster import Component, Sandbox
from kruise.sandbox.manifests import find_kubectl
from kruise.sandbox.simulator import ProcessImage

Echo = Callable[[str], None]
Tour = Callable[[Path, Echo], Awaitable[None]]


@dataclass(frozen=True)
class UpOptions:
    nodes: int = 3
    port: int = 0
    kubeconfig: Path | None = None
    speed: float = 1.0
    demo: bool = False
    components: Sequence[Component] = ()
    """Processes started once the cluster is up (the CLI passes kruise-webhook and kruise-manager)."""
    tours: Sequence[Tour] = ()
    """More demo steps run after the built-in tour with ``--demo`` (the CLI adds kruise's CloneSet tour)."""
    process_images: Sequence[ProcessImage] = ()
    """Images whose containers the kubelets run as real processes (the CLI maps kruise-py's)."""
    install_crds: bool = True
    """Apply the CRDs at start (off when a chart installs them)."""
    address_slot: int | None = None
    """Loopback slot for pod and node IPs (None: the first free one)."""
    crd_dir: Path | None = None
    """Which CRD files to apply; None: the repository's ``crds/``."""
    runtime: str = "fake"
    """The nodes' runtime: ``fake`` (in-memory) or ``containerd`` (real nodes, see ``Simulator``)."""
    pod_subnet: str | None = None
    """With ``containerd``: the pods' subnet on the sandbox's bridge (None: the default)."""
    fail_images: Sequence[str] = ()
    """Glob patterns of image references whose pull fails on every node (``--fail-image``)."""
    slow_images: Sequence[tuple[str, float]] = ()
    """(glob, seconds) pull durations per image (``--slow-image``); others pull without delay."""
    kube_api_qps: float | None = None
    """The built-in workload controllers' client rate limit (``--kube-api-qps``; None: unlimited)."""
    kube_api_burst: int = 30
    fault_endpoints: bool = False
    """Serve the emulator's fault hooks at ``/debug/faults/*`` (``--fault-endpoints``; the fault suite)."""
    manifests: Sequence[Path] = ()
    """Files/directories applied once the cluster is up, before ``components`` start (``--apply``)."""


def _crd_choice(options: UpOptions) -> dict[str, Path | None]:
    """Sandbox's crd_dir argument: none when a chart installs them, else the chosen or the default files."""
    if not options.install_crds:
        return {"crd_dir": None}
    return {} if options.crd_dir is None else {"crd_dir": options.crd_dir}


async def run_up(options: UpOptions, echo: Echo, stop: asyncio.Event | None = None) -> None:
    """Start the sandbox, announce it, optionally run the demo, and stay up until ``stop``."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    sandbox: Sandbox | None = None
    try:
        sandbox = Sandbox(
            nodes=options.nodes,
            port=options.port,
            kubeconfig=options.kubeconfig,
            speed=options.speed,
            components=options.components,
            process_images=options.process_images,
            address_slot=options.address_slot,
            runtime=options.runtime,
            pod_subnet=options.pod_subnet,
            fail_images=options.fail_images,
            slow_images=options.slow_images,
            kube_api_qps=options.kube_api_qps,
            kube_api_burst=options.kube_api_burst,
            fault_endpoints=options.fault_endpoints,
            manifests=options.manifests,
            **_crd_choice(options),
        )
        async with sandbox:
            echo(
                f"ready: server={sandbox.url} kubeconfig={sandbox.kubeconfig} nodes={options.nodes}"
                + (f" runtime={options.runtime}" if options.runtime != "fake" else "")
            )
            echo(f"  export KUBECONFIG={sandbox.kubeconfig}")
            echo("  kubectl get nodes")
            if sandbox.applied:
                echo(f"  applied before kruise-py: {', '.join(sandbox.applied)}")
            if sandbox.simulator is not None:
                echo(f"  addresses: {sandbox.simulator.addresses.describe()}")
            for component in options.components:
                log_file = getattr(component, "log_file", None)
                if log_file is not None:
                    echo(f"  logs of {component.name}: {log_file}")
                log_hint = getattr(component, "log_hint", None)
                if log_hint is not None:
                    echo(f"  {log_hint}")
            if options.demo:
                await run_demo(sandbox.kubeconfig, echo, nodes=options.nodes, crds=bool(sandbox.crds))
                for tour in options.tours:
                    await tour(sandbox.kubeconfig, echo)
                echo("demo finished; the sandbox stays up until Ctrl-C")
            await stop.wait()
            echo("stopping")
    except Exception:
        if sandbox is not None and sandbox.kept_logs is not None:
            echo(f"sandbox failed; its logs are kept in {sandbox.kept_logs}")
        raise
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


async def kubectl(kubeconfig: Path, *args: str, echo: Echo | None = None, stdin: str | None = None) -> str:
    """Run real kubectl against the sandbox; echo the command and its output; fail loudly."""
    command = [find_kubectl(), "--kubeconfig", str(kubeconfig), *args]
    if echo is not None:
        echo("$ kubectl " + " ".join(args))
        if stdin is not None:
            echo(stdin.rstrip())
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE if stdin is not None else None,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, "KUBECONFIG": str(kubeconfig)},
    )
    output, _ = await process.communicate(stdin.encode() if stdin is not None else None)
    text = output.decode(errors="replace")
    if echo is not None and text.strip():
        echo(text.rstrip())
    if process.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args)} exited with {process.returncode}: {text.strip()}")
    return text


DEMO_DEPLOYMENT = "sandbox-demo"


def demo_deployment(replicas: int) -> str:
    """The Deployment the demo applies, as a user would write it."""
    return yaml.safe_dump(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": DEMO_DEPLOYMENT, "namespace": "default"},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": DEMO_DEPLOYMENT}},
                "template": {
                    "metadata": {"labels": {"app": DEMO_DEPLOYMENT}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25"}]},
                },
            },
        },
        sort_keys=False,
    )


async def run_demo(kubeconfig: Path, echo: Echo, *, nodes: int, crds: bool) -> None:
    """A short tour with real kubectl: CRDs, nodes, and a Deployment whose pods get scheduled and run."""
    if crds:
        await kubectl(
            kubeconfig, "wait", "--for=condition=Established", "crd", "--all", "--timeout=60s", echo=echo
        )
        await kubectl(kubeconfig, "get", "crds", echo=echo)
    await kubectl(kubeconfig, "get", "nodes", echo=echo)
    if nodes == 0:
        return
    await kubectl(kubeconfig, "apply", "-f", "-", stdin=demo_deployment(nodes), echo=echo)
    await kubectl(
        kubeconfig, "rollout", "status", f"deployment/{DEMO_DEPLOYMENT}", "--timeout=120s", echo=echo
    )
    await kubectl(kubeconfig, "get", "pods", "-o", "wide", echo=echo)
