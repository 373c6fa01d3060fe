"""resourcesPolicy and shareVolumeDevicePolicy through kubectl, the emulator's CRD schema (enum, the
`.*` default) and a live kruise-webhook: the pod comes back with the computed sidecar resources."""

from __future__ import annotations

from test_sidecarset_live import get_json, sidecar_webhook, until

__all__ = ["sidecar_webhook"]  # the fixture, used by name

SIDECARSET = """
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: mesh}
spec:
  selector: {matchLabels: {app: web}}
  containers:
  - name: envoy
    image: envoy
    shareVolumeDevicePolicy: {type: enabled}
    resourcesPolicy:
      targetContainersMode: %(mode)s
      resourcesExpr:
        limits: {cpu: "max(cpu*50%%, 50m)", memory: "memory/2"}
        requests: {cpu: "cpu*10%%"}
"""
POD = """
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default, labels: {app: web}}
spec:
  containers:
  - name: app
    image: nginx
    resources: {limits: {cpu: "1", memory: 1Gi}, requests: {cpu: 500m}}
    volumeDevices: [{name: disk, devicePath: /dev/xvda}]
  - name: worker
    image: worker
    resources: {limits: {cpu: "2", memory: 1Gi}, requests: {cpu: 500m}}
  volumes: [{name: disk, persistentVolumeClaim: {claimName: data}}]
"""


async def test_pod_gets_sidecar_resources_from_its_app_containers(sidecar_webhook):
    kubectl, cache = sidecar_webhook.kubectl, sidecar_webhook.process.sidecarsets
    code, _, err = await kubectl("apply", "-f", "-", stdin=SIDECARSET % {"mode": "avg"}, check=False)
    assert code != 0
    assert 'spec.containers[0].resourcesPolicy.targetContainersMode: Unsupported value: "avg"' in err
    await kubectl.apply(SIDECARSET % {"mode": "sum"})
    stored = await get_json(kubectl, "sidecarsets.apps.kruise.io", "mesh")
    assert stored["spec"]["containers"][0]["resourcesPolicy"]["targetContainersNameRegex"] == ".*"
    await until(sidecar_webhook, lambda: cache.get("mesh") is not None)

    await kubectl.apply(POD)
    pod = await get_json(kubectl, "pod", "web", "-n", "default")
    envoy = pod["spec"]["containers"][0]
    assert envoy["name"] == "envoy"
    # the memory request is not computed (no expression) but defaulted from the limit, as kube-apiserver
    # defaults the pod again after mutating admission
    assert envoy["resources"] == {
        "limits": {"cpu": "1500m", "memory": "1Gi"},
        "requests": {"cpu": "100m", "memory": "1Gi"},
    }
    assert envoy["volumeDevices"] == [{"name": "disk", "devicePath": "/dev/xvda"}]
