"""The hot-upgrade sample's programs are filled in for the architecture and keep the sample's paths."""

from __future__ import annotations

import pytest

from kruise.sandbox.realnode import hotupgrade


def test_sidecar_program_is_filled_for_the_architecture() -> None:
    program = hotupgrade.sidecar_program("v2", "arm64")
    assert "my $VERSION = 'v2';" in program
    assert "my ($SYS_SENDMSG, $SYS_RECVMSG) = (211, 212);" in program
    assert f"my $PORT = {hotupgrade.SERVE_PORT};" in program
    assert "@" + "VERSION@" not in program


@pytest.mark.parametrize(
    ("version", "architecture", "field"),
    [("v1", "riscv64", "architecture"), ("", "amd64", "version"), ("v1;rm", "amd64", "version")],
)
def test_bad_sidecar_parameters_name_the_field(version: str, architecture: str, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        hotupgrade.sidecar_program(version, architecture)


def test_hook_and_client_use_the_sample_paths() -> None:
    assert f"[ -e {hotupgrade.RESULT_FILE} ]" in hotupgrade.migrate_script()
    assert f"http://127.0.0.1:{hotupgrade.SERVE_PORT}/serve" in hotupgrade.client_script()
