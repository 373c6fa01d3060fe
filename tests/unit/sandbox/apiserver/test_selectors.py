import pytest

from kruise.sandbox.apiserver.errors import StatusError
from kruise.sandbox.apiserver.selectors import (
    format_label_selector,
    labels_match,
    parse_field_selector,
    parse_label_selector,
    selector_from_label_selector,
)

LABELS = {"app": "web", "tier": "front", "env": "prod"}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("", True),
        ("app=web", True),
        ("app==web", True),
        ("app!=web", False),
        ("app=db", False),
        ("app", True),
        ("!app", False),
        ("!missing", True),
        ("missing!=x", True),
        ("env in (prod, staging)", True),
        ("env notin (prod)", False),
        ("missing notin (x)", True),
        ("missing in (x)", False),
        ("app=web,tier in (front),!missing", True),
        ("app=web,tier=back", False),
    ],
)
def test_label_selector_terms(selector, expected):
    assert labels_match(parse_label_selector(selector), LABELS) is expected


def test_label_selector_rejects_garbage():
    with pytest.raises(StatusError) as exc:
        parse_label_selector("a b c")
    assert exc.value.code == 400


def test_label_selector_object_and_format():
    sel = {"matchLabels": {"b": "2", "a": "1"}, "matchExpressions": [{"key": "c", "operator": "Exists"}]}
    reqs = selector_from_label_selector(sel)
    assert labels_match(reqs, {"a": "1", "b": "2", "c": ""})
    assert not labels_match(reqs, {"a": "1", "b": "2"})
    assert format_label_selector(sel) == "a=1,b=2,c"
    assert selector_from_label_selector(None) is None


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("metadata.name=p1", True),
        ("metadata.name!=p1", False),
        ("spec.nodeName=n1,status.phase=Running", True),
        ("spec.nodeName=", False),
        ("metadata.namespace=default", True),
    ],
)
def test_field_selector_on_pods(selector, expected):
    pod = {
        "metadata": {"name": "p1", "namespace": "default"},
        "spec": {"nodeName": "n1"},
        "status": {"phase": "Running"},
    }
    assert parse_field_selector(selector, "pods", "Pod", "v1")(pod) is expected


def test_field_selector_events_and_unknown_field():
    ev = {"metadata": {"name": "e"}, "involvedObject": {"kind": "Pod", "name": "p1", "uid": "u"}}
    assert parse_field_selector("involvedObject.name=p1,involvedObject.kind=Pod", "events", "Event", "v1")(ev)
    with pytest.raises(StatusError, match=r"field label not supported: spec\.nodeName"):
        parse_field_selector("spec.nodeName=x", "configmaps", "ConfigMap", "v1")


def test_events_v1_selects_on_regarding_and_refuses_involved_object():
    ev = {
        "metadata": {"name": "e", "namespace": "ns"},
        "regarding": {"kind": "CloneSet", "name": "cs", "namespace": "ns"},
        "reason": "SuccessfulCreate",
        "type": "Normal",
        "reportingController": "cloneset-controller",
        "deprecatedSource": {"component": "cloneset-controller"},
    }
    match = parse_field_selector(
        "regarding.kind=CloneSet,regarding.name=cs,regarding.namespace=ns,reason=SuccessfulCreate,type=Normal",
        "events",
        "Event",
        "events.k8s.io/v1",
    )
    assert match(ev)
    assert parse_field_selector("source=cloneset-controller", "events", "Event", "events.k8s.io/v1")(ev)
    assert not parse_field_selector("regarding.kind=Pod", "events", "Event", "events.k8s.io/v1")(ev)
    with pytest.raises(StatusError, match=r"field label not supported: involvedObject\.kind"):
        parse_field_selector("involvedObject.kind=Pod", "events", "Event", "events.k8s.io/v1")
    with pytest.raises(StatusError, match=r"field label not supported: regarding\.kind"):
        parse_field_selector("regarding.kind=Pod", "events", "Event", "v1")
