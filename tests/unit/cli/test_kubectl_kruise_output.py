"""The name printer, `-o name|json|yaml`, and error lines."""

from __future__ import annotations

import io
import json

import pytest
import yaml

from kruise.cli.kubectl_kruise.output import Printer, api_error_text, error_line, parse_output, render
from kruise.kube.errors import NotFound, TransportError

OBJ = {
    "kind": "CloneSet",
    "metadata": {"name": "demo", "managedFields": [{"manager": "x"}]},
    "spec": {"b": 1, "a": 2},
}


@pytest.mark.parametrize(
    ("output", "dry_run", "text"),
    [
        ("", "none", "cloneset.apps.kruise.io/demo paused\n"),
        ("", "client", "cloneset.apps.kruise.io/demo paused (dry run)\n"),
        ("", "server", "cloneset.apps.kruise.io/demo paused (server dry run)\n"),
        ("name", "server", "cloneset.apps.kruise.io/demo\n"),
    ],
)
def test_name_printer(output, dry_run, text):
    out = io.StringIO()
    Printer(out, output, dry_run).object("cloneset.apps.kruise.io/demo", "paused", OBJ)
    assert out.getvalue() == text


def test_json_and_yaml_hide_managed_fields_and_sort_keys():
    as_json = render(OBJ, "json")
    assert json.loads(as_json) == {"kind": "CloneSet", "metadata": {"name": "demo"}, "spec": {"b": 1, "a": 2}}
    assert as_json.index('"a"') < as_json.index('"b"') and '\n    "kind"' in as_json
    assert yaml.safe_load(render(OBJ, "yaml"))["metadata"] == {"name": "demo"}
    assert "managedFields" in OBJ["metadata"]  # the input is not modified


def test_parse_output():
    assert parse_output("yaml") == "yaml" and parse_output("") == ""
    with pytest.raises(ValueError, match='output format "wide", allowed formats are: json,name,yaml'):
        parse_output("wide")


def test_error_lines():
    err = NotFound('clonesets.apps.kruise.io "x" not found', code=404, reason="NotFound")
    assert api_error_text(err) == 'Error from server (NotFound): clonesets.apps.kruise.io "x" not found'
    assert error_line(api_error_text(err)).startswith("Error from server")
    assert api_error_text(TransportError("GET /x: refused")) == "GET /x: refused"
    assert error_line("boom") == "error: boom\n"
