"""pods/ephemeralcontainers as kube-apiserver serves it: GET shows the pod, PUT and PATCH may only
add ephemeral containers (validated like upstream), a plain pod update may not touch them, and
`kubectl debug` adds one through it."""

from __future__ import annotations

import pytest
from kubernetes_asyncio import client, config
from kubernetes_asyncio.client.exceptions import ApiException


@pytest.fixture
async def core(emulator):
    cfg = client.Configuration()
    await config.load_kube_config(config_file=str(emulator.kubeconfig), client_configuration=cfg)
    async with client.ApiClient(cfg) as api_client:
        yield client.CoreV1Api(api_client)


def _pod(name: str = "p") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web"}},
        "spec": {
            "containers": [{"name": "main", "image": "nginx:1.25"}],
            "volumes": [{"name": "data", "emptyDir": {}}],
        },
    }


def _debug(name: str = "debugger", **extra) -> dict:
    return {"name": name, "image": "busybox", **extra}


async def _raw(core, pod: str):
    return await core.read_namespaced_pod_ephemeralcontainers(pod, "default", _preload_content=False)


async def _add(core, pod: str, *containers: dict):
    body = {"spec": {"ephemeralContainers": list(containers)}}
    return await core.patch_namespaced_pod_ephemeralcontainers(pod, "default", body)


async def _invalid(coro) -> str:
    with pytest.raises(ApiException) as exc:
        await coro
    assert exc.value.status == 422, exc.value.body
    return exc.value.body


async def test_get_serves_the_pod_and_patch_adds_defaulted_containers(core):
    await core.create_namespaced_pod("default", _pod())
    resp = await _raw(core, "p")
    assert resp.status == 200
    served = await resp.json()
    assert served["kind"] == "Pod" and served["metadata"]["name"] == "p"
    assert "ephemeralContainers" not in served["spec"]

    added = await _add(core, "p", _debug(command=["sh", "-c", "sleep 3"], targetContainerName="main"))
    (ec,) = added.spec.ephemeral_containers
    assert ec.name == "debugger" and ec.target_container_name == "main"
    # the apiserver's defaults for ephemeral containers
    assert ec.image_pull_policy == "Always"
    assert ec.termination_message_policy == "File" and ec.termination_message_path == "/dev/termination-log"

    # a strategic-merge patch by name appends a second one and keeps the first
    again = await _add(core, "p", _debug("second", image="busybox:1.36"))
    assert [c.name for c in again.spec.ephemeral_containers] == ["debugger", "second"]
    assert again.spec.ephemeral_containers[1].image_pull_policy == "IfNotPresent"
    pod = await core.read_namespaced_pod("p", "default")
    assert [c.name for c in pod.spec.ephemeral_containers] == ["debugger", "second"]


async def test_put_takes_only_the_ephemeral_containers(core):
    await core.create_namespaced_pod("default", _pod())
    pod = await core.read_namespaced_pod("p", "default")
    body = client.ApiClient().sanitize_for_serialization(pod)
    body["spec"]["ephemeralContainers"] = [_debug()]
    body["spec"]["containers"][0]["image"] = "nginx:2"  # ignored, never refused
    body["metadata"]["labels"] = {"changed": "yes"}  # ignored too
    updated = await core.replace_namespaced_pod_ephemeralcontainers("p", "default", body)
    assert [c.name for c in updated.spec.ephemeral_containers] == ["debugger"]
    assert updated.spec.containers[0].image == "nginx:1.25"
    assert updated.metadata.labels == {"app": "web"}

    # a stale resourceVersion conflicts, as on any update
    with pytest.raises(ApiException) as exc:
        await core.replace_namespaced_pod_ephemeralcontainers("p", "default", body)
    assert exc.value.status == 409


async def test_existing_ephemeral_containers_may_not_be_removed_or_changed(core):
    await core.create_namespaced_pod("default", _pod())
    await _add(core, "p", _debug())
    pod = client.ApiClient().sanitize_for_serialization(await core.read_namespaced_pod("p", "default"))

    removed = {**pod, "spec": {**pod["spec"], "ephemeralContainers": [_debug("other")]}}
    body = await _invalid(core.replace_namespaced_pod_ephemeralcontainers("p", "default", removed))
    assert 'existing ephemeral containers \\"debugger\\" may not be removed' in body

    changed = {
        **pod,
        "spec": {
            **pod["spec"],
            "ephemeralContainers": [{**pod["spec"]["ephemeralContainers"][0], "image": "alpine"}],
        },
    }
    body = await _invalid(core.replace_namespaced_pod_ephemeralcontainers("p", "default", changed))
    assert "spec.ephemeralContainers.debugger: Forbidden" in body and "may not be changed" in body


