"""RBAC, scheduling.k8s.io and networking.k8s.io are served like kube-apiserver 1.36 serves them:
discovered by kubectl, created by its typed generators (protobuf bodies), defaulted, printed by
`kubectl get`, and validated where an update may not change a field. Authorization itself stays
allow-all: the objects are stored, not enforced."""

from __future__ import annotations

import json

import pytest


async def test_discovery_lists_the_groups_and_kinds(kubectl):
    out = (await kubectl("api-resources", "-o", "wide")).out
    rows = {line.split()[0]: line for line in out.splitlines()[1:]}
    for plural, group_version, namespaced in [
        ("roles", "rbac.authorization.k8s.io/v1", "true"),
        ("rolebindings", "rbac.authorization.k8s.io/v1", "true"),
        ("clusterroles", "rbac.authorization.k8s.io/v1", "false"),
        ("clusterrolebindings", "rbac.authorization.k8s.io/v1", "false"),
        ("priorityclasses", "scheduling.k8s.io/v1", "false"),
        ("ingresses", "networking.k8s.io/v1", "true"),
        ("ingressclasses", "networking.k8s.io/v1", "false"),
        ("networkpolicies", "networking.k8s.io/v1", "true"),
        ("poddisruptionbudgets", "policy/v1", "true"),
        ("mutatingwebhookconfigurations", "admissionregistration.k8s.io/v1", "false"),
        ("validatingwebhookconfigurations", "admissionregistration.k8s.io/v1", "false"),
    ]:
        assert plural in rows, f"{plural} missing from discovery:\n{out}"
        assert group_version in rows[plural] and f" {namespaced} " in rows[plural]
    assert "pc " in rows["priorityclasses"] and "netpol" in rows["networkpolicies"]
    versions = (await kubectl("api-versions")).out.split()
    assert {"rbac.authorization.k8s.io/v1", "scheduling.k8s.io/v1", "networking.k8s.io/v1"} <= set(versions)


