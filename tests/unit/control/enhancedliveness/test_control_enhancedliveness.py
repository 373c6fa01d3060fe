"""EnhancedLivenessProbe: livenessProbes moved into `apps.kruise.io/container-probe-context`, the text as
upstream's webhook writes it (its handler test's expected annotation is reproduced byte for byte)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from kruise.control.enhancedliveness.probecontext import move_liveness_probes, probe_context
from tests.kit.pods import pod

USING = "apps.kruise.io/using-enhanced-liveness"
CONTEXT = "apps.kruise.io/container-probe-context"


def probed_pod(*containers: dict, annotated: bool = True) -> dict:
    """A pod of `containers`, asking for enhanced liveness unless not `annotated`."""
    return pod(
        "pod1", namespace=None, annotations={USING: "true"} if annotated else {}, containers=list(containers)
    )


def probe(handler: dict) -> dict:
    # key order as a Python client would send it, not Go's
    return {"failureThreshold": 3, "initialDelaySeconds": 1000, "periodSeconds": 100, "successThreshold": 2,
            "timeoutSeconds": 5, **handler}  # fmt: skip


def test_upstream_example_text_and_probes_removed():
    c1 = {"name": "c1", "livenessProbe": probe({"httpGet": {"path": "/health", "port": 7001}})}
    c2 = {"name": "c2", "livenessProbe": probe({"tcpSocket": {"port": 7001}})}
    target = probed_pod(c1, c2)
    assert move_liveness_probes(target)
    assert target["metadata"]["annotations"][CONTEXT] == (
        '[{"name":"c1","livenessProbe":{"httpGet":{"path":"/health","port":7001},"initialDelaySeconds":1000,'
        '"timeoutSeconds":5,"periodSeconds":100,"successThreshold":2,"failureThreshold":3}},'
        '{"name":"c2","livenessProbe":{"tcpSocket":{"port":7001},"initialDelaySeconds":1000,'
        '"timeoutSeconds":5,"periodSeconds":100,"successThreshold":2,"failureThreshold":3}}]'
    )
    assert all("livenessProbe" not in c for c in target["spec"]["containers"])


def test_zero_values_are_left_out_as_go_omitempty_does_but_ports_are_kept():
    text = probe_context(
        [
            {
                "name": "c",
                "livenessProbe": {
                    "exec": {"command": ["cat", "/ok"]},
                    "initialDelaySeconds": 0,
                    "grpc": {"port": 0, "service": ""},
                },
            }
        ]
    )
    assert (
        text
        == '[{"name":"c","livenessProbe":{"exec":{"command":["cat","/ok"]},"grpc":{"port":0,"service":""}}}]'
    )


def test_nothing_changes_without_the_annotation_or_without_probes():
    unannotated = probed_pod(
        {"name": "c", "livenessProbe": probe({"tcpSocket": {"port": 80}})}, annotated=False
    )
    assert not move_liveness_probes(unannotated)
    assert "livenessProbe" in unannotated["spec"]["containers"][0]
    bare = probed_pod({"name": "c", "readinessProbe": probe({"tcpSocket": {"port": 80}})})
    assert not move_liveness_probes(bare)
    assert CONTEXT not in bare["metadata"]["annotations"]


def test_only_app_containers_with_a_probe_are_listed_and_other_fields_stay():
    keep = {"name": "plain", "image": "nginx", "readinessProbe": {"tcpSocket": {"port": 80}}}
    init = {"name": "init", "livenessProbe": {"tcpSocket": {"port": 1}}}
    target = probed_pod({"name": "probed", "livenessProbe": {"tcpSocket": {"port": 80}}}, keep)
    target["spec"]["initContainers"] = [init]
    assert move_liveness_probes(target)
    entries = json.loads(target["metadata"]["annotations"][CONTEXT])
    assert [e["name"] for e in entries] == ["probed"]
    assert target["spec"]["containers"][1] == keep
    assert target["spec"]["initContainers"] == [init]


_ints = st.integers(min_value=0, max_value=10_000)


_FIELDS = ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold")


@given(values=st.tuples(*[_ints] * len(_FIELDS)), port=st.integers(1, 65535))
def test_the_annotation_holds_the_same_probe_minus_zero_fields(values, port):
    original = {"tcpSocket": {"port": port}, **dict(zip(_FIELDS, values, strict=True))}
    target = probed_pod({"name": "c", "livenessProbe": dict(original)})
    assert move_liveness_probes(target)
    (entry,) = json.loads(target["metadata"]["annotations"][CONTEXT])
    assert entry["livenessProbe"] == {k: v for k, v in original.items() if v != 0}
