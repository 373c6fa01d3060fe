"""CRI Exec / Attach for a CRI back-end's ``exec_stream`` / ``attach_stream``: the streaming URL.

containerd answers with a one-time URL on its streaming server (``stream_server_address`` in the
node's config, loopback here) that expires if nobody connects within a minute; the kubelet API
connects at once and relays the caller's WebSocket to it (``kubelet_exec``).
"""

from __future__ import annotations

from collections.abc import Sequence

from kruise.sandbox.cri.client import CriClient
from kruise.sandbox.cri.schema import messages
from kruise.sandbox.simulator.noderuntime import StreamOptions


async def exec_url(cri: CriClient, container_id: str, command: Sequence[str], options: StreamOptions) -> str:
    request = messages.ExecRequest(
        container_id=container_id,
        cmd=list(command),
        tty=options.tty,
        stdin=options.stdin,
        stdout=options.stdout,
        stderr=options.stderr,
    )
    return (await cri.Exec(request)).url


async def attach_url(cri: CriClient, container_id: str, options: StreamOptions) -> str:
    request = messages.AttachRequest(
        container_id=container_id,
        tty=options.tty,
        stdin=options.stdin,
        stdout=options.stdout,
        stderr=options.stderr,
    )
    return (await cri.Attach(request)).url
