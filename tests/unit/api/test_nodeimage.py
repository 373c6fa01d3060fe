"""NodeImage: upstream's defaults, webhook rules, CRD and the seed YAML."""

import copy
import re
from pathlib import Path

import pytest
import yaml

from kruise.api import nodeimage as ni
from kruise.api.crdgen import build_crd
from kruise.api.schemacheck import check

SEED = Path("/work/shared/reference/seeds/002_4051790c1ba74477.txt")
NOW = "2026-11-23T00:00:00Z"


def _tag(**changes) -> dict:
    tag = {"tag": "latest", "createdAt": NOW, "pullPolicy": {"ttlSecondsAfterFinished": 300}}
    tag.update(changes)
    return tag


def _errors(images: dict) -> list[str]:
    obj = ni.NodeImage.model_validate({"metadata": {"name": "node1"}, "spec": {"images": images}})
    return [str(e) for e in ni.validate(obj)]


def test_defaults_stamp_created_at_and_pull_policy():
    obj = ni.NodeImage.model_validate(
        {"metadata": {"name": "node1"}, "spec": {"images": {"ubuntu": {"tags": [{"tag": "22.04"}]}}}}
    )
    ni.set_defaults(obj, now=NOW)
    (tag,) = obj.to_dict()["spec"]["images"]["ubuntu"]["tags"]
    assert tag == {"tag": "22.04", "createdAt": NOW, "pullPolicy": {"timeoutSeconds": 600, "backoffLimit": 3}}


def test_defaults_keep_user_values():
    obj = ni.NodeImage.model_validate(
        {
            "spec": {
                "images": {
                    "ubuntu": {
                        "tags": [_tag(pullPolicy={"timeoutSeconds": 10, "ttlSecondsAfterFinished": 1})]
                    }
                }
            }
        }
    )
    ni.set_defaults(obj, now="2030-01-01T00:00:00Z")
    tag = obj.spec.images["ubuntu"].tags[0]
    assert tag.created_at == NOW
    assert (tag.pull_policy.timeout_seconds, tag.pull_policy.backoff_limit) == (10, 3)


@pytest.mark.parametrize(
    ("images", "expected"),
    [
        ({"ubuntu": {"tags": [_tag(), _tag(tag="22.04", version=2)]}}, []),
        ({"": {"tags": [_tag()]}}, ["spec.images[]: Required value: image name can not be empty"]),
        (
            {"ubuntu": {"tags": [_tag(tag="")]}},
            ["spec.images[ubuntu].tags[0].tag: Required value: tag for image ubuntu can not be empty"],
        ),
        (
            {"ubuntu": {"tags": [_tag(), _tag()]}},
            ['spec.images[ubuntu].tags[1].tag: Duplicate value: "latest"'],
        ),
        (
            {"ubuntu": {"tags": [_tag(createdAt=None)]}},
            [
                "spec.images[ubuntu].tags[0].createdAt: Required value: "
                "createAt field for ubuntu/latest can not be empty"
            ],
        ),
        (
            {"ubuntu": {"tags": [_tag(version=-1)]}},
            [
                "spec.images[ubuntu].tags[0].version: Invalid value: -1: "
                "version for ubuntu/latest can not be less than 0"
            ],
        ),
        (
            {"ubuntu": {"tags": [_tag(pullPolicy=None)]}},
            [
                "spec.images[ubuntu].tags[0].pullPolicy: Required value: "
                "pullPolicy field for ubuntu/latest must set"
            ],
        ),
        (
            {"ubuntu": {"tags": [_tag(pullPolicy={"timeoutSeconds": 1})]}},
            [
                "spec.images[ubuntu].tags[0].pullPolicy.ttlSecondsAfterFinished: Required value: "
                "pullPolicy.ttlSecondsAfterFinished for ubuntu/latest must set"
            ],
        ),
        (
            {f"img{i}": {"tags": [_tag()]} for i in range(257)},
            ["spec.images: Invalid value: 257: spec images length 257 can not be more than 256"],
        ),
    ],
)
def test_webhook_rules(images, expected):
    assert _errors(images) == expected


def test_crd_is_cluster_scoped_with_upstream_columns():
    crd = build_crd(ni.CRD)
    assert crd["spec"]["scope"] == "Cluster"
    alpha, beta = crd["spec"]["versions"]
    assert (alpha["name"], alpha["storage"], beta["name"], beta["storage"]) == (
        "v1alpha1",
        True,
        "v1beta1",
        False,
    )  # both served, v1alpha1 stores (what controllers read; docs/api.md)
    assert alpha["additionalPrinterColumns"] == beta["additionalPrinterColumns"]
    assert crd["spec"]["conversion"]["strategy"] == "Webhook"
    version = alpha
    columns = [(c["name"], c["jsonPath"]) for c in version["additionalPrinterColumns"]]
    assert columns == [
        ("DESIRED", ".status.desired"),
        ("PULLING", ".status.pulling"),
        ("SUCCEED", ".status.succeeded"),
        ("FAILED", ".status.failed"),
        ("AGE", ".metadata.creationTimestamp"),
    ]


def test_seed_object_and_its_spec_edit_are_accepted():
    """The seed shows an empty NodeImage, then the `spec.images` edit that pre-pulls ubuntu:latest."""
    blocks = re.findall(r"```\n(.*?)```", SEED.read_text(), re.S)
    (shown,) = [b for b in blocks if "kind: NodeImage" in b]
    obj = yaml.safe_load("\n".join(line for line in shown.splitlines() if not line.startswith("➜")))
    (edit,) = [b for b in blocks if "images:" in b and "ubuntu:" in b]
    spec_edit = yaml.safe_load(edit.replace("......", ""))
    schema = build_crd(ni.CRD)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    for candidate in (obj, {**copy.deepcopy(obj), **spec_edit}):
        assert check(candidate, schema).ok
        parsed = ni.NodeImage.model_validate(candidate)
        ni.set_defaults(parsed, now=NOW)
        assert ni.validate(parsed) == []
        assert check(parsed.to_dict(), schema).ok
