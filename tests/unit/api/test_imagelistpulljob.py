"""ImageListPullJob: upstream's defaults, webhook rules and CRD."""

import copy

import pytest

from kruise.api import imagelistpulljob as ilpj
from kruise.api.crdgen import build_crd
from kruise.api.schemacheck import check

BASE = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "ImageListPullJob",
    "metadata": {"name": "pull-list", "namespace": "default"},
    "spec": {"images": ["nginx:1.9.1", "busybox:1.36"], "completionPolicy": {"type": "Always"}},
}


def _errors(**spec_changes) -> list[str]:
    obj = copy.deepcopy(BASE)
    obj["spec"].update(spec_changes)
    job = ilpj.ImageListPullJob.model_validate(obj)
    ilpj.set_defaults(job)
    return [str(e) for e in ilpj.validate(job)]


def test_defaults_match_upstream():
    job = ilpj.ImageListPullJob.model_validate(BASE)
    ilpj.set_defaults(job)
    spec = job.to_dict()["spec"]
    assert spec["pullPolicy"] == {"timeoutSeconds": 600, "backoffLimit": 3}
    assert spec["completionPolicy"] == {"type": "Always"}
    assert "imagePullPolicy" not in spec
    assert job.metadata.finalizers is None


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({}, []),
        ({"selector": {"names": ["a", "b"]}}, []),
        ({"images": []}, ["spec.images: Required value: image can not be empty"]),
        (
            {"images": ["nginx", "busybox", "nginx"]},
            ['spec.images[2]: Invalid value: "nginx": images cannot have duplicate values'],
        ),
        (
            {"images": [f"img{i}" for i in range(256)]},
            ["spec.images: Invalid value: 256: the maximum number of images cannot > 255"],
        ),
        (
            {"images": ["nginx", "UPPER"]},
            [
                'spec.images[1]: Invalid value: "UPPER": invalid image UPPER: '
                "invalid reference format: repository name must be lowercase"
            ],
        ),
        # Unlike ImagePullJob, no deadline-vs-timeout check for Always.
        ({"completionPolicy": {"type": "Always", "activeDeadlineSeconds": 1}}, []),
        (
            {"completionPolicy": {"type": "Never", "activeDeadlineSeconds": 1}},
            [
                "spec.completionPolicy: Forbidden: activeDeadlineSeconds and ttlSecondsAfterFinished "
                "can only work with Always CompletionPolicyType"
            ],
        ),
        (
            {"selector": {"names": ["a"]}, "podSelector": {}},
            ["spec.podSelector: Forbidden: can not set both selector and podSelector"],
        ),
    ],
)
def test_webhook_rules(changes, expected):
    assert _errors(**changes) == expected


def test_crd_and_defaulted_object_fit_the_schema():
    crd = build_crd(ilpj.CRD)
    assert crd["metadata"]["name"] == "imagelistpulljobs.apps.kruise.io"
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
        ("TOTAL", ".status.desired"),
        ("SUCCEEDED", ".status.succeeded"),
        ("COMPLETED", ".status.completed"),
        ("AGE", ".metadata.creationTimestamp"),
    ]
    job = ilpj.ImageListPullJob.model_validate(BASE)
    ilpj.set_defaults(job)
    assert check(job.to_dict(), version["schema"]["openAPIV3Schema"]).ok
