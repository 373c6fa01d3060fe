"""`create ContainerRecreateRequest`: the request kruise-tools would build."""

from __future__ import annotations

import pytest

from kruise.cli.kubectl_kruise import createcrr
from kruise.cli.kubectl_kruise.createcrr import CreateCRRError, CreateCRROptions
from kruise.cli.kubectl_kruise.parser import build_parser, parse

POD = {
    "metadata": {"name": "web-0"},
    "spec": {
        "containers": [
            {
                "name": "main",
                "ports": [{"containerPort": 80}],
                "lifecycle": {"preStop": {"exec": {"command": ["sleep", "5"]}}},
            },
            {"name": "side"},
        ]
    },
}


def test_every_container_by_default_with_ports_and_prestop():
    assert createcrr.recreate_containers(POD, (), "ns") == [
        {"name": "main", "preStop": {"exec": {"command": ["sleep", "5"]}}, "ports": [{"containerPort": 80}]},
        {"name": "side"},
    ]
    assert createcrr.recreate_containers(POD, ("side",), "ns") == [{"name": "side"}]
    with pytest.raises(CreateCRRError, match="has container not exist: ghost in pod web-0 in namespace ns"):
        createcrr.recreate_containers(POD, ("side", "ghost"), "ns")


def test_defaults_match_kruise_tools():
    crr = createcrr.build_crr(CreateCRROptions("r", "web-0"), "ns", [{"name": "main"}])
    assert crr["spec"] == {
        "podName": "web-0",
        "containers": [{"name": "main"}],
        "strategy": {
            "failurePolicy": "Fail",
            "orderedRecreate": False,
            "unreadyGracePeriodSeconds": 3,
            "minStartedSeconds": 3,
        },
        "activeDeadlineSeconds": 300,
        "ttlSecondsAfterFinished": 1800,
    }


def test_flags_and_aliases():
    args = parse(
        build_parser(), ["create", "crr", "r", "-p", "web-0", "--containers", "a, b", "-u", "5", "-m", "0"]
    )
    assert (args.name, args.pod, args.unready_grace, args.min_started) == ("r", "web-0", 5, 0)
    assert createcrr.parse_containers(args.containers) == ("a", "b")
    assert parse(build_parser(), ["create", "ContainerRecreateRequest", "r", "--pod=x"]).pod == "x"
    with pytest.raises(CreateCRRError, match="--pod is required"):
        CreateCRROptions("r", "").validate()
