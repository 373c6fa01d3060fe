"""The two API sets: 1.9 is OpenKruise 1.9.0's served/storage versions, 2.0 the models' full set."""

import importlib

import pytest
import yaml

from kruise.api import apisets
from kruise.api.crdfiles import rendered
from kruise.api.registry import KINDS
from kruise.kube.resources import ResourceRef

# OpenKruise v1.9.0 config/crd/bases, read off the tag: (served versions, storage version)
ONLY_V1ALPHA1 = {
    "clonesets.apps.kruise.io", "uniteddeployments.apps.kruise.io", "podunavailablebudgets.policy.kruise.io",
    "resourcedistributions.apps.kruise.io", "persistentpodstates.apps.kruise.io",
    "workloadspreads.apps.kruise.io", "containerrecreaterequests.apps.kruise.io",
    "ephemeraljobs.apps.kruise.io", "podprobemarkers.apps.kruise.io", "nodepodprobes.apps.kruise.io",
}  # fmt: skip
STORED_V1BETA1 = {
    "broadcastjobs.apps.kruise.io", "advancedcronjobs.apps.kruise.io", "imagepulljobs.apps.kruise.io",
    "imagelistpulljobs.apps.kruise.io", "nodeimages.apps.kruise.io", "daemonsets.apps.kruise.io",
    "sidecarsets.apps.kruise.io", "statefulsets.apps.kruise.io",
}  # fmt: skip


def _crds(api_set):
    return {yaml.safe_load(t)["metadata"]["name"]: yaml.safe_load(t) for t in rendered(api_set).values()}


def _versions(crd):
    return [(v["name"], v["served"], v["storage"]) for v in crd["spec"]["versions"]]


def test_the_1_9_set_is_upstream_1_9_0():
    crds = _crds("1.9")
    assert set(crds) == ONLY_V1ALPHA1 | STORED_V1BETA1
    for name in ONLY_V1ALPHA1:
        assert _versions(crds[name]) == [("v1alpha1", True, True)], name
        assert "conversion" not in crds[name]["spec"], name
    for name in STORED_V1BETA1:
        assert _versions(crds[name]) == [("v1alpha1", True, False), ("v1beta1", True, True)], name
        assert crds[name]["spec"]["conversion"]["strategy"] == "Webhook", name


def test_the_1_9_cloneset_keeps_scale_and_printer_columns():
    version = _crds("1.9")["clonesets.apps.kruise.io"]["spec"]["versions"][0]
    assert version["subresources"]["scale"]["specReplicasPath"] == ".spec.replicas"
    assert [c["name"] for c in version["additionalPrinterColumns"]] == [
        "DESIRED", "UPDATED", "UPDATED_READY", "UPDATED_AVAILABLE", "READY", "TOTAL", "AGE",
        "CONTAINERS", "IMAGES", "SELECTOR",
    ]  # fmt: skip


def test_the_1_9_imagepulljob_columns_differ_per_version_as_upstream():
    v1alpha1, v1beta1 = _crds("1.9")["imagepulljobs.apps.kruise.io"]["spec"]["versions"]
    assert [c["name"] for c in v1alpha1["additionalPrinterColumns"]][-1] == "MESSAGE"
    assert "MESSAGE" not in [c["name"] for c in v1beta1["additionalPrinterColumns"]]


def test_the_2_0_set_is_every_model_version():
    crds = _crds("2.0")
    assert len(crds) == len(KINDS)
    two = [n for n, c in crds.items() if len(c["spec"]["versions"]) == 2]
    assert len(two) == 15
    assert all(c["spec"]["conversion"]["strategy"] == "Webhook" for n, c in crds.items() if n in two)


@pytest.mark.parametrize("value", ["1.9", "2.0", 1.9, 2.0])
def test_parse_accepts_names_and_unquoted_yaml_floats(value):
    assert apisets.parse(value) in ("1.9", "2.0")


def test_parse_names_the_field_and_the_allowed_values():
    with pytest.raises(apisets.APISetError) as err:
        apisets.parse("1.8", field="--api-set")
    assert str(err.value) == '--api-set: Unsupported value: "1.8": supported values: "1.9", "2.0"'


def test_served_versions_per_set():
    assert apisets.served_versions("1.9", "apps.kruise.io", "clonesets") == ("v1alpha1",)
    assert apisets.served_versions("2.0", "apps.kruise.io", "clonesets") == ("v1alpha1", "v1beta1")
    assert apisets.served_versions("1.9", "apps.kruise.io", "widgets") == ()


@pytest.mark.parametrize("api_set", apisets.API_SETS)
def test_every_client_version_is_served_by_both_sets(api_set):
    for info in KINDS:
        assert apisets.client_version(api_set, info.group, info.plural) == apisets.CLIENT_VERSIONS[info.name]


CLIENT_MODULES = (
    "kruise.kube.resources",
    "kruise.webhook.caches",
    "kruise.cli.kubectl_kruise.kinds",
    "kruise.cli.kubectl_kruise.createjob",
    "kruise.cli.kubectl_kruise.createcrr",
    "kruise.cli.kubectl_kruise.setimage",
)


def test_components_talk_the_client_versions():
    """kruise-manager, kruise-webhook, kruise-daemon and kubectl-kruise address Kruise kinds only through
    these ResourceRefs: each names the version both sets serve."""
    seen = 0
    for module_name in CLIENT_MODULES:
        module = importlib.import_module(module_name)
        for ref in vars(module).values():
            if isinstance(ref, ResourceRef) and ref.group.endswith("kruise.io"):
                assert ref.version == apisets.CLIENT_VERSIONS[f"{ref.plural}.{ref.group}"], (module_name, ref)
                seen += 1
    assert seen >= len(KINDS)
