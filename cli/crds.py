"""`kruise crds generate|check`: write crds/ from kruise.api models, or fail when it drifted."""

from __future__ import annotations

from pathlib import Path

import typer

crds_app = typer.Typer(no_args_is_help=True, help="Generate or check the CustomResourceDefinitions.")

DEFAULT_DIR = Path("crds")


@crds_app.command()
def generate(
    out: Path = typer.Option(DEFAULT_DIR, "--out", help="Directory to write the CRD YAML files into."),
) -> None:
    """Write one YAML file per CRD, named like upstream (apps.kruise.io_clonesets.yaml)."""
    from kruise.api.crdfiles import write_all

    for path in write_all(out):
        typer.echo(str(path))


@crds_app.command()
def check(
    directory: Path = typer.Option(DEFAULT_DIR, "--dir", help="Directory holding the CRD YAML files."),
) -> None:
    """Exit non-zero when the files differ from what the models generate."""
    from kruise.api.crdfiles import drift

    problems = drift(directory)
    for problem in problems:
        typer.echo(problem, err=True)
    if problems:
        raise typer.Exit(code=1)
    typer.echo("crds are up to date")
