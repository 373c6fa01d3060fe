"""Container lifecycle hooks, run by the kubelet on a container that has a real process.

The kubelet runs ``postStart`` right after StartContainer, in the pod's own sync: until the hook
returns, nothing else of the pod moves and no new status is written, so a container whose hook
is still running is never reported ready. That is what the SidecarSet hot upgrade relies on: the
new sidecar's hook holds it until it has taken over from the old one, and only then does
kruise-manager put the old one back on the empty image.

As the kubelet (pkg/kubelet/lifecycle): ``exec`` runs through the runtime's ExecSync with no
timeout and fails on a non-zero exit or a runtime error; ``httpGet`` (host defaulting to the pod
IP, a named port looked up in the container's ports) fails only when the request cannot be made
or answered, whatever the status code; ``sleep`` waits its seconds (simulated, scaled by the
node's speed). A failure comes back as the kubelet's event message; the caller records
``FailedPostStartHook`` and kills the container. Simulated containers (no process) run no hooks.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import aiohttp

from kruise.sandbox.cri import CriError, ExecResult
from kruise.sandbox.simulator.liveprobe import resolve_port

Execute = Callable[[list[str], int], Awaitable[ExecResult]]
Obj = Mapping[str, Any]

_INSECURE = ssl.create_default_context()
_INSECURE.check_hostname = False
_INSECURE.verify_mode = ssl.CERT_NONE


def handler_of(container: Obj, hook: str) -> Obj | None:
    """The container's ``lifecycle.<hook>`` (``postStart`` or ``preStop``), if it has one."""
    found = (container.get("lifecycle") or {}).get(hook)
    return found or None


def pod_ref(pod: Obj) -> str:
    """A pod as the kubelet's messages name it (``format.Pod``): ``name_namespace(uid)``."""
    meta = pod.get("metadata") or {}
    return f"{meta.get('name', '')}_{meta.get('namespace', '')}({meta.get('uid', '')})"


def _go_list(items: list[str]) -> str:
    return "[" + " ".join(items) + "]"


async def run(
    handler: Obj,
    *,
    pod: Obj,
    container: Obj,
    pod_ip: str,
    execute: Execute,
    scaled: Callable[[float], float],
) -> str | None:
    """Run one hook handler; None when it succeeded, else the kubelet's failure message."""
    name = container.get("name", "")
    if (handler.get("exec") or {}).get("command"):
        command = [str(part) for part in handler["exec"]["command"]]
        try:
            result = await execute(command, 0)
        except CriError as error:
            problem, output = str(error), ""
        else:
            if result.exit_code == 0:
                return None
            output = (result.stdout + result.stderr).decode(errors="replace")
            stderr = result.stderr.decode(errors="replace")
            problem = f"command '{' '.join(command)}' exited with {result.exit_code}: {stderr}"
        return (
            f'Exec lifecycle hook ({_go_list(command)}) for Container "{name}" in Pod "{pod_ref(pod)}" '
            f"failed - error: {problem}, message: {json.dumps(output)}"
        )
    if "httpGet" in handler:
        spec = handler["httpGet"]
        problem = await _http_get(spec, container, pod_ip)
        if problem is None:
            return None
        return (
            f'HTTP lifecycle hook ({spec.get("path") or ""}) for Container "{name}" in Pod "{pod_ref(pod)}" '
            f"failed - error: {problem}"
        )
    if "sleep" in handler:
        await asyncio.sleep(scaled(float((handler["sleep"] or {}).get("seconds") or 0)))
        return None
    where = f'Container "{name}" in Pod "{pod_ref(pod)}"'
    return f"lifecycle hook of {where} has no handler (exec, httpGet, sleep)"


async def _http_get(spec: Obj, container: Obj, pod_ip: str) -> str | None:
    scheme = str(spec.get("scheme") or "HTTP").lower()
    host = spec.get("host") or pod_ip
    try:
        port = resolve_port(spec.get("port"), container)
    except ValueError as error:
        return str(error)
    path = spec.get("path") or "/"
    if not path.startswith("/"):
        path = "/" + path
    url = f"{scheme}://{host}:{port}{path}"
    headers = {h["name"]: h.get("value", "") for h in spec.get("httpHeaders") or []}
    headers.setdefault("User-Agent", "kube-lifecycle/1.36")
    try:
        async with (
            aiohttp.ClientSession() as session,
            session.get(url, headers=headers, ssl=_INSECURE if scheme == "https" else None) as response,
        ):
            await response.read()
    except aiohttp.ClientError as error:
        return f'Get "{url}": {error}'
    return None
