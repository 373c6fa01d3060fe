"""The emulator as real kubectl 1.37 sees it: discovery, apply (client- and server-side), get in
every output, patch flavours, scale, label, wait, finalizers, CRDs with schemas and columns."""

from __future__ import annotations

import asyncio
import json
import re

CRD = r"""
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.demo.example.com
spec:
  group: demo.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd], categories: [all]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas,
              labelSelectorPath: .status.selector}
    additionalPrinterColumns:
    - {name: Desired, type: integer, jsonPath: .spec.replicas}
    - {name: Zone, type: string, jsonPath: .metadata.labels.demo\.example\.com/zone}
    - {name: Color, type: string, jsonPath: .spec.color, priority: 1}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer, minimum: 0, default: 1}
              color: {type: string, enum: [red, blue], default: red}
          status:
            type: object
            properties:
              replicas: {type: integer}
              selector: {type: string}
"""


async def install_crd(kubectl):
    await kubectl("apply", "-f", "-", stdin=CRD)
    await kubectl("wait", "--for=condition=Established", "crd/widgets.demo.example.com", "--timeout=10s")


async def test_discovery_is_clean(kubectl):
    result = await kubectl("api-resources")
    assert result.err == ""
    lines = result.out.splitlines()
    assert any(line.split()[:2] == ["deployments", "deploy"] for line in lines)
    assert any(line.startswith("customresourcedefinitions") and "crd,crds" in line for line in lines)
    version = (await kubectl("version", "-o", "json")).json()
    assert version["serverVersion"]["minor"] == "36"
    assert (await kubectl("get", "ns")).out.split()[:3] == ["NAME", "STATUS", "AGE"]


async def test_apply_client_side_then_table_yaml_jsonpath(kubectl):
    manifest = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: nginx:1.25, env: [{name: A, value: "1"}]}]}
