"""The ``kruise`` command: one typer app, one sub-app per concern."""

import typer

from kruise.cli.crds import crds_app
from kruise.cli.sandbox import app as sandbox_app

app = typer.Typer(no_args_is_help=True, help="kruise-py: OpenKruise in Python.")
app.add_typer(crds_app, name="crds")
app.add_typer(sandbox_app, name="sandbox")


@app.callback()
def main() -> None:
    """kruise-py: OpenKruise in Python."""


@app.command()
def version() -> None:
    """Print the kruise-py version."""
    from importlib.metadata import version as dist_version

    typer.echo(dist_version("kruise-py"))


if __name__ == "__main__":
    app()
