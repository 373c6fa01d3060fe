"""A small CRI client over the sandbox's private message classes, for tests and the CLI.

It dials a unix socket with ``grpc.aio`` and exposes one awaitable per RPC under the RPC's
name: ``await client.PullImage(messages.PullImageRequest(...))``. It does not touch the
default descriptor pool, so it coexists with kruise-daemon's generated client.
"""

from __future__ import annotations

import os
from types import EllipsisType

import grpc
from google.protobuf.message import Message

from kruise.sandbox.cri.schema import rpcs
from kruise.sandbox.cri.server import socket_path_of


class CriClient:
    """``async with CriClient(path) as cri: await cri.Version(messages.VersionRequest())``."""

    def __init__(self, socket_path: str | os.PathLike[str], *, timeout: float | None = 10.0) -> None:
        self.target = f"unix://{socket_path_of(os.fspath(socket_path))}"
        self.timeout = timeout
        self._channel: grpc.aio.Channel | None = None
        self._stubs: dict[str, grpc.aio.UnaryUnaryMultiCallable] = {}

    async def __aenter__(self) -> CriClient:
        self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def open(self) -> None:
        if self._channel is not None:
            return
        self._channel = grpc.aio.insecure_channel(self.target)
        self._stubs = {
            rpc.name: self._channel.unary_unary(
                rpc.path,
                request_serializer=rpc.request.SerializeToString,
                response_deserializer=rpc.response.FromString,
            )
            for rpc in rpcs()
        }

    async def close(self) -> None:
        channel, self._channel = self._channel, None
        self._stubs = {}
        if channel is not None:
            await channel.close()

    async def call(
        self, method: str, request: Message, *, timeout: float | EllipsisType | None = ...
    ) -> Message:
        """Invoke RPC ``method`` (e.g. ``"StopContainer"``) with the client's deadline unless ``timeout``
        says otherwise (None: none, for calls that block as long as they must); raises
        ``grpc.aio.AioRpcError`` on failure."""
        if self._channel is None:
            raise RuntimeError("CriClient is not open; use 'async with' or call open()")
        if method not in self._stubs:
            raise AttributeError(f"CRI subset has no RPC {method!r}")
        deadline = self.timeout if timeout is ... else timeout
        return await self._stubs[method](request, timeout=deadline)

    def __getattr__(self, method: str):
        if method.startswith("_") or not method[:1].isupper():
            raise AttributeError(method)

        async def invoke(request: Message) -> Message:
            return await self.call(method, request)

        return invoke
