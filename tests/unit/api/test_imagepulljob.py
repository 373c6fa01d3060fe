"""ImagePullJob and image references: upstream's defaults, webhook rules, CRD and the seed YAML."""

import copy
import re
from pathlib import Path

import pytest
import yaml

from kruise.api import imagepulljob as ipj
from kruise.api.crdgen import build_crd
from kruise.api.imageref import ImageReferenceError, normalize
from kruise.api.schemacheck import check

SEED = Path("/work/shared/reference/seeds/002_4051790c1ba74477.txt")
BASE = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "ImagePullJob",
    "metadata": {"name": "job-with-always", "namespace": "default"},
    "spec": {"image": "nginx:1.9.1", "completionPolicy": {"type": "Always"}},
}


def _obj(**spec_changes) -> dict:
    obj = copy.deepcopy(BASE)
    obj["spec"].update(spec_changes)
    return obj


def _errors(obj: dict) -> list[str]:
    job = ipj.ImagePullJob.model_validate(obj)
    ipj.set_defaults(job)
    return [str(e) for e in ipj.validate(job)]


@pytest.mark.parametrize(
    ("ref", "full"),
    [
        ("nginx", "docker.io/library/nginx"),
        ("nginx:1.9.1", "docker.io/library/nginx:1.9.1"),
        ("library/ubuntu:latest", "docker.io/library/ubuntu:latest"),
        ("index.docker.io/foo/bar", "docker.io/foo/bar"),
        ("localhost/app:v1", "localhost/app:v1"),
        ("registry.example.com:5000/team/app:v1.2-rc_3", "registry.example.com:5000/team/app:v1.2-rc_3"),
        ("Registry.Example.com/app", "Registry.Example.com/app"),
        ("busybox@sha256:" + "a" * 64, "docker.io/library/busybox@sha256:" + "a" * 64),
        ("a__b-c/e---f", "docker.io/a__b-c/e---f"),
    ],
)
def test_valid_image_references_normalize(ref, full):
    assert normalize(ref) == full


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("a" * 64, f"invalid repository name ({'a' * 64}), cannot specify 64-byte hexadecimal strings"),
        ("Nginx", "invalid reference format: repository name must be lowercase"),
        ("nginx:", "invalid reference format"),
        ("nginx:-bad", "invalid reference format"),
        ("-nginx", "invalid reference format"),
        ("nginx@sha256:abc", "invalid reference format"),
        ("nginx@md5:" + "a" * 32, "unsupported digest algorithm"),
        ("nginx@sha256:" + "a" * 63 + "aa", "invalid checksum digest length"),
        ("docker.io/" + "a" * 250, "repository name must not be more than 255 characters"),
    ],
)
def test_invalid_image_references(ref, message):
    with pytest.raises(ImageReferenceError) as err:
        normalize(ref)
    assert str(err.value) == message


def test_defaults_match_upstream():
    job = ipj.ImagePullJob.model_validate(BASE)
    ipj.set_defaults(job)
    out = job.to_dict()
    assert out["spec"]["pullPolicy"] == {"timeoutSeconds": 600, "backoffLimit": 3}
    assert out["spec"]["imagePullPolicy"] == "IfNotPresent"
    assert out["spec"]["completionPolicy"] == {"type": "Always"}
    assert out["metadata"]["finalizers"] == ["apps.kruise.io/deletion-protection"]
    ipj.set_defaults(job)
    assert job.metadata.finalizers == ["apps.kruise.io/deletion-protection"]


