"""EphemeralJob: the validating webhook's ephemeral-container rules and the CRD."""

import copy

import pytest

from kruise.api import ephemeraljob as ejob
from kruise.api.crdgen import build_crd
from kruise.api.schemacheck import check

CONTAINER = {
    "name": "ephemeral",
    "image": "busybox:latest",
    "imagePullPolicy": "IfNotPresent",
    "terminationMessagePolicy": "File",
    "command": ["sleep", "3600"],
}
BASE = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "EphemeralJob",
    "metadata": {"name": "ejob-demo", "namespace": "default"},
    "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "replicas": 2,
        "parallelism": 1,
        "template": {"ephemeralContainers": [CONTAINER]},
        "ttlSecondsAfterFinished": 60,
    },
}


def _errors(*containers: dict) -> list[str]:
    obj = copy.deepcopy(BASE)
    obj["spec"]["template"]["ephemeralContainers"] = list(containers)
    return [str(e) for e in ejob.validate(ejob.EphemeralJob.model_validate(obj))]


def _c(**changes) -> dict:
    container = copy.deepcopy(CONTAINER)
    container.update(changes)
    return {k: v for k, v in container.items() if v is not None}


def test_valid_object_round_trips_and_fits_the_schema():
    assert _errors(CONTAINER) == []
    parsed = ejob.EphemeralJob.model_validate(BASE)
    assert parsed.to_dict() == BASE
    schema = build_crd(ejob.CRD)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert check(BASE, schema).ok
    assert schema["properties"]["spec"]["required"] == ["selector", "template"]


@pytest.mark.parametrize(
    ("containers", "expected"),
    [
        ((_c(name=None),), ["ephemeralContainers[0].name: Required value"]),
        ((_c(image=None),), ["ephemeralContainers[0].image: Required value"]),
        ((_c(imagePullPolicy=None),), ["ephemeralContainers[0].imagePullPolicy: Required value"]),
        (
            (_c(terminationMessagePolicy=None),),
            ["ephemeralContainers[0].terminationMessagePolicy: Required value"],
        ),
        (
            (_c(imagePullPolicy="Sometimes"),),
            [
                'ephemeralContainers[0].imagePullPolicy: Unsupported value: "Sometimes": '
                'supported values: "Always", "IfNotPresent", "Never"'
            ],
        ),
        (
            (_c(image=" busybox"),),
            [
                'ephemeralContainers[0].image: Invalid value: " busybox": '
                "must not have leading or trailing whitespace"
            ],
        ),
        ((_c(), _c()), ['ephemeralContainers[1].name: Duplicate value: "ephemeral"']),
        (
            (_c(resources={"limits": {"cpu": "1"}}, lifecycle={"preStop": {"exec": {"command": ["x"]}}}),),
            [
                "ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container",
                "ephemeralContainers[0].lifecycle: Forbidden: cannot be set for an Ephemeral Container",
            ],
        ),
        (
            (_c(ports=[{"containerPort": 80, "protocol": "TCP"}]),),
            ["ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container"],
        ),
        (
            (_c(ports=[{"containerPort": 0}]),),
            [
                "ephemeralContainers[0].ports[0].containerPort: Required value",
                "ephemeralContainers[0].ports[0].protocol: Required value",
                "ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container",
            ],
        ),
        (
            (_c(volumeMounts=[{"name": "data", "mountPath": "/d", "subPath": "x"}]),),
            [
                "ephemeralContainers[0].volumeMounts[0].subPath: Forbidden: "
                "cannot be set for an Ephemeral Container"
            ],
        ),
    ],
)
def test_rules(containers, expected):
    assert _errors(*containers) == expected


def test_bad_container_name():
    errors = _errors(_c(name="Debug_1"))
    assert len(errors) == 1
    assert errors[0].startswith(
        'ephemeralContainers[0].name: Invalid value: "Debug_1": a lowercase RFC 1123 label'
    )


def test_crd_metadata_and_printer_columns():
    crd = build_crd(ejob.CRD)
    assert crd["spec"]["names"]["shortNames"] == ["ejob"]
    (version,) = crd["spec"]["versions"]
    columns = [(c["name"], c["jsonPath"]) for c in version["additionalPrinterColumns"]]
    assert columns == [
        ("STATUS", ".status.phase"),
        ("MATCH", ".status.match"),
        ("SUCCEED", ".status.succeeded"),
        ("FAILED", ".status.failed"),
        ("RUNNING", ".status.running"),
        ("WAITING", ".status.waiting"),
        ("AGE", ".metadata.creationTimestamp"),
    ]


def test_status_uses_upstream_wire_names():
    status = ejob.EphemeralJobStatus.model_validate(
        {"phase": "Running", "match": 3, "running": 1, "waiting": 2}
    )
    assert status.matches == 3
    assert status.to_dict() == {"phase": "Running", "match": 3, "running": 1, "waiting": 2}
