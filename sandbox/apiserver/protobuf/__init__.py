"""Decoding of ``application/vnd.kubernetes.protobuf`` request bodies (see ``decode.py``)."""

from kruise.sandbox.apiserver.protobuf.decode import ProtobufError, decode_object, is_protobuf

__all__ = ["ProtobufError", "decode_object", "is_protobuf"]