def test_defaults_without_protection_and_with_empty_completion_type():
    obj = copy.deepcopy(BASE)
    del obj["spec"]["completionPolicy"]
    job = ipj.ImagePullJob.model_validate(obj)
    ipj.set_defaults(job, add_protection=False)
    assert job.metadata.finalizers is None
    assert job.to_dict()["spec"]["completionPolicy"] == {"type": "Always"}


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"selector": {"names": ["node-1", "node-2"]}}, []),
        ({"selector": {"matchLabels": {"node-type": "xxx"}}}, []),
        ({"podSelector": {"matchLabels": {"app": "web"}}}, []),
        (
            {"selector": {"names": ["n1"], "matchLabels": {"a": "b"}}},
            ["spec.selector: Forbidden: can not set both names and labelSelector in this spec.selector"],
        ),
        (
            {"selector": {"names": ["n1", "n1"]}},
            ['spec.selector.names: Invalid value: ["n1","n1"]: duplicated name in selector names'],
        ),
        (
            {"selector": {"names": ["n1"]}, "podSelector": {"matchLabels": {"a": "b"}}},
            ["spec.podSelector: Forbidden: can not set both selector and podSelector"],
        ),
        ({"image": ""}, ["spec.image: Required value: image can not be empty"]),
        (
            {"image": "Nginx:1"},
            [
                'spec.image: Invalid value: "Nginx:1": invalid image Nginx:1: '
                "invalid reference format: repository name must be lowercase"
            ],
        ),
        ({"completionPolicy": {"type": "Always", "activeDeadlineSeconds": 600}}, []),
        (
            {"completionPolicy": {"type": "Always", "activeDeadlineSeconds": 599}},
            [
                "spec.completionPolicy.activeDeadlineSeconds: Invalid value: 599: completionPolicy."
                "activeDeadlineSeconds must be greater than pullPolicy.timeoutSeconds(default 600)"
            ],
        ),
        (
            {
                "completionPolicy": {"type": "Always", "activeDeadlineSeconds": 100},
                "pullPolicy": {"timeoutSeconds": 60},
            },
            [],
        ),
        ({"completionPolicy": {"type": "Never"}}, []),
        (
            {"completionPolicy": {"type": "Never", "ttlSecondsAfterFinished": 5}},
            [
                "spec.completionPolicy: Forbidden: activeDeadlineSeconds and ttlSecondsAfterFinished "
                "can only work with Always CompletionPolicyType"
            ],
        ),
        (
            {"completionPolicy": {"type": "Sometimes"}},
            [
                'spec.completionPolicy.type: Invalid value: "Sometimes": '
                "unknown type of completionPolicy: Sometimes"
            ],
        ),
    ],
)
def test_webhook_rules(changes, expected):
    assert _errors(_obj(**changes)) == expected


def test_bad_label_selector_is_reported():
    errors = _errors(_obj(selector={"matchExpressions": [{"key": "a", "operator": "Near"}]}))
    assert len(errors) == 1
    assert "invalid selector: " in errors[0]
    assert "not a valid selector operator" in errors[0]


def test_crd_metadata_and_printer_columns():
    crd = build_crd(ipj.CRD)
    assert crd["metadata"]["name"] == "imagepulljobs.apps.kruise.io"
    assert "shortNames" not in crd["spec"]["names"]
    alpha, beta = crd["spec"]["versions"]
    assert (alpha["name"], alpha["storage"], beta["name"], beta["storage"]) == (
        "v1alpha1",
        True,
        "v1beta1",
        False,
    )  # both served, v1alpha1 stores (what controllers read; docs/api.md)
    # upstream's v1beta1 (what kubectl prints, its preferred version) drops MESSAGE
    assert alpha["additionalPrinterColumns"][:-1] == beta["additionalPrinterColumns"]
    assert crd["spec"]["conversion"]["strategy"] == "Webhook"
    version = alpha
    columns = [(c["name"], c["jsonPath"]) for c in version["additionalPrinterColumns"]]
    assert columns == [
        ("TOTAL", ".status.desired"),
        ("ACTIVE", ".status.active"),
        ("SUCCEED", ".status.succeeded"),
        ("FAILED", ".status.failed"),
        ("AGE", ".metadata.creationTimestamp"),
        ("MESSAGE", ".status.message"),
    ]


def test_seed_example():
    """The seed is schema-valid, but sets both `names` and `matchLabels` (its own comment says "only one"),
    which upstream's webhook rejects; with either one alone it is accepted."""
    blocks = re.findall(r"```\n(.*?)```", SEED.read_text(), re.S)
    (seed,) = [yaml.safe_load(b) for b in blocks if "kind: ImagePullJob" in b]
    schema = build_crd(ipj.CRD)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert check(seed, schema).ok
    assert _errors(seed) == [
        "spec.selector: Forbidden: can not set both names and labelSelector in this spec.selector"
    ]
    for drop in ("names", "matchLabels"):
        variant = copy.deepcopy(seed)
        del variant["spec"]["selector"][drop]
        assert _errors(variant) == []
        job = ipj.ImagePullJob.model_validate(variant)
        ipj.set_defaults(job)
        assert check(job.to_dict(), schema).ok
