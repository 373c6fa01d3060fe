"""What every command prints the kubectl way: the name printer (with its dry-run suffixes),
`-o name|json|yaml`, and the `Error from server (Reason): message` form of an apiserver refusal."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TextIO

import yaml

from kruise.kube.errors import ApiError

DRY_RUN_SUFFIX = {"none": "", "client": " (dry run)", "server": " (server dry run)"}


def api_error_text(err: ApiError) -> str:
    """kubectl's `Error from server (Reason): message`; a transport failure (code 0) as is."""
    if err.code == 0:
        return err.message
    return f"Error from server ({err.reason or 'Unknown'}): {err.message}"


def error_line(text: str) -> str:
    """Apiserver answers are already `Error from server (...)`; anything else gets `error: `."""
    return f"{text}\n" if text.startswith("Error from server") else f"error: {text}\n"


OUTPUT_FORMATS = ("name", "json", "yaml")


def parse_output(text: str) -> str:
    """`-o/--output`: kubectl's name printer (the default, or `name` without the operation), or
    the whole object the server answered with as JSON or YAML."""
    if text in ("", *OUTPUT_FORMATS):
        return text
    raise ValueError(
        f'unable to match a printer suitable for the output format "{text}", '
        f"allowed formats are: {','.join(sorted(OUTPUT_FORMATS))}"
    )


@dataclass(frozen=True)
class Printer:
    """Where and how a command reports each object it acted on."""

    out: TextIO
    output: str = ""
    dry_run: str = "none"
    err: TextIO | None = None  # for warnings; they go nowhere when unset

    def write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def warn(self, text: str) -> None:
        if self.err is not None:
            self.err.write(f"warning: {text}\n")

    def object(self, display: str, operation: str, obj: Mapping[str, Any]) -> None:
        if self.output == "name":
            self.write(f"{display}\n")
        elif self.output in ("json", "yaml"):
            self.write(render(obj, self.output))
        else:
            self.write(f"{display} {operation}{DRY_RUN_SUFFIX[self.dry_run]}\n")


def render(obj: Mapping[str, Any], fmt: str) -> str:
    """As kubectl prints an object: managedFields hidden, keys sorted, JSON indented by 4."""
    body = dict(obj)
    metadata = dict(body.get("metadata") or {})
    metadata.pop("managedFields", None)
    if metadata:
        body["metadata"] = metadata
    if fmt == "json":
        return json.dumps(body, indent=4, sort_keys=True) + "\n"
    return yaml.safe_dump(body, sort_keys=True, default_flow_style=False)
