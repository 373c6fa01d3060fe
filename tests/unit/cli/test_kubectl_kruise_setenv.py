"""`set env`: kubectl's env grammar, merge rules, listing and the guarded patch."""

from __future__ import annotations

import pytest

from kruise.cli.kubectl_kruise import setenv
from kruise.cli.kubectl_kruise.setenv import EnvChanges, SetEnvError, SetEnvOptions


def test_split_and_parse():
    resources, envs = setenv.split_arguments(["cloneset/a", "A=1", "B=x=y", "C-"])
    assert resources == ["cloneset/a"]
    changes = setenv.parse_env(envs)
    assert changes.set == [{"name": "A", "value": "1"}, {"name": "B", "value": "x=y"}]
    assert changes.remove == ["C"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["A=1", "cloneset/a"], "all resources must be specified before environment changes: cloneset/a"),
    ],
)
def test_split_errors(args, message):
    with pytest.raises(SetEnvError, match=message):
        setenv.split_arguments(args)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("1BAD=x", '"1BAD" is not a valid key name'),
        ("-", "unknown environment variable: -"),
        ("=x", '"" is not'),
    ],
)
def test_parse_errors(spec, message):
    with pytest.raises(SetEnvError, match=message):
        setenv.parse_env([spec])


def test_update_env_replaces_in_place_appends_and_removes():
    existing = [{"name": "A", "value": "old"}, {"name": "GONE", "value": "x"}, {"name": "KEEP", "value": "k"}]
    changes = EnvChanges(set=[{"name": "NEW", "value": "n"}, {"name": "A", "value": "new"}], remove=["GONE"])
    assert setenv.update_env(existing, changes) == [
        {"name": "A", "value": "new"},
        {"name": "KEEP", "value": "k"},
        {"name": "NEW", "value": "n"},
    ]


def test_no_overwrite():
    existing = [{"name": "A", "value": "1"}]
    setenv.check_no_overwrite(existing, EnvChanges(set=[{"name": "A", "value": "1"}]))
    with pytest.raises(SetEnvError, match=r"'A' already has a value \(1\), and --overwrite is false"):
        setenv.check_no_overwrite(existing, EnvChanges(set=[{"name": "A", "value": "2"}]))


def test_list_env_prints_values_and_references():
    container = {
        "name": "main",
        "env": [
            {"name": "A", "value": "1"},
            {"name": "S", "valueFrom": {"secretKeyRef": {"name": "db", "key": "pw"}}},
            {"name": "C", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "k"}}},
            {"name": "P", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "R", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
        ],
    }
    assert setenv.list_env("CloneSet", "demo", container) == (
        "# CloneSet demo, container main\nA=1\n# S from secret db, key pw\n# C from configmap cfg, key k\n"
        "# P from field path metadata.name\n# R from resource limits.cpu\n"
    )


OBJ = {
    "spec": {
        "template": {
            "spec": {
                "initContainers": [{"name": "init"}],
                "containers": [{"name": "main", "env": [{"name": "A", "value": "1"}]}, {"name": "side"}],
            }
        }
    }
}


def test_patch_guards_names_and_honours_the_container_glob():
    options = SetEnvOptions(EnvChanges(set=[{"name": "A", "value": "1"}]), containers="*")
    ops = setenv.env_patch(OBJ, options)
    # main already has A=1; init and side get it added
    assert [op["path"] for op in ops] == [
        "/spec/template/spec/initContainers/0/name",
        "/spec/template/spec/initContainers/0/env",
        "/spec/template/spec/containers/1/name",
        "/spec/template/spec/containers/1/env",
    ]
    only_main = SetEnvOptions(EnvChanges(remove=["A"]), containers="ma*")
    assert setenv.env_patch(OBJ, only_main)[1] == {
        "op": "add",
        "path": "/spec/template/spec/containers/0/env",
        "value": [],
    }
    assert setenv.selected_containers(OBJ, "nothing") == []
