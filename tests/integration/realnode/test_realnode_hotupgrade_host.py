"""The hot-upgrade sample's programs on this host, without containers: the listener hand-over itself.

Two sidecar processes and the busybox client run in a private network namespace (``unshare -n``) so
port 9091 is theirs; the migration socket lives in a temporary directory instead of /dev/shm. Needs
root, perl and busybox-static; skipped without them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kruise.sandbox.realnode import hotupgrade, oci

pytestmark = [pytest.mark.containerd, pytest.mark.timeout(120)]

HANDOVER = """
set -e
ip link set lo up
perl v1.pl > v1.log 2>&1 &
old=$!
until grep -q 'serve(version=v1)' v1.log; do sleep 0.05; done
busybox sh client.sh > client.log 2>&1 &
client=$!
until [ "$(grep -c 'version(v1)' client.log)" -ge 3 ]; do sleep 0.05; done
SIDECARSET_VERSION=2 SIDECARSET_VERSION_ALT=1 perl v2.pl > v2.log 2>&1 &
new=$!
until grep -q 'serve(version=v2)' v2.log; do sleep 0.05; done
kill $old
until [ "$(grep -c 'version(v2)' client.log)" -ge 3 ]; do sleep 0.05; done
kill $client $new
"""


def test_newer_sidecar_takes_the_listening_socket_over(tmp_path: Path) -> None:
    if not (shutil.which("perl") and shutil.which("busybox") and shutil.which("unshare")):
        pytest.skip("needs perl, busybox and unshare")
    if os.geteuid() != 0:
        pytest.skip("needs root for a private network namespace")
    socket = tmp_path / "migrate.sock"
    for version in ("v1", "v2"):
        program = hotupgrade.sidecar_program(version, oci.host_architecture())
        program = program.replace(hotupgrade.MIGRATE_SOCKET, str(socket))
        program = program.replace(f"'{hotupgrade.RESULT_FILE}'", f"'{tmp_path / 'result'}'")
        (tmp_path / f"{version}.pl").write_text(program)
    applets = tmp_path / "bin"
    applets.mkdir()
    for applet in ("wget", "timeout", "date", "sleep"):
        (applets / applet).symlink_to(shutil.which("busybox"))
    (tmp_path / "client.sh").write_text(hotupgrade.client_script())
    env = {"PATH": f"{applets}:{os.environ['PATH']}"}
    subprocess.run(["unshare", "-n", "sh", "-c", HANDOVER], cwd=tmp_path, env=env, check=True, timeout=60)

    client = (tmp_path / "client.log").read_text().splitlines()
    assert client and all("request sidecar server success" in line for line in client), client
    versions = [line[line.index("version(") :] for line in client]
    switch = versions.index("version(v2) sidecar)")
    assert set(versions[:switch]) == {"version(v1) sidecar)"} and set(versions[switch:]) == {
        "version(v2) sidecar)"
    }
    assert "listener handed over" in (tmp_path / "v1.log").read_text()
    assert "received the listening socket" in (tmp_path / "v2.log").read_text()