"""
    assert "deployment.apps/web created" in (await kubectl("apply", "-f", "-", stdin=manifest)).out
    again = await kubectl("apply", "-f", "-", stdin=manifest.replace("1.25", "1.26"))
    assert "deployment.apps/web configured" in again.out and again.err == ""
    table = (await kubectl("get", "deploy")).out.splitlines()
    assert table[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert table[1].split()[:2] == ["web", "0/1"]
    obj = (await kubectl("get", "deploy", "web", "-o", "json")).json()
    assert obj["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.26"
    assert obj["metadata"]["generation"] == 2
    assert obj["spec"]["strategy"]["rollingUpdate"]["maxSurge"] == "25%"
    assert obj["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    assert "kubectl.kubernetes.io/last-applied-configuration" in obj["metadata"]["annotations"]
    image = await kubectl("get", "deploy", "web", "-o", "jsonpath={.spec.template.spec.containers[0].image}")
    assert image.out == "nginx:1.26"
    assert "replicas: 1" in (await kubectl("get", "deploy/web", "-o", "yaml")).out


async def test_server_side_apply_and_field_managers(kubectl):
    manifest = """
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data: {a: "1", b: "2"}
"""
    assert "serverside-applied" in (await kubectl("apply", "--server-side", "-f", "-", stdin=manifest)).out
    await kubectl("apply", "--server-side", "-f", "-", stdin=manifest.replace(', b: "2"', ""))
    obj = (await kubectl("get", "cm", "cfg", "-o", "json", "--show-managed-fields")).json()
    assert obj["data"] == {"a": "1"}
    assert [(m["manager"], m["operation"]) for m in obj["metadata"]["managedFields"]] == [
        ("kubectl", "Apply")
    ]


async def test_patch_types_label_and_describe(kubectl):
    await kubectl("run", "pod1", "--image=busybox", "--labels=app=x")
    await kubectl("patch", "pod", "pod1", "-p", '{"metadata":{"labels":{"tier":"a"}}}')
    await kubectl("patch", "pod", "pod1", "--type", "merge", "-p", '{"metadata":{"annotations":{"k":"v"}}}')
    await kubectl(
        "patch",
        "pod",
        "pod1",
        "--type",
        "json",
        "-p",
        '[{"op":"replace","path":"/spec/containers/0/image","value":"busybox:2"}]',
    )
    await kubectl("label", "pod", "pod1", "extra=yes")
    pod = (await kubectl("get", "pod", "pod1", "-o", "json")).json()
    assert pod["metadata"]["labels"] == {"app": "x", "tier": "a", "extra": "yes"}
    assert pod["metadata"]["annotations"] == {"k": "v"}
    assert pod["spec"]["containers"][0]["image"] == "busybox:2"
    assert pod["spec"]["restartPolicy"] == "Always" and pod["spec"]["serviceAccountName"] == "default"
    assert len(pod["spec"]["tolerations"]) == 2
    bad = await kubectl("patch", "pod", "pod1", "-p", '{"spec":{"restartPolicy":"Never"}}', check=False)
    assert bad.code != 0 and "pod updates may not change fields" in bad.err
    described = (await kubectl("describe", "pod", "pod1")).out
    assert "Name:" in described and "pod1" in described and "busybox:2" in described
    assert (await kubectl("get", "po", "-l", "extra=yes", "-o", "name")).out.strip() == "pod/pod1"
    assert (await kubectl("get", "po", "--field-selector", "status.phase=Running", "-o", "name")).out == ""


async def test_crd_apply_validation_columns_scale_and_smp_415(kubectl):
    await install_crd(kubectl)
    widget = (
        "apiVersion: demo.example.com/v1\nkind: Widget\n"
        "metadata: {name: w1, labels: {demo.example.com/zone: z1}}\nspec: {replicas: 2}\n"
    )
    await kubectl("apply", "-f", "-", stdin=widget)
    obj = (await kubectl("get", "wd", "w1", "-o", "json")).json()
    assert obj["spec"] == {"replicas": 2, "color": "red"} and obj["metadata"]["generation"] == 1
    table = (await kubectl("get", "widgets", "-o", "wide")).out.splitlines()
    assert table[0].split() == ["NAME", "DESIRED", "ZONE", "COLOR", "AGE"]
    # ZONE reads a label key with escaped dots, as upstream CRR's NODE column does
    assert table[1].split()[:4] == ["w1", "2", "z1", "red"]
    invalid = await kubectl(
        "apply", "-f", "-", stdin=widget.replace("replicas: 2", "replicas: -1"), check=False
    )
    assert (
        'The Widget "w1" is invalid: spec.replicas: Invalid value: -1: spec.replicas in body '
        "should be greater than or equal to 0"
    ) in invalid.err
    unknown = await kubectl(
        "apply", "-f", "-", stdin=widget.replace("replicas: 2", "replicas: 2, bogus: 1"), check=False
    )
    assert unknown.code != 0 and 'unknown field "spec.bogus"' in unknown.err
    assert "scaled" in (await kubectl("scale", "widget/w1", "--replicas=5")).out
    assert (await kubectl("get", "widget", "w1", "-o", "jsonpath={.spec.replicas}")).out == "5"
    smp = await kubectl(
        "patch", "widget", "w1", "--type", "strategic", "-p", '{"spec":{"replicas":1}}', check=False
    )
    assert smp.code != 0 and "unknown format" in smp.err
    await kubectl(
        "patch",
        "widget",
        "w1",
        "--subresource",
        "status",
        "--type",
        "merge",
        "-p",
        '{"status":{"replicas":5},"spec":{"replicas":9}}',
    )
    obj = (await kubectl("get", "widget", "w1", "-o", "json")).json()
    assert obj["status"]["replicas"] == 5 and obj["spec"]["replicas"] == 5
    crd_table = (await kubectl("get", "crd", "widgets.demo.example.com")).out.splitlines()
    assert crd_table[0].split() == ["NAME", "CREATED", "AT"]
    assert re.fullmatch(r"widgets\.demo\.example\.com\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", crd_table[1])
    await kubectl("delete", "crd", "widgets.demo.example.com")
    gone = await kubectl("get", "widgets", check=False)
    assert gone.code != 0


async def test_delete_with_finalizer_and_wait(kubectl):
    await kubectl(
        "apply",
        "-f",
        "-",
        stdin="apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  finalizers: [example.com/hold]\n",
    )
    await kubectl("delete", "cm", "held", "--wait=false")
    obj = (await kubectl("get", "cm", "held", "-o", "json")).json()
    assert obj["metadata"]["deletionTimestamp"]
    waiter = asyncio.create_task(kubectl("wait", "--for=delete", "cm/held", "--timeout=20s"))
    await kubectl(
        "patch", "cm", "held", "--type", "json", "-p", '[{"op":"remove","path":"/metadata/finalizers"}]'
    )
    await waiter
    assert (await kubectl("get", "cm", "held", check=False)).code != 0


async def test_wait_for_condition_and_watch(kubectl, emulator):
    await kubectl("run", "p", "--image=busybox")
    watch = asyncio.create_task(
        kubectl("get", "pods", "-w", "--request-timeout=3s", "-o", "name", check=False)
    )
    waiter = asyncio.create_task(kubectl("wait", "--for=condition=Ready", "pod/p", "--timeout=20s"))
    status = {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
    await kubectl("patch", "pod", "p", "--subresource", "status", "--type", "merge", "-p", json.dumps(status))
    assert "condition met" in (await waiter).out
    assert "pod/p" in (await watch).out


async def test_namespace_deletion_removes_contents(kubectl):
    await kubectl("apply", "-f", "-", stdin="apiVersion: v1\nkind: Namespace\nmetadata: {name: tmp}\n")
    await kubectl(
        "apply", "-n", "tmp", "-f", "-", stdin="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
    )
    await kubectl("delete", "ns", "tmp", "--timeout=20s")
    assert (await kubectl("get", "ns", "tmp", check=False)).code != 0
    missing = await kubectl(
        "apply",
        "-n",
        "tmp",
        "-f",
        "-",
        check=False,
        stdin="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
    )
    assert 'namespaces "tmp" not found' in missing.err
