"""`set image`: argument grammar and the guarded JSON patch."""

from __future__ import annotations

import pytest

from kruise.cli.kubectl_kruise import kinds, setimage
from kruise.cli.kubectl_kruise.setimage import SetImageError, image_patch, split_arguments


def test_split_resources_then_pairs():
    parsed = split_arguments(["cloneset/a", "asts/b", "main=nginx:2", "side=busybox"])
    assert parsed.resources == ["cloneset/a", "asts/b"]
    assert parsed.images == {"main": "nginx:2", "side": "busybox"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["main=nginx"], "one or more resources must be specified"),
        (["cloneset/a"], "at least one image update is required"),
        (["cloneset/a", "main=x", "asts/b"], "all resources must be specified before image changes: asts/b"),
        (["cloneset/a", "=x"], 'invalid image format: "=x"'),
        (["cloneset/a", "main="], 'invalid image format: "main="'),
        (["cloneset/a", "*=x", "main=y"], "all containers are already specified by \\*"),
    ],
)
def test_split_errors(args, message):
    with pytest.raises(SetImageError, match=message):
        split_arguments(args)


CLONESET = {
    "spec": {
        "template": {
            "spec": {
                "initContainers": [{"name": "init", "image": "busybox"}],
                "containers": [{"name": "main", "image": "nginx:1"}, {"name": "side", "image": "envoy:1"}],
            }
        }
    }
}


def test_patch_tests_names_and_skips_unchanged_images():
    ops, missing = image_patch(kinds.CLONESET, CLONESET, {"side": "envoy:2", "main": "nginx:1", "ghost": "x"})
    assert ops == [
        {"op": "test", "path": "/spec/template/spec/containers/1/name", "value": "side"},
        {"op": "replace", "path": "/spec/template/spec/containers/1/image", "value": "envoy:2"},
    ]
    assert missing == ["ghost"]


def test_wildcard_covers_init_containers_too():
    ops, missing = image_patch(kinds.DEPLOYMENT, CLONESET, {"*": "nginx:1"})
    assert missing == []
    assert [op["path"] for op in ops if op["op"] == "replace"] == [
        "/spec/template/spec/initContainers/0/image",
        "/spec/template/spec/containers/1/image",
    ]


def test_sidecarset_containers_live_in_spec():
    sidecarset = {"spec": {"containers": [{"name": "sidecar1", "image": "centos:6"}]}}
    ops, _ = image_patch(setimage.SIDECARSET, sidecarset, {"sidecar1": "centos:7"})
    assert ops[-1] == {"op": "replace", "path": "/spec/containers/0/image", "value": "centos:7"}
    assert kinds.resolve_type("sidecarset", setimage.TARGETS) is setimage.SIDECARSET