async def test_create_role_and_bindings(kubectl):
    await kubectl("create", "namespace", "rb")
    await kubectl(
        "-n", "rb", "create", "role", "reader", "--verb=get,list", "--resource=pods,deployments.apps"
    )
    role = (await kubectl("-n", "rb", "get", "role", "reader", "-o", "json")).json()
    assert role["rules"] == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]},
        {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "list"]},
    ]
    await kubectl(
        "-n", "rb", "create", "rolebinding", "rb1", "--role=reader", "--user=alice", "--serviceaccount=rb:sa"
    )
    binding = (await kubectl("-n", "rb", "get", "rolebinding", "rb1", "-o", "json")).json()
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"}
    assert {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"} in binding["subjects"]
    assert {"kind": "ServiceAccount", "name": "sa", "namespace": "rb"} in binding["subjects"]

    await kubectl("create", "clusterrole", "cr", "--verb=get", "--resource=nodes")
    await kubectl("create", "clusterrolebinding", "crb", "--clusterrole=cr", "--group=devs")
    table = (await kubectl("get", "clusterrolebinding", "crb", "-o", "wide")).out
    header, row = table.splitlines()[:2]
    assert header.split()[:3] == ["NAME", "ROLE", "AGE"] and "GROUPS" in header
    assert row.split()[:2] == ["crb", "ClusterRole/cr"] and "devs" in row
    roles = (await kubectl("-n", "rb", "get", "roles")).out
    assert roles.splitlines()[0].split() == ["NAME", "CREATED", "AT"]


async def test_binding_role_ref_is_immutable(kubectl):
    await kubectl("create", "clusterrole", "a", "--verb=get", "--resource=pods")
    await kubectl("create", "clusterrole", "b", "--verb=get", "--resource=pods")
    await kubectl("create", "clusterrolebinding", "bind", "--clusterrole=a", "--user=u")
    patch = json.dumps(
        {"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "b"}}
    )
    result = await kubectl("patch", "clusterrolebinding", "bind", "--type=merge", "-p", patch, check=False)
    assert result.code != 0
    assert "roleRef: Invalid value" in result.err and "cannot change roleRef" in result.err
    bad = await kubectl(
        "create",
        "-f",
        "-",
        stdin=json.dumps(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": "bad"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "a"},
            }
        ),
        check=False,
    )
    assert bad.code != 0
    assert 'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"' in bad.err


async def test_priority_class(kubectl):
    await kubectl("create", "priorityclass", "high", "--value=1000", "--description=important")
    pc = (await kubectl("get", "pc", "high", "-o", "json")).json()
    assert (pc["value"], pc["preemptionPolicy"], pc["description"]) == (
        1000,
        "PreemptLowerPriority",
        "important",
    )
    row = (await kubectl("get", "priorityclass", "high")).out.splitlines()[1].split()
    assert row[:3] == ["high", "1000", "false"] and row[-1] == "PreemptLowerPriority"
    changed = await kubectl("patch", "pc", "high", "--type=merge", "-p", '{"value": 5}', check=False)
    assert changed.code != 0 and "value: Forbidden: may not be changed in an update." in changed.err


async def test_ingress_ingressclass_and_networkpolicy(kubectl):
    await kubectl("create", "namespace", "net")
    ingress_class = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "IngressClass",
        "metadata": {"name": "nginx"},
        "spec": {"controller": "k8s.io/ingress-nginx"},
    }
    await kubectl("apply", "-f", "-", stdin=json.dumps(ingress_class))
    row = (await kubectl("get", "ingressclass", "nginx")).out.splitlines()[1].split()
    assert row[:3] == ["nginx", "k8s.io/ingress-nginx", "<none>"]
    await kubectl(
        "-n",
        "net",
        "create",
        "ingress",
        "web",
        "--class=nginx",
        "--rule=foo.com/bar=svc1:8080",
    )
    ing = (await kubectl("-n", "net", "get", "ing", "web", "-o", "json")).json()
    rule = ing["spec"]["rules"][0]
    assert rule["host"] == "foo.com"
    path = rule["http"]["paths"][0]
    assert path["path"] == "/bar" and path["pathType"] == "Exact"
    assert path["backend"]["service"] == {"name": "svc1", "port": {"number": 8080}}
    row = (await kubectl("-n", "net", "get", "ingress", "web")).out.splitlines()[1].split()
    assert row[:3] == ["web", "nginx", "foo.com"]

    await kubectl(
        "apply",
        "-f",
        "-",
        stdin=json.dumps(
            {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "NetworkPolicy",
                "metadata": {"name": "deny", "namespace": "net"},
                "spec": {
                    "podSelector": {"matchLabels": {"app": "web"}},
                    "egress": [{"ports": [{"port": 53}]}],
                },
            }
        ),
    )
    np = (await kubectl("-n", "net", "get", "netpol", "deny", "-o", "json")).json()
    assert np["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert np["spec"]["egress"][0]["ports"][0] == {"port": 53, "protocol": "TCP"}
    row = (await kubectl("-n", "net", "get", "networkpolicy")).out.splitlines()[1].split()
    assert row[:2] == ["deny", "app=web"]


@pytest.mark.parametrize("kind", ["role", "networkpolicy", "ingress"])
async def test_namespaced_kinds_go_with_their_namespace(kubectl, kind):
    await kubectl("create", "namespace", "gone")
    manifests = {
        "role": {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "rules": []},
        "networkpolicy": {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "spec": {"podSelector": {}},
        },
        "ingress": {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "Ingress",
            "spec": {"defaultBackend": {"service": {"name": "s", "port": {"number": 80}}}},
        },
    }
    obj = {**manifests[kind], "metadata": {"name": "x", "namespace": "gone"}}
    await kubectl("apply", "-f", "-", stdin=json.dumps(obj))
    await kubectl("delete", "namespace", "gone", "--wait=true", timeout=60)
    left = await kubectl("-n", "gone", "get", kind, "x", check=False)
    assert left.code != 0 and "NotFound" in left.err
