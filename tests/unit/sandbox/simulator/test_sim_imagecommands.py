"""What a simulated image's command does: the table and the decision on a container spec."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.sandbox.simulator.imagecommands import (
    BUSYBOX_APPLETS,
    Exits,
    StartFails,
    image_commands,
    outcome,
)

BUSYBOX = "registry.k8s.io/e2e-test-images/busybox:1.36.1-1"
NGINX = "registry.k8s.io/e2e-test-images/nginx:1.14-4"


def run(command=None, args=None, image=BUSYBOX, **extra):
    spec = {"name": "c", "image": image, **extra}
    if command is not None:
        spec["command"] = command
    if args is not None:
        spec["args"] = args
    return outcome(spec)


def test_an_executable_busybox_lacks_fails_the_start_as_runc_does():
    verdict = run(["sdkfjk"])
    assert isinstance(verdict, StartFails)
    assert verdict.message == (
        "failed to create containerd task: failed to create shim task: OCI runtime create failed: "
        'runc create failed: unable to start container process: exec: "sdkfjk": executable file not '
        "found in $PATH: unknown"
    )
    missing_path = run(["/bin/sdkfjk"])
    assert isinstance(missing_path, StartFails)
    assert 'exec: "/bin/sdkfjk": stat /bin/sdkfjk: no such file or directory' in missing_path.message


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=12))
def test_every_name_is_either_an_applet_or_a_start_error(name):
    verdict = run([name])
    assert isinstance(verdict, StartFails) == (name not in BUSYBOX_APPLETS)


@pytest.mark.parametrize("image", ["busybox", "busybox:1.36", "docker.io/library/busybox:latest", BUSYBOX])
def test_busybox_runs_sh_by_default_which_ends_without_stdin(image):
    assert run(image=image) == Exits(0)
    assert run(["sh"], image=image) == Exits(0)
    assert run(["/bin/sh"], image=image) == Exits(0)


@pytest.mark.parametrize("extra", [{"stdin": True}, {"tty": True}, {"stdin": True, "tty": True}])
def test_sh_with_stdin_or_a_tty_keeps_running(extra):
    assert run(**extra) is None


@pytest.mark.parametrize(
    ("command", "args", "want"),
    [
        (["ls", "sdfewasf"], None, Exits(1)),
        (["ls"], ["-l", "/nope"], Exits(1)),
        (["ls"], None, Exits(0)),
        (["ls", "/etc/hosts", "/tmp"], None, Exits(0)),
        (["ls", "/bin/sh"], None, Exits(0)),
        (["true"], None, Exits(0)),
        (["false"], None, Exits(1)),
        (["sleep", "3"], None, Exits(0, 3.0)),
        (["sleep"], ["1m", "30s"], Exits(0, 90.0)),
        (["sleep", "abc"], None, Exits(1)),
        (["sleep", "infinity"], None, None),
        (["sh", "-c", "exit 3"], None, Exits(3)),
        (["sh", "-c", "exit 257"], None, Exits(1)),
        (["sh", "-c", "exec sleep 5"], None, Exits(0, 5.0)),
        (["/bin/sh", "-c", "ls sdfewasf"], None, Exits(1)),
        (["sh", "-c", "sdkfjk"], None, Exits(127)),
        (["sh", "-c", ""], None, Exits(0)),
        (["sh", "-c", "echo hi; sleep 3"], None, None),
        (["sh", "-c", "while true; do sleep 1; done"], None, None),
        (["sh", "/script.sh"], None, None),
        (["echo", "hi"], None, None),
        (["httpd", "-f"], None, None),
    ],
)
def test_well_known_commands(command, args, want):
    assert run(command, args) == want


def test_inside_a_volume_mount_ls_knows_nothing():
    mounts = {"volumeMounts": [{"name": "data", "mountPath": "/data"}]}
    assert run(["ls", "/data"], **mounts) == Exits(0)
    assert run(["ls", "/data/file"], **mounts) is None
    assert run(["ls", "/elsewhere"], **mounts) == Exits(1)


@given(st.integers(min_value=0, max_value=10**7))
def test_any_sleep_ends_after_its_seconds(n):
    assert run(["sleep", str(n)]) == Exits(0, float(n))
    assert run(["sh", "-c", f"sleep {n}"]) == Exits(0, float(n))


@given(st.integers(min_value=0, max_value=10**6))
def test_exit_n_is_the_shells_status_modulo_256(n):
    assert run(["sh", "-c", f"exit {n}"]) == Exits(n % 256)


def test_args_replace_the_images_cmd_and_command_drops_it():
    assert run(args=["ls", "sdfewasf"]) == Exits(1)  # busybox: no ENTRYPOINT, CMD sh
    agnhost = "registry.k8s.io/e2e-test-images/agnhost:2.52"
    assert image_commands(agnhost).argv([], []) == ["/agnhost", "pause"]
    assert image_commands(agnhost).argv([], ["netexec"]) == ["/agnhost", "netexec"]
    assert image_commands(agnhost).argv(["sh"], []) == ["sh"]


def test_images_whose_executables_are_not_listed_never_fail_a_start():
    assert run(["sdkfjk"], image=NGINX) is None
    assert run(image=NGINX) is None  # nginx -g "daemon off;": a server
    assert run(["sh"], image=NGINX) == Exits(0)
    assert run(["ls", "/usr/share/nginx/html"], image=NGINX) is None  # its files are not listed
    assert run(["ls", "/nope", "/etc"], image="nginx:1.25") is None
    assert run(["sh", "-c", "exit 2"], image="nginx:1.25") == Exits(2)


@pytest.mark.parametrize("image", ["myapp:1", "ghcr.io/x/busybox-like:1", "", "Not A Ref"])
def test_images_not_in_the_table_keep_todays_behaviour(image):
    assert run(["sdkfjk"], image=image) is None
    assert run(["ls", "missing"], image=image) is None
    assert run(image=image) is None
