"""Regenerate ``_descriptor.py`` from the tree's one CRI proto: ``python -m kruise.sandbox.cri.regen``.

The proto is ``daemon/cri/api.proto``, shared with kruise-daemon's generated client.

The sandbox must not register ``runtime.v1`` in protobuf's default descriptor pool (the
daemon's own CRI client lives there), so instead of generated ``_pb2`` modules it ships the
compiled FileDescriptorSet and builds message classes in a private pool at import time.
grpcio-tools is a development dependency, needed only here and in the drift test.
"""

from __future__ import annotations

import base64
import sys
import tempfile
import textwrap
from pathlib import Path

HERE = Path(__file__).parent
# One CRI proto for the whole tree, kept beside kruise-daemon's client (see its header); read at
# regeneration time only, so the sandbox still imports nothing of kruise.
PROTO = HERE.parent.parent / "daemon" / "cri" / "api.proto"
OUTPUT = HERE / "_descriptor.py"
CHUNK = 96

HEADER = '''"""The compiled FileDescriptorSet of api.proto, base64-encoded. Generated; do not edit.

Regenerate with ``python -m kruise.sandbox.cri.regen`` after changing api.proto; a unit test
fails when this copy and api.proto disagree.
"""

DESCRIPTOR_SET_B64 = (
'''


def compile_descriptor_set(proto: Path = PROTO) -> bytes:
    """Run protoc (from grpcio-tools) and return the serialized FileDescriptorSet."""
    from grpc_tools import protoc  # development-only dependency

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "api.desc"
        argv = ["protoc", f"-I{proto.parent}", f"--descriptor_set_out={out}", "--include_imports", proto.name]
        status = protoc.main(argv)
        if status != 0:
            raise RuntimeError(f"protoc failed with status {status} on {proto}")
        return out.read_bytes()


def render_module(descriptor_set: bytes) -> str:
    encoded = base64.b64encode(descriptor_set).decode("ascii")
    lines = "".join(f'    "{part}"\n' for part in textwrap.wrap(encoded, CHUNK))
    return HEADER + lines + ")\n"


def main() -> int:
    OUTPUT.write_text(render_module(compile_descriptor_set()))
    print(f"wrote {OUTPUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
