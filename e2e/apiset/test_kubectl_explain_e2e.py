"""Real `kubectl explain` on Kruise kinds prints the fields' descriptions (issue 26: it printed
`<no description>` for every field). kubectl reads them from the apiserver's OpenAPI v3 documents, which
carry the installed CRDs' schemas; the text it must show is the models' own, as crdgen writes it."""

from __future__ import annotations

import pytest
from harness import Cluster

from kruise.api.cloneset import CloneSetUpdateStrategy
from kruise.api.crdgen import description_text
from kruise.api.sidecarset import SidecarContainer, SidecarSetSpec

pytestmark = pytest.mark.e2e


def described(model: type, field: str) -> str:
    """The field's description as kubectl prints it, with kubectl's line wrapping undone."""
    return description_text(model.model_fields[field].description or "")


def unwrapped(text: str) -> str:
    return " ".join(text.split())


async def test_explain_cloneset_partition(cluster: Cluster):
    _, out = await cluster.kubectl("explain", "clonesets.spec.updateStrategy.partition")
    assert "KIND:       CloneSet" in out, out
    assert "FIELD: partition" in out, out
    assert described(CloneSetUpdateStrategy, "partition") in unwrapped(out), out


async def test_explain_sidecarset_containers(cluster: Cluster):
    _, out = await cluster.kubectl("explain", "sidecarsets.spec.containers")
    assert "KIND:       SidecarSet" in out, out
    assert "FIELD: containers <[]Object>" in out, out
    text = unwrapped(out)
    assert described(SidecarSetSpec, "containers") in text, out
    # the Kruise fields of a sidecar container are listed with their own descriptions
    assert described(SidecarContainer, "pod_inject_policy") in text, out
    assert "<no description>" not in out, out
