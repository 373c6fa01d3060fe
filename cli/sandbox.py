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
    via_helm: bool = typer.Option(
        False,
        "--via-helm",
        help="Install kruise-py with its Helm chart: its pods run in kruise-system as real processes.",
    ),
    log_dir: Path = typer.Option(
        Path(tempfile.gettempdir()) / "kruise-sandbox-logs",
        "--log-dir",
        help="Where kruise-webhook, kruise-manager and each kruise-daemon write <name>.log.",
    ),
) -> None:
    """Start the sandbox in the foreground; Ctrl-C or SIGTERM stops it."""
    from kruise.api.features import FeatureGateError, parse
    from kruise.cli.demo import cloneset_tour
    from kruise.cli.helm_release import HelmRelease, kruise_process_images
    from kruise.cli.stack import kruise_components
    from kruise.sandbox.up import UpOptions, run_up

    try:
        parse(feature_gates)
    except FeatureGateError as exc:
        raise typer.BadParameter(str(exc), param_hint="--feature-gates") from exc

    def echo(line: str) -> None:
        typer.echo(line)

    with tempfile.TemporaryDirectory(prefix="kruise-sandbox-") as workdir:  # webhook certs; gone on exit
        helm_install = via_helm and not no_kruise
        components: list = []
        if helm_install:
            components = [HelmRelease(feature_gates=feature_gates)]
        elif not no_kruise:
            components = kruise_components(
                Path(workdir), feature_gates=feature_gates, nodes=nodes, log_dir=log_dir
            )
        tours = [] if no_kruise else [cloneset_tour]
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
        )
        try:
            asyncio.run(run_up(options, echo))
        except (OSError, RuntimeError, ValueError) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from exc
