"""PodProbeMarker and NodePodProbe: the validating webhook's rules and the CRDs."""

import copy

import pytest

from kruise.api import nodepodprobe as npp
from kruise.api import podprobemarker as ppm
from kruise.api.crdgen import build_crd
from kruise.api.schemacheck import check

PROBE = {
    "name": "Healthy",
    "containerName": "main",
    "probe": {"exec": {"command": ["/bin/sh", "-c", "/healthy.sh"]}, "initialDelaySeconds": 10},
    "podConditionType": "game.kruise.io/healthy",
    "markerPolicy": [
        {
            "state": "Succeeded",
            "labels": {"gameserver-idle": "true"},
            "annotations": {"controller.kubernetes.io/pod-deletion-cost": "-10"},
        },
        {"state": "Failed", "labels": {"gameserver-idle": "false"}},
    ],
}
BASE = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "PodProbeMarker",
    "metadata": {"name": "game-server-probe", "namespace": "ns"},
    "spec": {"selector": {"matchLabels": {"app": "game-server"}}, "probes": [PROBE]},
}


def _probe(**changes) -> dict:
    probe = copy.deepcopy(PROBE)
    probe.update(changes)
    return {k: v for k, v in probe.items() if v is not None}


def _errors(spec_changes: dict, old: dict | None = None) -> list[str]:
    obj = copy.deepcopy(BASE)
    obj["spec"].update(spec_changes)
    parsed = ppm.PodProbeMarker.model_validate(obj)
    previous = ppm.PodProbeMarker.model_validate(old) if old else None
    return [str(e) for e in ppm.validate(parsed, previous)]


def test_valid_object_round_trips_and_fits_the_schema():
    assert _errors({}) == []
    assert ppm.PodProbeMarker.model_validate(BASE).to_dict() == BASE
    schema = build_crd(ppm.CRD)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert check(BASE, schema).ok
    assert schema["properties"]["spec"]["required"] == ["probes", "selector"]


@pytest.mark.parametrize(
    ("spec_changes", "expected"),
    [
        (
            {"selector": None},
            ["spec.selector: Invalid value: null: empty Selector is not valid for PodProbeMarker."],
        ),
        (
            {"selector": {}},
            ["spec.selector: Invalid value: {}: empty selector is not valid for podProbeMarker."],
        ),
        ({"probes": []}, ["spec.probes: Invalid value: []: empty probes is not valid for PodProbeMarker."]),
        (
            {"probes": [_probe(name="a#b")]},
            ["spec.probes: Invalid value: \"a#b\": probe name can't contains '#'."],
        ),
        (
            {"probes": [_probe(name="")]},
            ['spec.probes: Invalid value: "": probe name can\'t be empty in PodProbeMarker.'],
        ),
        (
            {"probes": [_probe(containerName="")]},
            ['spec.probes: Invalid value: "": probe containerName can\'t be empty in PodProbeMarker.'],
        ),
        (
            {"probes": [_probe(name="Ready")]},
            ['spec.probes: Invalid value: "Ready": probe name can\'t be Ready'],
        ),
        (
            {"probes": [_probe(), _probe(podConditionType="other")]},
            ['spec.probes: Invalid value: "Healthy": probe name must be unique in PodProbeMarker.'],
        ),
        (
            {"probes": [_probe(), _probe(name="Other")]},
            [
                'spec.probes: Invalid value: "game.kruise.io/healthy": '
                "podConditionType game.kruise.io/healthy must be unique in podProbeMarker"
            ],
        ),
        (  # 1.9 serves HTTP probes; the port must be valid as for tcpSocket
            {"probes": [_probe(probe={"httpGet": {"port": 0}})]},
            ["spec.probe.httpGet.port: Invalid value: 0: must be between 1 and 65535, inclusive"],
        ),
        (
            {"probes": [_probe(probe={"exec": {"command": ["x"]}, "tcpSocket": {"port": 80}})]},
            ["spec.probe.tcpSocket: Forbidden: may not specify more than 1 handler type"],
        ),
        ({"probes": [_probe(probe={})]}, ["spec.probe: Required value: must specify a handler type"]),
        ({"probes": [_probe(probe={"exec": {}})]}, ["spec.probe.exec.command: Required value"]),
        (
            {"probes": [_probe(probe={"tcpSocket": {"host": "1.2.3.4", "port": 0}})]},
            [
                'spec.probe.tcpSocket.host: Invalid value: "1.2.3.4": host field in probes is not allowed',
                "spec.probe.tcpSocket.port: Invalid value: 0: must be between 1 and 65535, inclusive",
            ],
        ),
        ({"probes": [_probe(probe={"tcpSocket": {"port": "http"}})]}, []),
        (
            {"probes": [_probe(probe={"tcpSocket": {"port": "HTTP"}})]},
            [
                'spec.probe.tcpSocket.port: Invalid value: "HTTP": '
                "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
                'spec.probe.tcpSocket.port: Invalid value: "HTTP": must contain at least one letter (a-z)',
            ],
        ),
        (
            {"probes": [_probe(probe={"exec": {"command": ["x"]}, "periodSeconds": -1})]},
            ["spec.probe.periodSeconds: Invalid value: -1: must be greater than or equal to 0"],
        ),
        (
            {"probes": [_probe(podConditionType=None, markerPolicy=None)]},
            None,
        ),
        (
            {
                "probes": [
                    _probe(
                        markerPolicy=[
                            {"state": "Succeeded", "labels": {"a": "b"}},
                            {"state": "Succeeded", "labels": {"a": "c"}},
                        ]
                    )
                ]
            },
            ['spec.markerPolicy: Invalid value: "Succeeded": marker policy state must be unique.'],
        ),
        (
            {"probes": [_probe(markerPolicy=[{"state": "Unknown", "labels": {"a": "b"}}])]},
            ["spec.markerPolicy.state: Required value: marker policy state must be 'True' or 'False'"],
        ),
        (
            {"probes": [_probe(markerPolicy=[{"state": "Failed"}])]},
            ["spec.markerPolicy: Required value: marker policy annotations or labels can't be both empty"],
        ),
    ],
)
def test_rules(spec_changes, expected):
    errors = _errors(spec_changes)
    if expected is None:
        assert len(errors) == 1
        assert errors[0].endswith("podConditionType and markerPolicy cannot be empty at the same time")
    else:
        assert errors == expected