async def test_new_ephemeral_containers_are_validated(core):
    await core.create_namespaced_pod("default", _pod())
    cases = [
        (_debug("main"), 'spec.ephemeralContainers[0].name: Duplicate value: \\"main\\"'),
        ({"name": "x"}, "spec.ephemeralContainers[0].image: Required value"),
        (_debug("Bad_Name"), "spec.ephemeralContainers[0].name: Invalid value"),
        (
            _debug(ports=[{"containerPort": 80}]),
            "spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container",
        ),
        (
            _debug(resources={"limits": {"cpu": "1"}}),
            "spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container",
        ),
        (
            _debug(readinessProbe={"exec": {"command": ["true"]}}),
            "spec.ephemeralContainers[0].readinessProbe: Forbidden",
        ),
        (
            _debug(targetContainerName="nope"),
            'spec.ephemeralContainers[0].targetContainerName: Not found: \\"nope\\"',
        ),
        (
            _debug(volumeMounts=[{"name": "data", "mountPath": "/d", "subPath": "x"}]),
            "spec.ephemeralContainers[0].volumeMounts[0].subPath: Forbidden",
        ),
        (
            _debug(volumeMounts=[{"name": "missing", "mountPath": "/d"}]),
            'spec.ephemeralContainers[0].volumeMounts[0].name: Not found: \\"missing\\"',
        ),
        (
            _debug(imagePullPolicy="Sometimes"),
            'spec.ephemeralContainers[0].imagePullPolicy: Unsupported value: \\"Sometimes\\"',
        ),
    ]
    for container, message in cases:
        body = await _invalid(_add(core, "p", container))
        assert message in body, (container, body)
        assert 'Pod \\"p\\" is invalid' in body
    # a valid mount of a pod volume is fine
    ok = await _add(core, "p", _debug(volumeMounts=[{"name": "data", "mountPath": "/d"}]))
    assert ok.spec.ephemeral_containers[0].volume_mounts[0].name == "data"
    # and names stay unique among ephemeral containers too
    pod = client.ApiClient().sanitize_for_serialization(await core.read_namespaced_pod("p", "default"))
    pod["spec"]["ephemeralContainers"] += [_debug("twin"), _debug("twin", image="alpine")]
    body = await _invalid(core.replace_namespaced_pod_ephemeralcontainers("p", "default", pod))
    assert 'spec.ephemeralContainers[2].name: Duplicate value: \\"twin\\"' in body


async def test_a_plain_pod_update_may_not_change_ephemeral_containers(core):
    await core.create_namespaced_pod("default", _pod())
    await core.patch_namespaced_pod("p", "default", {"metadata": {"labels": {"extra": "1"}}})
    body = await _invalid(
        core.patch_namespaced_pod("p", "default", {"spec": {"ephemeralContainers": [_debug()]}})
    )
    assert "spec: Forbidden: pod updates may not change fields" in body
    # labels and the like still update once the pod has ephemeral containers
    await _add(core, "p", _debug())
    patched = await core.patch_namespaced_pod("p", "default", {"metadata": {"labels": {"more": "2"}}})
    assert patched.metadata.labels["more"] == "2" and patched.spec.ephemeral_containers[0].name == "debugger"


async def test_missing_pod_is_not_found(core):
    with pytest.raises(ApiException) as exc:
        await _add(core, "ghost", _debug())
    assert exc.value.status == 404


async def test_kubectl_debug_adds_an_ephemeral_container(kubectl, core):
    await core.create_namespaced_pod("default", _pod("web"))
    await kubectl("debug", "web", "--image=busybox", "-c", "dbg", "--", "sleep", "5")
    pod = await core.read_namespaced_pod("web", "default")
    (ec,) = pod.spec.ephemeral_containers
    assert ec.name == "dbg" and ec.image == "busybox" and ec.command == ["sleep", "5"]
    # a second debug container with a generated name (debugger-xxxxx) joins it
    await kubectl("debug", "web", "--image=busybox", "--target=main")
    pod = await core.read_namespaced_pod("web", "default")
    names = [c.name for c in pod.spec.ephemeral_containers]
    assert names[0] == "dbg" and names[1].startswith("debugger-")
    assert pod.spec.ephemeral_containers[1].target_container_name == "main"
