"""Revision tables, the `Pod Template:` block, and which revision undo picks."""

from __future__ import annotations

import pytest

from kruise.cli.kubectl_kruise import history
from kruise.cli.kubectl_kruise.commands import label_selector
from kruise.cli.kubectl_kruise.describe import describe_pod_template, describe_probe
from kruise.control.common.revision import new_cloneset_revision

UID = "uid-1"


def cloneset(image: str, annotations=None) -> dict:
    meta = {"name": "demo", "namespace": "default", "uid": UID}
    if annotations:
        meta["annotations"] = annotations
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": meta,
        "spec": {
            "template": {
                "metadata": {"labels": {"app": "demo"}},
                "spec": {"containers": [{"name": "main", "image": image, "ports": [{"containerPort": 80}]}]},
            }
        },
    }


def revisions() -> list[dict]:
    return [
        new_cloneset_revision(cloneset("nginx:1"), 1, None),
        new_cloneset_revision(cloneset("nginx:2", {history.CHANGE_CAUSE_ANNOTATION: "bump to 2"}), 2, None),
        new_cloneset_revision(cloneset("nginx:3"), 3, None),
    ]


def test_controller_revisions_keep_only_the_owners_in_order():
    foreign = new_cloneset_revision({**cloneset("x"), "metadata": {"name": "other", "uid": "uid-2"}}, 9, None)
    listed = history.controller_revisions([revisions()[2], foreign, *revisions()[:2]], UID)
    assert [r.number for r in listed] == [1, 2, 3]
    assert listed[1].change_cause == "bump to 2"
    assert listed[0].template["spec"]["containers"][0]["image"] == "nginx:1"
    assert "$patch" not in listed[0].template


def test_history_table_is_tab_aligned_like_kubectl():
    table = history.view_history(history.controller_revisions(revisions(), UID))
    assert table == "REVISION  CHANGE-CAUSE\n1         <none>\n2         bump to 2\n3         <none>\n"
    assert history.view_history([]) == "No rollout history found."


def test_history_of_one_revision_describes_its_template():
    text = history.view_history(history.controller_revisions(revisions(), UID), 2)
    assert text.startswith(
        "Pod Template:\n  Labels:\tapp=demo\n  Containers:\n   main:\n    Image:\tnginx:2\n"
    )
    with pytest.raises(history.HistoryError, match="unable to find the specified revision"):
        history.view_history(history.controller_revisions(revisions(), UID), 7)


def test_find_revision():
    listed = history.controller_revisions(revisions(), UID)
    assert history.find_revision(listed, 0).number == 2
    assert history.find_revision(listed, 1).number == 1
    with pytest.raises(history.HistoryError, match="unable to find specified revision 5 in history"):
        history.find_revision(listed, 5)
    with pytest.raises(history.HistoryError, match="unable to find specified revision -1 in history"):
        history.find_revision(listed, -1)
    with pytest.raises(history.HistoryError, match="no last revision to roll back to"):
        history.find_revision(listed[:1], 0)


def test_templates_equal_ignores_encoding_and_hash_label():
    template = cloneset("nginx:1")["spec"]["template"]
    stored = history.controller_revisions(revisions(), UID)[0].template
    assert history.templates_equal(template, stored)
    hashed = {**template, "metadata": {"labels": {"app": "demo", "pod-template-hash": "abc"}}}
    assert history.templates_equal(template, hashed)
    assert not history.templates_equal(template, cloneset("nginx:2")["spec"]["template"])


def replicaset(number, image, uid=UID, cause=None):
    annotations = {history.REVISION_ANNOTATION: str(number), "deployment.kubernetes.io/desired-replicas": "3"}
    if cause:
        annotations[history.CHANGE_CAUSE_ANNOTATION] = cause
    return {
        "metadata": {
            "name": f"web-{number}",
            "annotations": annotations,
            "ownerReferences": [{"uid": uid, "controller": True}],
        },
        "spec": {
            "template": {
                "metadata": {"labels": {"app": "web", "pod-template-hash": f"h{number}"}},
                "spec": {"containers": [{"name": "web", "image": image}]},
            }
        },
    }


def test_deployment_history_and_rollback_patch():
    listed = history.replicaset_revisions(
        [replicaset(2, "b", cause="second"), replicaset(1, "a"), replicaset(5, "x", uid="other")], UID
    )
    assert [(r.number, r.change_cause) for r in listed] == [(1, ""), (2, "second")]
    deployment = {"metadata": {"annotations": {history.REVISION_ANNOTATION: "2", "team": "x"}}}
    target = history.deployment_rollback_target(listed, listed[1].template, 0, "web")
    assert target.number == 1
    patch = history.deployment_rollback_patch(deployment, target)
    assert patch[0] == {
        "op": "replace",
        "path": "/spec/template",
        "value": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "a"}]},
        },
    }
    # Deployment-only annotations stay, the ReplicaSet's others come back, `team` goes (as kubectl).
    assert patch[1]["value"] == {history.REVISION_ANNOTATION: "2"}
    with pytest.raises(history.HistoryError, match='no rollout history found for deployment "web"'):
        history.deployment_rollback_target(listed[:1], {}, 0, "web")


