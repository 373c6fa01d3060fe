"""Regenerate the committed CRI stubs from ``api.proto``: ``python -m kruise.daemon.cri.regen``.

kruise-daemon uses ordinary generated ``api_pb2`` / ``api_pb2_grpc`` modules (the sandbox's fake
runtime keeps its own classes in a private descriptor pool, so the two never clash). grpcio-tools is
a development dependency, needed only here and in the drift test.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
PROTO = HERE / "api.proto"
STUBS = ("api_pb2.py", "api_pb2_grpc.py")
IMPORT_FROM = "import api_pb2 as api__pb2"
IMPORT_TO = "from kruise.daemon.cri import api_pb2 as api__pb2"


def generate(proto: Path = PROTO) -> dict[str, str]:
    """File name -> generated source, with the grpc module importing its messages by package path."""
    from grpc_tools import protoc  # development-only dependency

    with tempfile.TemporaryDirectory() as tmp:
        argv = ["protoc", f"-I{proto.parent}", f"--python_out={tmp}", f"--grpc_python_out={tmp}", proto.name]
        status = protoc.main(argv)
        if status != 0:
            raise RuntimeError(f"protoc failed with status {status} on {proto}")
        return {name: (Path(tmp) / name).read_text().replace(IMPORT_FROM, IMPORT_TO) for name in STUBS}


def compile_file_descriptor(proto: Path = PROTO) -> bytes:
    """The serialized FileDescriptorProto of `api.proto`, for the drift test: comparing descriptors,
    not generated text, keeps the test stable when a newer grpcio-tools words its output differently."""
    from google.protobuf import descriptor_pb2
    from grpc_tools import protoc  # development-only dependency

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "api.desc"
        status = protoc.main(["protoc", f"-I{proto.parent}", f"--descriptor_set_out={out}", proto.name])
        if status != 0:
            raise RuntimeError(f"protoc failed with status {status} on {proto}")
        (file_proto,) = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file
        return canonical(file_proto)


def canonical(file_proto: Any) -> bytes:
    """Serialized without `json_name`, which protoc fills in and a loaded descriptor may omit."""
    copy = type(file_proto)()
    copy.CopyFrom(file_proto)

    def strip(messages: Any) -> None:
        for message in messages:
            for field in message.field:
                field.ClearField("json_name")
            strip(message.nested_type)

    strip(copy.message_type)
    return copy.SerializeToString(deterministic=True)


def main() -> int:
    for name, text in generate().items():
        (HERE / name).write_text(text)
        print(f"wrote {HERE / name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
