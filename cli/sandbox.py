"""``kruise sandbox``: a local Kubernetes (API emulator + simulated nodes) for trying kruise-py."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import typer

app = typer.Typer(no_args_is_help=True, help="A local Kubernetes stand-in for tests and newcomers.")


@app.command()
def up(
    nodes: int = typer.Option(3, "--nodes", min=0, help="Simulated nodes (0: API emulator only)."),
    port: int = typer.Option(0, "--port", min=0, max=65535, help="API port on 127.0.0.1 (0: any free port)."),
    kubeconfig: Path | None = typer.Option(None, "--kubeconfig", help="Where to write the kubeconfig."),
    speed: float = typer.Option(1.0, "--speed", min=0.001, help="Speed factor for every simulated duration."),
    demo: bool = typer.Option(False, "--demo", help="Run a short scripted tour with real kubectl."),
    no_kruise: bool = typer.Option(False, "--no-kruise", help="Bare Kubernetes: do not start kruise-py."),
    feature_gates: str = typer.Option(
        "", "--feature-gates", help="Passed to kruise-py, e.g. A=true,B=false."
    ),
    host_processes: bool = typer.Option(
        False,
        "--host-processes",
        help="Run kruise-webhook, kruise-manager and one kruise-daemon per node as host processes "
        "(logs in --log-dir) instead of installing the Helm chart.",
    ),
    via_helm: bool = typer.Option(
        False, "--via-helm", hidden=True, help="The default now: kept so older scripts still run."
    ),
    address_slot: int | None = typer.Option(
        None,
        "--address-slot",
        min=0,
        help="Loopback slot k for pod IPs 127.(244-k).0.0/16 and node IPs 127.18.k.0/24 "
        "(default: the first one no other sandbox on this machine uses).",
    ),
    fail_image: list[str] = typer.Option(
        [],
        "--fail-image",
        help="Glob pattern (repeatable) of image references whose pull fails on every simulated node, "
        "as from an unreachable registry, e.g. 'invalid.registry.k8s.io/*'.",
    ),
    log_dir: Path = typer.Option(
        Path(tempfile.gettempdir()) / "kruise-sandbox-logs",
        "--log-dir",
        help="With --host-processes: where kruise-webhook, kruise-manager and each kruise-daemon "
        "write <name>.log.",
    ),
) -> None:
    """Start the sandbox in the foreground; Ctrl-C or SIGTERM stops it.

    By default kruise-py is installed with its Helm chart (``helm install kruise helm/kruise``):
    its pods run in kruise-system, each container a real process, and ``kubectl logs -n
    kruise-system <pod>`` shows its output.
    """
    from kruise.api.features import FeatureGateError, parse
    from kruise.cli.demo import cloneset_tour, kruise_system_tour
    from kruise.cli.helm_release import HelmRelease, kruise_process_images
    from kruise.cli.stack import kruise_components
    from kruise.sandbox.up import UpOptions, run_up

    try:
        parse(feature_gates)
    except FeatureGateError as exc:
        raise typer.BadParameter(str(exc), param_hint="--feature-gates") from exc

    if via_helm and host_processes:
        raise typer.BadParameter(
            "--via-helm and --host-processes exclude each other", param_hint="--via-helm"
        )

    def echo(line: str) -> None:
        typer.echo(line)

    helm_install = not (no_kruise or host_processes)
    if helm_install and nodes == 0:
        # The chart's pods need a node to run on; an API-only sandbox keeps kruise-py on the host.
        echo("--nodes 0: no node for kruise-system's pods; kruise-py runs as host processes")
        helm_install = False

    with tempfile.TemporaryDirectory(prefix="kruise-sandbox-") as workdir:  # webhook certs; gone on exit
        components: list = []
        if helm_install:
            components = [HelmRelease(feature_gates=feature_gates)]
        elif not no_kruise:
            components = kruise_components(
                Path(workdir), feature_gates=feature_gates, nodes=nodes, log_dir=log_dir
            )
        tours = [] if no_kruise else [kruise_system_tour, cloneset_tour] if helm_install else [cloneset_tour]
        options = UpOptions(
            nodes=nodes,
            port=port,
            kubeconfig=kubeconfig,
            speed=speed,
            demo=demo,
            components=components,
            tours=tours,
            # always: a later `helm install kruise helm/kruise` (e.g. after --no-kruise) runs for real
            process_images=kruise_process_images(),
            install_crds=not helm_install,
            address_slot=address_slot,
            fail_images=tuple(fail_image),
        )
        try:
            asyncio.run(run_up(options, echo))
        except (OSError, RuntimeError, ValueError) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from exc
