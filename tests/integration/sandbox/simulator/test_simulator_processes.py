"""Containers of a configured image run as real local processes at their pod's loopback IP."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from simulator_testkit import WAIT, Cluster, container, is_ready, pod_manifest

from kruise.sandbox.simulator import ProcessImage
from kruise.sandbox.simulator.client import resource_path

KUBECTL = Path(sys.executable).parent / "kubectl"
IMAGE = "sandbox-test/tools:1.0"
PRINTER = """
import os, pathlib, sys
print("greeting=" + os.environ["GREETING"], "pod=" + os.environ["POD_NAME"], flush=True)
print("password=" + pathlib.Path(sys.argv[1]).read_text(), flush=True)
os.execv(sys.executable, [sys.executable, "-m", "http.server", "--bind", os.environ["POD_IP"], "8080"])
"""


@pytest.fixture
def simulator_options() -> dict[str, Any]:
    python = sys.executable
    image = ProcessImage(
        "sandbox-test/tools:*",
        {
            "http-server": [python, "-u", "-m", "http.server"],
            "crasher": [python, "-c", "import sys; print('boom', flush=True); sys.exit(3)"],
            "printer": [python, "-c", PRINTER],
        },
        default="http-server",
    )
    return {"nodes": 1, "process_images": [image]}


@pytest.fixture
def kubectl(cluster: Cluster, tmp_path: Path):
    if not KUBECTL.exists() and shutil.which("kubectl") is None:
        pytest.skip("kubectl binary not available")

    async def run(*args: str) -> str:
        proc = await asyncio.create_subprocess_exec(
            str(KUBECTL) if KUBECTL.exists() else "kubectl",
            "--kubeconfig",
            str(cluster.simulator.kubeconfig_path),
            "--cache-dir",
            str(tmp_path / "cache"),
            *args,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 30)
        assert proc.returncode == 0, err.decode()
        return out.decode()

    return run


async def logs_until(kubectl, predicate, *args: str) -> str:
    """``kubectl logs`` output once ``predicate`` holds for it (the pipe may lag the probe)."""
    async with asyncio.timeout(WAIT):
        while True:
            out = await kubectl("logs", *args)
            if predicate(out):
                return out
            await asyncio.sleep(0.05)


def http_pod(name: str) -> dict[str, Any]:
    return pod_manifest(
        name,
        {
            "name": "web",
            "image": IMAGE,
            "args": ["--bind", "$(POD_IP)", "8080"],
            "env": [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
            "readinessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 1},
            "ports": [{"name": "http", "containerPort": 8080}],
        },
        terminationGracePeriodSeconds=30,
    )


async def test_http_server_becomes_ready_through_its_probe_and_stops_on_delete(cluster: Cluster, kubectl):
    await cluster.create(http_pod("web"))
    pod = await cluster.wait_for("pods", "web", is_ready)
    ip = pod["status"]["podIP"]
    assert ip.startswith(cluster.simulator.addresses.pod_cidr(1).removesuffix("0/24"))
    kubelet = cluster.simulator.kubelets["node-1"]
    [process] = list(kubelet.runtime.live.values())
    assert process.alive

    reader, writer = await asyncio.open_connection(ip, 8080)
    writer.write(b"GET / HTTP/1.0\r\n\r\n")
    assert (await reader.readline()).startswith(b"HTTP/1.0 200")
    writer.close()

    out = await logs_until(kubectl, lambda text: '"GET / HTTP/1.1" 200' in text, "web")
    assert f"Serving HTTP on {ip} port 8080" in out
    assert "kube-probe" not in out  # http.server logs the request line, not the user agent

    await cluster.client.delete(resource_path("v1", "pods", "default", "web"))
    await cluster.wait_list("pods", lambda pods: not any(p["metadata"]["name"] == "web" for p in pods))
    assert process.exit_code == 143  # SIGTERM
    with pytest.raises(OSError):
        await asyncio.open_connection(ip, 8080)


async def test_a_crashing_process_is_restarted_and_its_previous_output_kept(cluster: Cluster, kubectl):
    await cluster.create(pod_manifest("crash", {"name": "app", "image": IMAGE, "command": ["crasher"]}))
    pod = await cluster.wait_for(
        "pods",
        "crash",
        lambda p: (
            bool((p.get("status") or {}).get("containerStatuses"))
            and container(p, "app")["restartCount"] >= 1
        ),
    )
    status = container(pod, "app")
    assert status["lastState"]["terminated"]["exitCode"] == 3
    assert status["lastState"]["terminated"]["reason"] == "Error"
    out = await logs_until(kubectl, lambda text: text.strip() == "boom", "crash", "--previous")
    assert out == "boom\n"


async def test_env_and_secret_volume_reach_the_process(cluster: Cluster, kubectl):
    await cluster.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"hello": "hi"}},
        "configmaps",
    )
    await cluster.create(
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds"}, "data": {"pw": "czNjcmV0"}},
        "secrets",
    )
    manifest = pod_manifest(
        "printer",
        {
            "name": "app",
            "image": IMAGE,
            "command": ["printer"],
            "args": ["/etc/creds/pw"],
            "env": [
                {"name": "GREETING", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "hello"}}},
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
            ],
            "volumeMounts": [{"name": "creds", "mountPath": "/etc/creds", "readOnly": True}],
            "readinessProbe": {"tcpSocket": {"port": 8080}, "periodSeconds": 1},
        },
        volumes=[{"name": "creds", "secret": {"secretName": "creds"}}],
    )
    await cluster.create(manifest)
    await cluster.wait_for("pods", "printer", is_ready)
    out = await logs_until(kubectl, lambda text: "password=" in text, "printer")
    assert "greeting=hi pod=printer\n" in out
    assert "password=s3cret\n" in out