FULL_TEMPLATE = {
    "metadata": {"labels": {"b": "2", "a": "1"}, "annotations": {"note": "x"}},
    "spec": {
        "serviceAccountName": "sa",
        "initContainers": [{"name": "init", "image": "busybox", "command": ["sh", "-c", "echo hi"]}],
        "containers": [
            {
                "name": "main",
                "image": "nginx",
                "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 53, "protocol": "UDP"}],
                "args": ["--v=2"],
                "resources": {"limits": {"memory": "1Gi", "cpu": "1"}, "requests": {"cpu": "500m"}},
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}},
                "env": [
                    {"name": "PLAIN", "value": "v"},
                    {"name": "FROM_SECRET", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
                    {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                ],
                "volumeMounts": [{"name": "data", "mountPath": "/data", "readOnly": True, "subPath": "x"}],
            }
        ],
        "volumes": [{"name": "data", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "c"}}],
        "nodeSelector": {"zone": "a"},
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}, {"operator": "Exists"}],
    },
}

EXPECTED = (
    "Pod Template:\n"
    "  Labels:\ta=1\n"
    "\tb=2\n"
    "  Annotations:\tnote: x\n"
    "  Service Account:\tsa\n"
    "  Init Containers:\n"
    "   init:\n"
    "    Image:\tbusybox\n"
    "    Port:\t<none>\n"
    "    Host Port:\t<none>\n"
    "    Command:\n"
    "      sh\n"
    "      -c\n"
    "      echo hi\n"
    "    Environment:\t<none>\n"
    "    Mounts:\t<none>\n"
    "  Containers:\n"
    "   main:\n"
    "    Image:\tnginx\n"
    "    Ports:\t80/TCP, 53/UDP\n"
    "    Host Ports:\t0/TCP, 0/UDP\n"
    "    Args:\n"
    "      --v=2\n"
    "    Limits:\n"
    "      cpu:\t1\n"
    "      memory:\t1Gi\n"
    "    Requests:\n"
    "      cpu:\t500m\n"
    "    Readiness:\thttp-get http://:8080/healthz delay=0s timeout=1s period=10s #success=1 #failure=3\n"
    "    Environment:\n"
    "      PLAIN:\tv\n"
    "      FROM_SECRET:\t<set to the key 'k' in secret 's'>\tOptional: false\n"
    "      POD:\t (v1:metadata.name)\n"
    "    Mounts:\n"
    '      /data from data (ro,path="x")\n'
    "  Volumes:\n"
    "   data:\n"
    "    Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n"
    "    Medium:\t\n"
    "    SizeLimit:\t<unset>\n"
    "   cfg:\n"
    "    Type:\tConfigMap (a volume populated by a ConfigMap)\n"
    "    Name:\tc\n"
    "    Optional:\tfalse\n"
    "  Node-Selectors:\tzone=a\n"
    "  Tolerations:\tk:NoSchedule op=Exists\n"
    "\top=Exists\n"
)


def test_describe_pod_template_matches_kubectl_layout():
    assert describe_pod_template(FULL_TEMPLATE) == EXPECTED


def test_describe_minimal_template():
    text = describe_pod_template({"spec": {"containers": [{"name": "c", "image": "i"}]}})
    assert text == (
        "Pod Template:\n  Labels:\t<none>\n  Containers:\n   c:\n    Image:\ti\n    Port:\t<none>\n"
        "    Host Port:\t<none>\n    Environment:\t<none>\n    Mounts:\t<none>\n  Volumes:\t<none>\n"
        "  Node-Selectors:\t<none>\n  Tolerations:\t<none>\n"
    )


@pytest.mark.parametrize(
    ("probe", "text"),
    [
        (
            {"exec": {"command": ["cat", "/tmp/ok"]}, "periodSeconds": 5},
            "exec [cat /tmp/ok] delay=0s timeout=1s period=5s",
        ),
        ({"tcpSocket": {"port": 80}}, "tcp-socket :80 delay=0s"),
        ({"grpc": {"port": 9090}}, "grpc <pod>:9090  delay=0s"),
    ],
)
def test_describe_probe(probe, text):
    assert describe_probe(probe).startswith(text)


@pytest.mark.parametrize(
    ("selector", "query"),
    [
        (None, ""),
        ({"matchLabels": {"b": "2", "a": "1"}}, "a=1,b=2"),
        (
            {
                "matchLabels": {"app": "x"},
                "matchExpressions": [
                    {"key": "tier", "operator": "In", "values": ["web", "api"]},
                    {"key": "env", "operator": "NotIn", "values": ["dev"]},
                    {"key": "canary", "operator": "Exists"},
                    {"key": "legacy", "operator": "DoesNotExist"},
                ],
            },
            "app=x,tier in (api,web),env notin (dev),canary,!legacy",
        ),
    ],
)
def test_label_selector_query(selector, query):
    assert label_selector(selector) == query


def test_revision_template_drops_go_encoder_artifacts():
    template = history.controller_revisions(revisions(), UID)[0].template
    assert "creationTimestamp" not in template["metadata"]
    assert (
        history.template_rollback_patch(history.controller_revisions(revisions(), UID)[0])[0]["value"]
        == template
    )
