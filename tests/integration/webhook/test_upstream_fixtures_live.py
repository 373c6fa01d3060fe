"""Objects upstream OpenKruise 1.9 wrote into etcd are read and converted by kruise-py with nothing lost.

Each fixture in tests/fixtures/upstream-1.9 is one object as upstream v1.9.0 stores it: at upstream's
storage version (v1beta1 for the kinds API set 1.9 stores there, v1alpha1 for CloneSet), with the
defaults upstream's webhook fills, the annotations kubectl and upstream's webhook add, and a status as
upstream's controller writes it. The fixture is put straight into the emulator's storage (as a cluster
that ran upstream would hold it), then read through the emulator at every version API set 1.9 serves:
the versions other than storage go through kruise-webhook's real `/convert`. Converting back with the
function `/convert` answers must give the stored object again, field for field, and the stored
version's pydantic model must keep every spec and status field. Nothing is pruned on these reads:
the emulator serves the stored object as it is, and every field of the fixtures is in the 1.9 schemas.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kruise.api.conversion import STASH_ANNOTATION, convert
from kruise.api.crdfiles import SET_DIRS
from kruise.api.registry import by_kind
from kruise.kube.resources import CRDS, ResourceRef
from tests.kit.crd_conversion import kruise_ca_bundle
from tests.kit.polling import until_fetched

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "fixtures" / "upstream-1.9"
NAMES = sorted(path.stem for path in FIXTURES.glob("*.json"))


def fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def crd_of(obj: dict[str, Any]) -> dict[str, Any]:
    """The API set 1.9 CRD (crds/) of the fixture's kind, as shipped."""
    group = obj["apiVersion"].split("/")[0]
    info = by_kind(group, obj["kind"])
    return yaml.safe_load((REPO / SET_DIRS["1.9"] / info.file_name).read_text())


def served(crd: dict[str, Any]) -> list[str]:
    return [version["name"] for version in crd["spec"]["versions"] if version["served"]]


def without_server_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """resourceVersion is the emulator's storage counter, not part of the fixture."""
    out = copy.deepcopy(obj)
    out["metadata"].pop("resourceVersion", None)
    return out


def test_every_storage_v1beta1_kind_and_cloneset_has_a_fixture():
    assert NAMES == [
        "advancedcronjob",
        "broadcastjob",
        "cloneset",
        "daemonset",
        "imagelistpulljob",
        "imagepulljob",
        "nodeimage",
        "sidecarset",
        "statefulset",
    ]
    for name in NAMES:
        obj = fixture(name)
        storage = next(v["name"] for v in crd_of(obj)["spec"]["versions"] if v["storage"])
        assert obj["apiVersion"] == f"apps.kruise.io/{storage}", name


@pytest.mark.parametrize("name", NAMES)
def test_fixture_round_trips_through_convert_and_the_stored_model(name):
    """Both directions of the function `/convert` answers, on its own (CloneSet's v1beta1 is served only
    on API set 2.0, so this is its only way there on 1.9), and the stored version's model."""
    stored = fixture(name)
    group, version = stored["apiVersion"].split("/")
    other = "v1alpha1" if version == "v1beta1" else "v1beta1"
    there = convert(stored, f"{group}/{other}")
    assert there["apiVersion"] == f"{group}/{other}"
    assert convert(there, stored["apiVersion"]) == stored
    model = by_kind(group, stored["kind"]).version(version).model.model_validate(stored)
    dumped = model.model_dump(mode="json", by_alias=True, exclude_unset=True)
    assert dumped["spec"] == stored["spec"]
    assert dumped["status"] == stored["status"]
    assert dumped["metadata"].get("annotations") == stored["metadata"].get("annotations")


@pytest.mark.parametrize("name", NAMES)
async def test_seeded_fixture_is_served_at_every_version_with_nothing_lost(live_webhook, emulator, name):
    stored = fixture(name)
    group, version = stored["apiVersion"].split("/")
    crd = crd_of(stored)
    plural = crd["spec"]["names"]["plural"]
    namespaced = crd["spec"]["scope"] == "Namespaced"
    await live_webhook.kubectl(
        "apply", "-f", str(REPO / SET_DIRS["1.9"] / by_kind(group, stored["kind"]).file_name)
    )
    await live_webhook.kubectl("wait", "--for=condition=Established", f"crd/{crd['metadata']['name']}")
    if crd["spec"].get("conversion", {}).get("strategy") == "Webhook":
        ca = await kruise_ca_bundle(live_webhook.client)
        await until_fetched(
            lambda: live_webhook.client.get(CRDS, crd["metadata"]["name"]),
            lambda got: got["spec"]["conversion"]["webhook"]["clientConfig"].get("caBundle") == ca,
            message=f"kruise-webhook's CA in {crd['metadata']['name']}'s conversion webhook",
        )
    emulator.server.store.put((group, plural), copy.deepcopy(stored), "ADDED")
    namespace = stored["metadata"].get("namespace")

    for served_version in served(crd):
        ref = ResourceRef(group, served_version, plural, namespaced, stored["kind"])
        got = await live_webhook.client.get(ref, stored["metadata"]["name"], namespace)
        assert got["apiVersion"] == f"{group}/{served_version}"
        back = without_server_fields(convert(got, stored["apiVersion"]))
        assert back == stored, f"{name} read at {served_version} and converted back to {version}"
        if served_version == version:
            assert STASH_ANNOTATION not in got["metadata"].get("annotations", {})
        else:  # the emulator's answer is kruise-webhook's conversion, not a relabelled stored object
            assert without_server_fields(got) == convert(stored, got["apiVersion"])
