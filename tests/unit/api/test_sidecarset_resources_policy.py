# ruff: noqa: E501  (exact apiserver messages read best unsplit in the tables below)
"""SidecarSet resourcesPolicy / shareVolumeDevicePolicy: API fields, defaults, CRD schema and the
validating webhook's rules (upstream validateResourcesPolicy)."""

import copy

import pytest

from kruise.api import sidecarset
from kruise.api.crdgen import build_crd
from kruise.api.sidecarset import SidecarSet


def make(containers=None, init=None, **spec):
    body = {
        "selector": {"matchLabels": {"app": "web"}},
        "updateStrategy": {"type": "NotUpdate"},
        "containers": containers if containers is not None else [],
        **spec,
    }
    if init is not None:
        body["initContainers"] = init
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "SidecarSet",
        "metadata": {"name": "s"},
        "spec": body,
    }


def sidecar(policy=None, **extra):
    out = {"name": "proxy", "image": "envoy", **extra}
    if policy is not None:
        out["resourcesPolicy"] = policy
    return out


GOOD = {
    "targetContainersMode": "sum",
    "resourcesExpr": {"limits": {"cpu": "max(cpu*50%, 50m)", "memory": "memory/2"}},
}


def errors(data):
    obj = SidecarSet.model_validate(copy.deepcopy(data))
    sidecarset.set_defaults(obj)
    return [str(e) for e in sidecarset.validate(obj)]


def test_defaulting_fills_the_crd_default_regex_and_keeps_an_explicit_one():
    obj = SidecarSet.model_validate(make([sidecar(GOOD)]))
    sidecarset.set_defaults(obj)
    policy = obj.to_dict()["spec"]["containers"][0]["resourcesPolicy"]
    assert policy == {**GOOD, "targetContainersNameRegex": ".*"}
    explicit = SidecarSet.model_validate(make([sidecar({**GOOD, "targetContainersNameRegex": "^app$"})]))
    sidecarset.set_defaults(explicit)
    assert explicit.spec.containers[0].resources_policy.target_containers_name_regex == "^app$"


def test_round_trip_keeps_both_fields_and_container_dict_drops_them():
    data = make([sidecar(GOOD, shareVolumeDevicePolicy={"type": "enabled"})])
    obj = SidecarSet.model_validate(data)
    assert obj.to_dict()["spec"]["containers"][0]["shareVolumeDevicePolicy"] == {"type": "enabled"}
    core = obj.spec.containers[0].container_dict()
    assert "resourcesPolicy" not in core and "shareVolumeDevicePolicy" not in core
    untouched = SidecarSet.model_validate(make([sidecar()]))
    sidecarset.set_defaults(untouched)
    # absent stays absent: the sidecarset hash of existing SidecarSets does not move
    assert "shareVolumeDevicePolicy" not in untouched.to_dict()["spec"]["containers"][0]


def test_crd_schema_requires_mode_and_expr_with_enum_and_default():
    crd = build_crd(sidecarset.CRD)
    for version in crd["spec"]["versions"]:
        container = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["containers"][
            "items"
        ]
        policy = container["properties"]["resourcesPolicy"]
        assert policy["required"] == ["resourcesExpr", "targetContainersMode"]
        assert policy["properties"]["targetContainersMode"]["enum"] == ["sum", "max"]
        assert policy["properties"]["targetContainersNameRegex"]["default"] == ".*"
        expr = policy["properties"]["resourcesExpr"]["properties"]
        assert set(expr["limits"]["properties"]) == {"cpu", "memory"}
        assert container["properties"]["shareVolumeDevicePolicy"]["properties"]["type"]["type"] == "string"


def test_valid_policies_pass():
    assert errors(make([sidecar(GOOD)])) == []
    requests_only = {"targetContainersMode": "max", "targetContainersNameRegex": "^app-[0-9]+$",
                     "resourcesExpr": {"requests": {"cpu": "cpu", "memory": "min(memory, 1Gi)"}}}  # fmt: skip
    assert errors(make([sidecar(requests_only)])) == []
    native = sidecar(GOOD, name="logger", restartPolicy="Always")
    assert errors(make([sidecar()], init=[native])) == []


