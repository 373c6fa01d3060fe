from datetime import UTC, datetime, timedelta

import pytest

from kruise.sandbox.apiserver.resources import ResourceType
from kruise.sandbox.apiserver.tables import age, human_duration, json_path, to_table


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (119, "119s"),
        (120, "2m"),
        (150, "2m30s"),
        (600, "10m"),
        (3 * 3600, "3h"),
        (3 * 3600 + 600, "3h10m"),
        (9 * 3600, "9h"),
        (50 * 3600, "2d2h"),
        (10 * 86400, "10d"),
        (800 * 86400, "2y70d"),
        (-1, "<invalid>"),
    ],
)
def test_human_duration_matches_apimachinery(seconds, text):
    assert human_duration(seconds) == text


def test_age_from_creation_timestamp():
    created = (datetime.now(UTC) - timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert age({"metadata": {"creationTimestamp": created}}) in ("30s", "31s")


def test_json_path_subset():
    obj = {
        "status": {"conditions": [{"type": "A", "status": "False"}, {"type": "Ready", "status": "True"}]},
        "spec": {"list": [1, 2]},
    }
    assert json_path(obj, '.status.conditions[?(@.type=="Ready")].status') == ["True"]
    assert json_path(obj, ".spec.list[1]") == [2]
    assert json_path(obj, ".spec.list[*]") == [1, 2]
    assert json_path(obj, ".spec.missing") == []


def test_json_path_escaped_dots_name_one_label_key():
    """Upstream's CRR NODE column names a dotted label key; client-go reads `\\.` as a literal dot."""
    obj = {"metadata": {"labels": {"crr.apps.kruise.io/node-name": "node-1", "crr": {"apps": "nested"}}}}
    assert json_path(obj, r".metadata.labels.crr\.apps\.kruise\.io/node-name") == ["node-1"]
    assert json_path(obj, r"{.metadata.labels.crr\.apps}") == []
    assert json_path(obj, ".metadata.labels.crr.apps") == ["nested"]


NODE_LABEL_PATH = r".metadata.labels.crr\.apps\.kruise\.io/node-name"


def test_crr_node_column_shows_the_node_label():
    rt = ResourceType(
        "apps.kruise.io",
        "v1alpha1",
        "containerrecreaterequests",
        "ContainerRecreateRequest",
        True,
        crd_name="containerrecreaterequests.apps.kruise.io",
        printer_columns=[{"name": "NODE", "type": "string", "jsonPath": NODE_LABEL_PATH}],
    )
    crr = {"metadata": {"name": "r", "labels": {"crr.apps.kruise.io/node-name": "node-1"}}}
    assert to_table(rt, [crr], {})["rows"][0]["cells"] == ["r", "node-1"]


def test_crd_printer_columns_and_pod_columns():
    rt = ResourceType(
        "apps.kruise.io",
        "v1alpha1",
        "clonesets",
        "CloneSet",
        True,
        crd_name="clonesets.apps.kruise.io",
        printer_columns=[
            {"name": "DESIRED", "type": "integer", "jsonPath": ".spec.replicas"},
            {"name": "IMAGE", "type": "string", "jsonPath": ".spec.image", "priority": 1},
        ],
    )
    table = to_table(rt, [{"metadata": {"name": "c"}, "spec": {"replicas": 3, "image": "nginx"}}], {})
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "DESIRED", "IMAGE"]
    assert table["columnDefinitions"][2]["priority"] == 1
    assert table["rows"][0]["cells"] == ["c", 3, "nginx"]
    pods = ResourceType("", "v1", "pods", "Pod", True)
    pod = {
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "a"}], "nodeName": "n1"},
        "status": {
            "phase": "Running",
            "podIP": "10.0.0.1",
            "containerStatuses": [{"ready": True, "restartCount": 2, "state": {"running": {}}}],
        },
    }
    cells = to_table(pods, [pod], {})["rows"][0]["cells"]
    assert cells[:4] == ["p", "1/1", "Running", 2]
    assert cells[5:7] == ["10.0.0.1", "n1"]


def test_crd_table_is_name_and_created_at_as_kube_apiserver_prints_it():
    crds = ResourceType(
        "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False
    )
    crd = {"metadata": {"name": "clonesets.apps.kruise.io", "creationTimestamp": "2026-01-02T03:04:05Z"}}
    table = to_table(crds, [crd], {})
    assert [(c["name"], c["type"]) for c in table["columnDefinitions"]] == [
        ("Name", "string"),
        ("Created At", "date"),
    ]
    assert table["rows"][0]["cells"] == ["clonesets.apps.kruise.io", "2026-01-02T03:04:05Z"]
