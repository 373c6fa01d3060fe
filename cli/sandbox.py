"""``kruise sandbox``: a local Kubernetes (API emulator + simulated nodes) for trying kruise-py."""

from __future__ import annotations

import asyncio
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
) -> None:
    """Start the sandbox in the foreground; Ctrl-C or SIGTERM stops it."""
    from kruise.sandbox.up import UpOptions, run_up

    def echo(line: str) -> None:
        typer.echo(line)

    options = UpOptions(nodes=nodes, port=port, kubeconfig=kubeconfig, speed=speed, demo=demo)
    try:
        asyncio.run(run_up(options, echo))
    except (OSError, RuntimeError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