@pytest.mark.parametrize(
    ("policy", "extra", "expected"),
    [
        (
            GOOD,
            {"resources": {"limits": {"cpu": "1"}}},
            [
                'spec[0].resourcesPolicy: Invalid value: {"resourcesExpr":{"limits":{"cpu":"max(cpu*50%, 50m)","memory":"memory/2"}},"targetContainersMode":"sum","targetContainersNameRegex":".*"}: resourcesPolicy and resources cannot be configured together'
            ],
        ),
        (
            {**GOOD, "targetContainersNameRegex": ""},
            {},
            ["spec[0].resourcesPolicy.targetContainersNameRegex: Required value: invalid empty regex"],
        ),
        (
            {**GOOD, "targetContainersNameRegex": "app-("},
            {},
            [
                'spec[0].resourcesPolicy.targetContainersNameRegex: Invalid value: "app-(": invalid regex pattern: error parsing regexp: missing closing ): `app-(`'
            ],
        ),
        (
            {**GOOD, "targetContainersMode": "avg"},
            {},
            [
                'spec[0].resourcesPolicy.targetContainersMode: Unsupported value: "avg": supported values: "sum", "max"'
            ],
        ),
        (
            {"targetContainersMode": "sum", "resourcesExpr": {}},
            {},
            [
                "spec[0].resourcesPolicy.resourcesExpr: Invalid value: {}: at least one of limits or requests must be configured"
            ],
        ),
        (
            {"targetContainersMode": "sum", "resourcesExpr": {"limits": {"cpu": "memory*2"}}},
            {},
            [
                'spec[0].resourcesPolicy.resourcesExpr.limits.cpu: Invalid value: "memory*2": invalid expression: undefined variable: memory'
            ],
        ),
        (
            {"targetContainersMode": "sum", "resourcesExpr": {"requests": {"memory": "memory - 2"}}},
            {},
            [
                'spec[0].resourcesPolicy.resourcesExpr.requests.memory: Invalid value: "memory - 2": invalid expression: calculation result is negative: -1'
            ],
        ),
        (
            {
                "targetContainersMode": "sum",
                "resourcesExpr": {"requests": {"cpu": "100m * 2m", "memory": "max(memory"}},
            },
            {},
            [
                'spec[0].resourcesPolicy.resourcesExpr.requests.cpu: Invalid value: "100m * 2m": invalid expression: multiplication of two quantities',
                'spec[0].resourcesPolicy.resourcesExpr.requests.memory: Invalid value: "max(memory": invalid expression: parse error: syntax error at line 1, col 11',
            ],
        ),
    ],
)
def test_container_policy_errors(policy, extra, expected):
    assert errors(make([sidecar(policy, **extra)])) == expected


def test_init_container_policy_needs_a_native_sidecar():
    plain_init = sidecar(GOOD, name="init")
    assert errors(make([sidecar()], init=[plain_init])) == [
        'spec[0].resourcesPolicy: Invalid value: {"resourcesExpr":{"limits":{"cpu":"max(cpu*50%, 50m)","memory":"memory/2"}},"targetContainersMode":"sum","targetContainersNameRegex":".*"}: resourcesPolicy is only supported for containers with RestartPolicy Always'
    ]
    bad_native = sidecar({**GOOD, "targetContainersNameRegex": ""}, name="init", restartPolicy="Always")
    assert errors(make([sidecar()], init=[bad_native])) == [
        "spec[0].resourcesPolicy.targetContainersNameRegex: Required value: invalid empty regex"
    ]


def test_second_container_is_indexed():
    assert errors(make([sidecar(), sidecar({**GOOD, "targetContainersNameRegex": ""}, name="b")])) == [
        "spec[1].resourcesPolicy.targetContainersNameRegex: Required value: invalid empty regex"
    ]


def test_volume_devices_must_name_a_sidecarset_volume():
    device = {"volumeDevices": [{"name": "disk0", "devicePath": "/dev/nvme1"}]}
    assert errors(make([sidecar(**device)])) == [
        'spec.containers[0].volumeDevices[0].name: Not found: "disk0"'
    ]
    pvc = [{"name": "disk0", "persistentVolumeClaim": {"claimName": "pvc-0"}}]
    assert errors(make([sidecar(**device)], volumes=pvc)) == []
