"""checkNodeFitness: node name, affinity, the pod's own tolerations, unschedulable, resources."""

from __future__ import annotations

from bcj_builders import node

from kruise.control.broadcastjob.fitness import (
    REASON_NODE_AFFINITY,
    REASON_NODE_NAME,
    REASON_UNSCHEDULABLE,
    mock_pod_spec,
    template_fits,
    unfit_reason,
)

SPEC = {"containers": [{"name": "main", "image": "busybox"}]}


def test_a_plain_pod_fits_a_plain_node():
    assert unfit_reason(SPEC, node("a")) is None


def test_node_name_must_match():
    assert unfit_reason({**SPEC, "nodeName": "b"}, node("a")) == REASON_NODE_NAME


def test_node_selector_and_required_affinity_must_match():
    assert unfit_reason({**SPEC, "nodeSelector": {"disk": "ssd"}}, node("a")) == REASON_NODE_AFFINITY
    assert unfit_reason({**SPEC, "nodeSelector": {"disk": "ssd"}}, node("a", labels={"disk": "ssd"})) is None


def test_an_untolerated_taint_is_named():
    tainted = node("a", taints=[{"key": "dedicated", "value": "db", "effect": "NoSchedule"}])
    assert unfit_reason(SPEC, tainted) == "node(s) had taint {dedicated: db}, that the pod didn't tolerate"
    tolerating = {**SPEC, "tolerations": [{"key": "dedicated", "operator": "Exists"}]}
    assert unfit_reason(tolerating, tainted) is None


def test_prefer_no_schedule_taints_do_not_matter():
    assert unfit_reason(SPEC, node("a", taints=[{"key": "k", "effect": "PreferNoSchedule"}])) is None


def test_no_daemonset_default_tolerations_are_added():
    """A DaemonSet pod tolerates a not-ready node; a BroadcastJob pod only with its own toleration."""
    not_ready = node("a", taints=[{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}])
    assert unfit_reason(SPEC, not_ready) is not None
    pressure = node("a", taints=[{"key": "node.kubernetes.io/disk-pressure", "effect": "NoSchedule"}])
    assert unfit_reason(SPEC, pressure) is not None


def test_unschedulable_node_needs_the_unschedulable_toleration():
    cordoned = node("a", unschedulable=True)
    assert unfit_reason(SPEC, cordoned) == REASON_UNSCHEDULABLE
    toleration = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
    tolerating = {**SPEC, "tolerations": [toleration]}
    assert unfit_reason(tolerating, cordoned) is None
    assert unfit_reason({**SPEC, "tolerations": [{"operator": "Exists"}]}, cordoned) is None


def test_resources_are_checked_last():
    big = {"containers": [{"name": "m", "resources": {"requests": {"cpu": "8"}}}]}
    assert unfit_reason(big, node("a")) == "Insufficient cpu"
    assert unfit_reason({**big, "nodeName": "b"}, node("a")) == REASON_NODE_NAME


def test_mock_pod_takes_the_nodes_name_so_a_template_node_name_is_ignored():
    template = {"spec": {**SPEC, "nodeName": "elsewhere"}}
    assert mock_pod_spec(template, node("a"))["nodeName"] == "a"
    assert template["spec"]["nodeName"] == "elsewhere"
    assert template_fits(template, node("a"))