def test_bad_marker_label_value_is_reported():
    errors = _errors(
        {"probes": [_probe(markerPolicy=[{"state": "Succeeded", "labels": {"idle": "not ok"}}])]}
    )
    assert len(errors) == 1
    assert errors[0].startswith('spec.markerPolicy.labels: Invalid value: "not ok": a valid label must be')


def test_selector_is_immutable():
    changed = {"selector": {"matchLabels": {"app": "other"}}}
    assert _errors(changed, old=BASE) == [
        'selector: Invalid value: {"matchLabels":{"app":"other"}}: selector must be immutable'
    ]
    assert _errors({"probes": [_probe(podConditionType="game.kruise.io/other")]}, old=BASE) == []


def test_node_pod_probe_model_and_crd():
    obj = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "NodePodProbe",
        "metadata": {"name": "node1"},
        "spec": {
            "podProbes": [
                {
                    "name": "game-0",
                    "namespace": "ns",
                    "uid": "u1",
                    "IP": "10.0.0.5",
                    "probes": [
                        {
                            "name": "game-server-probe#Healthy",
                            "containerName": "main",
                            "probe": PROBE["probe"],
                        }
                    ],
                }
            ]
        },
        "status": {
            "podProbeStatuses": [
                {
                    "name": "game-0",
                    "namespace": "ns",
                    "uid": "u1",
                    "probeStates": [
                        {"name": "game-server-probe#Healthy", "state": "Succeeded", "message": "ok"}
                    ],
                }
            ]
        },
    }
    parsed = npp.NodePodProbe.model_validate(obj)
    assert parsed.spec.pod_probes[0].ip == "10.0.0.5"
    assert parsed.to_dict() == obj
    crd = build_crd(npp.CRD)
    assert crd["spec"]["scope"] == "Cluster"
    (version,) = crd["spec"]["versions"]
    assert "additionalPrinterColumns" not in version
    assert check(obj, version["schema"]["openAPIV3Schema"]).ok


def test_http_probes_are_accepted_as_in_1_9() -> None:
    assert ppm.validate_probe({"httpGet": {"port": 8080, "path": "/healthz"}}, "spec.probe") == []
