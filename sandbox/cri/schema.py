"""CRI ``runtime.v1`` message classes and RPC table, built in a PRIVATE descriptor pool.

kruise-daemon's generated CRI client registers the same package in protobuf's default pool,
and a pool refuses duplicate symbols; since tests import both, the sandbox never touches the
default pool. Classes come from ``_descriptor.py`` (see ``regen.py``) via
``message_factory.GetMessageClass``. Use ``messages.ContainerStatusRequest(container_id=...)``.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from functools import cache

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import Message

from kruise.sandbox.cri._descriptor import DESCRIPTOR_SET_B64

PACKAGE = "runtime.v1"
SERVICES = ("RuntimeService", "ImageService")


def _build_pool() -> descriptor_pool.DescriptorPool:
    pool = descriptor_pool.DescriptorPool()
    descriptor_set = descriptor_pb2.FileDescriptorSet.FromString(
        base64.b64decode("".join(DESCRIPTOR_SET_B64))
    )
    for file_proto in descriptor_set.file:
        pool.Add(file_proto)
    return pool


POOL = _build_pool()


@cache
def message_class(name: str) -> type[Message]:
    """The class of ``runtime.v1.<name>``; ``KeyError`` if the subset has no such message."""
    return message_factory.GetMessageClass(POOL.FindMessageTypeByName(f"{PACKAGE}.{name}"))


def enum_value(enum: str, name: str) -> int:
    """The wire number of ``runtime.v1.<enum>.<name>``."""
    return POOL.FindEnumTypeByName(f"{PACKAGE}.{enum}").values_by_name[name].number


class _Messages:
    """Attribute access to message classes: ``messages.VersionRequest``."""

    def __getattr__(self, name: str) -> type[Message]:
        try:
            return message_class(name)
        except KeyError:
            raise AttributeError(f"CRI subset has no message {PACKAGE}.{name}") from None


messages = _Messages()


@dataclass(frozen=True)
class Rpc:
    """One unary RPC: ``path`` is the gRPC method path, e.g. ``/runtime.v1.ImageService/PullImage``."""

    service: str
    name: str
    request: type[Message]
    response: type[Message]

    @property
    def path(self) -> str:
        return f"/{PACKAGE}.{self.service}/{self.name}"


@cache
def rpcs() -> tuple[Rpc, ...]:
    """Every RPC of both services, in declaration order."""
    found: list[Rpc] = []
    for service in SERVICES:
        for method in POOL.FindServiceByName(f"{PACKAGE}.{service}").methods:
            found.append(
                Rpc(
                    service=service,
                    name=method.name,
                    request=message_factory.GetMessageClass(method.input_type),
                    response=message_factory.GetMessageClass(method.output_type),
                )
            )
    return tuple(found)
