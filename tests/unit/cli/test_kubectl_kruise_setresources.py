"""`set resources`: flag parsing (kubectl's wording) and the guarded per-container JSON patch."""

from __future__ import annotations

import jsonpatch
import pytest

from kruise.cli.kubectl_kruise.setresources import (
    SetResourcesError,
    SetResourcesOptions,
    options_from_flags,
    parse_resource_list,
    resources_patch,
)


def test_parse_resource_list_canonicalises_quantities():
    assert parse_resource_list("cpu=0.5,memory=1.5Gi") == {"cpu": "500m", "memory": "1536Mi"}
    assert parse_resource_list("") == {}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("cpu", "Invalid argument syntax cpu, expected <resource>=<value>"),
        ("cpu=1=2", "Invalid argument syntax cpu=1=2, expected <resource>=<value>"),
        ("cpu=1,", "Invalid argument syntax , expected <resource>=<value>"),
        ("cpu=lots", "quantities must match the regular expression"),
    ],
)
def test_parse_resource_list_errors(spec, message):
    with pytest.raises(SetResourcesError, match=message):
        parse_resource_list(spec)


def test_limits_or_requests_required():
    with pytest.raises(SetResourcesError, match="you must specify an update to requests or limits"):
        options_from_flags("", "", "*")


def test_options_keep_limits_and_requests_apart():
    options = options_from_flags("cpu=200m", "memory=64Mi", "main")
    assert options == SetResourcesOptions({"cpu": "200m"}, {"memory": "64Mi"}, "main")


CLONESET = {
    "spec": {
        "template": {
            "spec": {
                "initContainers": [{"name": "init", "image": "busybox"}],
                "containers": [
                    {
                        "name": "main",
                        "image": "nginx",
                        "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
                    },
                    {"name": "side", "image": "envoy"},
                ],
            }
        }
    }
}


def test_patch_merges_into_matching_regular_containers_only():
    options = SetResourcesOptions(limits={"cpu": "500m"}, requests={"cpu": "100m"})
    ops, matched = resources_patch(CLONESET, options)
    assert matched
    out = jsonpatch.apply_patch(CLONESET, ops)
    init, main, side = (
        out["spec"]["template"]["spec"]["initContainers"][0],
        *out["spec"]["template"]["spec"]["containers"],
    )
    assert "resources" not in init
    assert main["resources"] == {"limits": {"cpu": "500m", "memory": "1Gi"}, "requests": {"cpu": "100m"}}
    assert side["resources"] == {"limits": {"cpu": "500m"}, "requests": {"cpu": "100m"}}
    assert ops[0] == {"op": "test", "path": "/spec/template/spec/containers/0/name", "value": "main"}


def test_patch_guards_against_reordered_containers():
    ops, _ = resources_patch(CLONESET, SetResourcesOptions({"cpu": "2"}, {}, "side"))
    swapped = {"spec": {"template": {"spec": {"containers": [{"name": "x"}, {"name": "y"}]}}}}
    with pytest.raises(jsonpatch.JsonPatchTestFailed):
        jsonpatch.apply_patch(swapped, ops)


def test_wildcard_and_unmatched_and_unchanged():
    ops, matched = resources_patch(CLONESET, SetResourcesOptions({"cpu": "2"}, {}, "s*"))
    assert matched and [op["path"] for op in ops] == [
        "/spec/template/spec/containers/1/name",
        "/spec/template/spec/containers/1/resources",
    ]
    assert resources_patch(CLONESET, SetResourcesOptions({"cpu": "2"}, {}, "init")) == ([], False)
    assert resources_patch(CLONESET, SetResourcesOptions({"cpu": "1"}, {}, "main")) == ([], True)
