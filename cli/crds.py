"""`kruise crds generate|check`: write each API set's CRDs from kruise.api models, or fail on drift."""

from __future__ import annotations

from pathlib import Path

import typer

crds_app = typer.Typer(no_args_is_help=True, help="Generate or check the CustomResourceDefinitions.")

_API_SET_HELP = 'API set: "1.9" (OpenKruise 1.9.0, default) or "2.0" (upstream master). Both when omitted.'


def _targets(api_set: str | None, directory: Path | None) -> list[tuple[str, Path]]:
    """(set, directory) pairs: the named set, the default set for a given directory, else both sets."""
    from kruise.api.apisets import DEFAULT_API_SET, APISetError, parse
    from kruise.api.crdfiles import SET_DIRS

    if api_set is not None:
        try:
            api_set = parse(api_set, field="--api-set")
        except APISetError as exc:
            raise typer.BadParameter(str(exc), param_hint="--api-set") from exc
    if directory is not None:
        return [(api_set or DEFAULT_API_SET, directory)]
    if api_set is not None:
        return [(api_set, SET_DIRS[api_set])]
    return list(SET_DIRS.items())


@crds_app.command()
def generate(
    out: Path | None = typer.Option(
        None, "--out", help="Directory to write into (default: crds/ for 1.9, crds-2.0/ for 2.0)."
    ),
    api_set: str | None = typer.Option(None, "--api-set", help=_API_SET_HELP),
) -> None:
    """Write one YAML file per CRD, named like upstream (apps.kruise.io_clonesets.yaml)."""
    from kruise.api.crdfiles import write_all

    for name, directory in _targets(api_set, out):
        for path in write_all(directory, name):
            typer.echo(str(path))


@crds_app.command()
def check(
    directory: Path | None = typer.Option(
        None, "--dir", help="Directory holding the CRD YAML files (default: each set's own)."
    ),
    api_set: str | None = typer.Option(None, "--api-set", help=_API_SET_HELP),
) -> None:
    """Exit non-zero when the files differ from what the models generate."""
    from kruise.api.crdfiles import drift

    problems = [p for name, where in _targets(api_set, directory) for p in drift(where, name)]
    for problem in problems:
        typer.echo(problem, err=True)
    if problems:
        raise typer.Exit(code=1)
    typer.echo("crds are up to date")
