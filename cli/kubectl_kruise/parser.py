"""The command-line grammar of `kubectl-kruise`, kubectl-style.

argparse rather than typer because kubectl's flag grammar needs it: connection globals are
accepted before or after the subcommand (`kubectl kruise -n ns rollout ...` and `kubectl kruise
rollout ... -n ns`), Go booleans are written `--watch=false`, `--dry-run` takes an optional value,
and everything after `--` is a positional (a Job's command).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from typing import Any, NoReturn

from kruise.cli.kubectl_kruise.output import parse_output

PROG = "kubectl-kruise"
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
# Boolean and optional-value flags written bare, and the value kubectl gives them then.
_BARE_FLAGS = {
    "--watch": "--watch=true",
    "-w": "--watch=true",
    "--detail": "--detail=true",
    "-d": "--detail=true",
    "--dry-run": "--dry-run=client",
    "--list": "--list=true",
    "--overwrite": "--overwrite=true",
    "--all": "--all=true",
    "--create": "--create=true",
    "--copy": "--copy=true",
    "--no-color": "--no-color=true",
}


def parse_duration(text: str) -> float:
    """Go's time.ParseDuration for the non-negative values kubectl flags take ("0", "90s", "1h30m")."""
    if text in ("0", ""):
        return 0.0
    pos, total = 0, 0.0
    while pos < len(text):
        match = _DURATION_PART.match(text, pos)
        if match is None:
            raise argparse.ArgumentTypeError(f'time: invalid duration "{text}"')
        total += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        pos = match.end()
    return total


def parse_bool(text: str) -> bool:
    """Go's strconv.ParseBool."""
    if text in ("1", "t", "T", "true", "TRUE", "True"):
        return True
    if text in ("0", "f", "F", "false", "FALSE", "False"):
        return False
    raise argparse.ArgumentTypeError(f'strconv.ParseBool: parsing "{text}": invalid syntax')


def parse_dry_run(text: str) -> str:
    if text in ("none", "client", "server"):
        return text
    if text == "unchanged":
        return "client"
    raise argparse.ArgumentTypeError(
        f'Invalid dry-run value ({text}). Must be "none", "server", or "client".'
    )


class KubectlArgumentParser(argparse.ArgumentParser):
    """Usage errors as kubectl reports them: `error: ...`, a pointer to --help, exit code 1."""

    def error(self, message: str) -> NoReturn:
        self.exit(1, f"error: {message}\nSee '{self.prog} --help' for usage.\n")


def _output_format(text: str) -> str:
    try:
        return parse_output(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _add_output_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-o", "--output", type=_output_format, default="", help="Output format. One of: (json, yaml, name)."
    )


def _connection_flags(suppress: bool) -> argparse.ArgumentParser:
    """kubectl's globals; on subcommands they default to SUPPRESS so they never hide a value
    given before the subcommand."""
    parser = argparse.ArgumentParser(add_help=False)
    default: Any = argparse.SUPPRESS if suppress else None
    group = parser.add_argument_group("global options")
    group.add_argument(
        "--kubeconfig", default=default, help="Path to the kubeconfig file to use for CLI requests."
    )
    group.add_argument("--context", default=default, help="The name of the kubeconfig context to use")
    group.add_argument(
        "-n", "--namespace", default=default, help="If present, the namespace scope for this CLI request"
    )
    group.add_argument(
        "--request-timeout",
        type=parse_duration,
        default=argparse.SUPPRESS if suppress else 0.0,
        help="How long to wait for one server request (1s, 2m, 3h); 0 keeps the 30s default.",
    )
    return parser


def build_parser() -> argparse.ArgumentParser:
    globals_ = _connection_flags(suppress=True)
    root = KubectlArgumentParser(
        prog=PROG,
        description="kubectl-kruise controls the OpenKruise CRs. Find more information at: https://openkruise.io/",
        parents=[_connection_flags(suppress=False)],
    )
    sub = root.add_subparsers(dest="command", metavar="COMMAND")

    rollout = sub.add_parser(
        "rollout",
        help="Manage the rollout of a resource",
        description="Manage the rollout of a resource. Valid resource types include: deployments, "
        "daemonsets, statefulsets, clonesets, statefulsets.apps.kruise.io, daemonsets.apps.kruise.io",
        parents=[globals_],
    )
    actions = rollout.add_subparsers(dest="action", metavar="SUBCOMMAND")

    status = actions.add_parser(
        "status", help="Show the status of the rollout", parents=[globals_],
        description="Watch the status of the latest rollout until it's done; --watch=false shows it once.",
    )  # fmt: skip
    status.add_argument("resources", nargs="*", metavar="(TYPE NAME | TYPE/NAME)")
    status.add_argument(
        "-w", "--watch", type=parse_bool, default=True, help="Watch the status until it's done."
    )
    status.add_argument("--revision", type=int, default=0, help="Pin to a specific revision (deployments).")
    status.add_argument(
        "-d", "--detail", type=parse_bool, default=False, help="Show the detail status of the rollout."
    )
    status.add_argument(
        "--timeout",
        type=parse_duration,
        default=0.0,
        help="How long to wait before ending the watch (0: never).",
    )

    for name, text in (
        ("pause", "Mark the provided resource as paused"),
        ("resume", "Resume a paused resource"),
        ("restart", "Restart a resource"),
    ):
        cmd = actions.add_parser(name, help=text, description=text, parents=[globals_])
        cmd.add_argument("resources", nargs="*", metavar="RESOURCE")
        _add_output_flag(cmd)

    approve = actions.add_parser(
        "approve",
        help="Approve a resource",
        description="Approve a Kruise Rollout (rollouts.kruise.io) paused at a canary or blue-green step: "
        "kubectl-kruise rollout approve rollout/NAME.",
        parents=[globals_],
    )
    approve.add_argument("resources", nargs="*", metavar="RESOURCE")
    _add_output_flag(approve)

    hist = actions.add_parser(
        "history",
        help="View rollout history",
        description="View previous rollout revisions and configurations.",
        parents=[globals_],
    )  # fmt: skip
    hist.add_argument("resources", nargs="*", metavar="(TYPE NAME | TYPE/NAME)")
    hist.add_argument(
        "--revision", type=int, default=0, help="See the details, including podTemplate of the revision"
    )

    undo = actions.add_parser(
        "undo",
        help="Undo a previous rollout",
        description="Rollback to a previous rollout.",
        parents=[globals_],
    )
    _add_output_flag(undo)
    undo.add_argument("resources", nargs="*", metavar="(TYPE NAME | TYPE/NAME)")
    undo.add_argument(
        "--to-revision", type=int, default=0, help="The revision to rollback to (0: the previous one)."
    )
    undo.add_argument(
        "--dry-run", type=parse_dry_run, default="none", help='Must be "none", "server", or "client".'
    )

    create = sub.add_parser(
        "create", help="Create a resource", description="Create a resource.", parents=[globals_]
    )
    create_kinds = create.add_subparsers(dest="create_kind", metavar="KIND")
    job = create_kinds.add_parser(
        "job",
        help="Create a job with the specified name.",
        description="Create a job with the specified name: kubectl-kruise create job NAME --image=image "
        "[--from=cronjob/name] -- [COMMAND] [args...]. "
        "--from takes advancedcronjob/NAME (acj) or cronjob/NAME.",
        parents=[globals_],
    )
    _add_output_flag(job)
    job.add_argument("name", metavar="NAME")
    job.add_argument("job_command", nargs="*", metavar="COMMAND")
    job.add_argument("--image", default="", help="Image name to run.")
    job.add_argument(
        "--from",
        dest="source",
        default="",
        help="The name of the resource to create a Job from (cronjob and advancedcronjob are supported).",
    )
    job.add_argument(
        "--dry-run", type=parse_dry_run, default="none", help='Must be "none", "server", or "client".'
    )

    bcj = create_kinds.add_parser(
        "broadcastJob",
        aliases=["broadcastjob"],
        help="Create a broadcastJob with the specified name.",
        description="Create a broadcastJob with the specified name: kubectl-kruise create broadcastJob NAME "
        "--image=image [--from=advancedcronjob/name] -- [COMMAND] [args...]. "
        "--from takes advancedcronjob/NAME (acj) whose template is a BroadcastJob.",
        parents=[globals_],
    )
    _add_output_flag(bcj)
    bcj.add_argument("name", metavar="NAME")
    bcj.add_argument("job_command", nargs="*", metavar="COMMAND")
    bcj.add_argument("--image", default="", help="Image name to run.")
    bcj.add_argument(
        "--from",
        dest="source",
        default="",
        help="The name of the resource to create a BroadcastJob from (only advancedCronjob is supported).",
    )
    bcj.add_argument(
        "--dry-run", type=parse_dry_run, default="none", help='Must be "none", "server", or "client".'
    )

    crr = create_kinds.add_parser(
        "ContainerRecreateRequest",
        aliases=["containerrecreaterequest", "crr"],
        help="Create a crr with the specified name.",
        description="Create a ContainerRecreateRequest: kubectl-kruise create ContainerRecreateRequest NAME "
        "--pod=podName [--containers=container]. "
        "Without --containers every container of the pod is recreated.",
        parents=[globals_],
    )
    crr.add_argument("name", metavar="NAME")
    crr.add_argument("-p", "--pod", default="", help="The name of the pod.")
    crr.add_argument("--containers", default="", help="The containers that need to be recreated (a,b).")
    crr.add_argument(
        "-u", "--unreadyGracePeriodSeconds", dest="unready_grace", type=int, default=3,
        help="Seconds to mark the pod not ready before stopping the container.",
    )  # fmt: skip
    crr.add_argument(
        "-m", "--minStartedSeconds", dest="min_started", type=int, default=3,
        help="Seconds a new container must be started and ready to count as Succeeded.",
    )  # fmt: skip
    crr.add_argument(
        "--dry-run", type=parse_dry_run, default="none", help='Must be "none", "server", or "client".'
    )
    _add_output_flag(crr)

    set_ = sub.add_parser("set", help="Set specific features on objects", parents=[globals_])
    set_kinds = set_.add_subparsers(dest="set_kind", metavar="KIND")
    image = set_kinds.add_parser(
        "image",
        help="Update image of a pod template",
        description="Update existing container image(s) of resources: kubectl-kruise set image "
        "(TYPE NAME | TYPE/NAME) CONTAINER_NAME_1=CONTAINER_IMAGE_1 ... ('*' means every container). "
        "Types: cloneset (clone), statefulset.apps.kruise.io (asts), daemonset.apps.kruise.io (daemon), "
        "sidecarset, deployment (deploy), statefulset (sts), daemonset (ds).",
        parents=[globals_],
    )
    _add_output_flag(image)
    image.add_argument("arguments", nargs="*", metavar="ARG")
    image.add_argument(
        "--dry-run", type=parse_dry_run, default="none", help='Must be "none", "server", or "client".'
    )

    env = set_kinds.add_parser(
        "env",
        help="Update environment variables on a pod template",
        description="Update environment variables on a pod template: kubectl-kruise set env "
        "(TYPE NAME | TYPE/NAME) KEY_1=VAL_1 ... KEY_N=VAL_N, or KEY- to remove. "
        "Types: cloneset (clone), asts, daemon, deployment (deploy), statefulset (sts), daemonset (ds).",
        parents=[globals_],
    )
    env.add_argument("arguments", nargs="*", metavar="ARG")
    env.add_argument(
        "-e", "--env", action="append", default=[], help="Environment variable to set: KEY=VALUE."
    )
    env.add_argument("-c", "--containers", default="*", help="The names of containers to change (wildcards).")
    env.add_argument(
        "--list", type=parse_bool, default=False, help="Display the environment and any changes."
    )
    env.add_argument(
        "--overwrite", type=parse_bool, default=True, help="If false, refuse to change an existing value."
    )
    env.add_argument(
        "--dry-run", type=parse_dry_run, default="none", help='Must be "none", "server", or "client".'
    )
    _add_output_flag(env)

    res = set_kinds.add_parser(
        "resources",
        help="Update resource requests/limits on objects with pod templates",
        description="Specify compute resource requirements (CPU, memory) for the containers of a pod "
        "template: kubectl-kruise set resources (TYPE NAME | TYPE/NAME) [-c CONTAINERS] "
        "[--limits=cpu=200m,memory=512Mi] [--requests=cpu=100m,memory=256Mi]. "
        "Types: cloneset (clone), asts, daemon, deployment (deploy), statefulset (sts), daemonset (ds).",
        parents=[globals_],
    )
    res.add_argument("arguments", nargs="*", metavar="ARG")
    res.add_argument("-c", "--containers", default="*", help="The names of containers to change (wildcards).")
    res.add_argument(
        "--limits", default="", help="The resource requirement limits, e.g. 'cpu=100m,memory=256Mi'."
    )
    res.add_argument(
        "--requests", default="", help="The resource requirement requests, e.g. 'cpu=100m,memory=256Mi'."
    )
    res.add_argument(
        "--dry-run", type=parse_dry_run, default="none", help='Must be "none", "server", or "client".'
    )
    _add_output_flag(res)

    _add_set_object_commands(set_kinds, globals_)

    exp = sub.add_parser(
        "expose",
        help="Take a workload (e.g. deployment, cloneset) and expose it as a new Kubernetes Service",
        description="Expose a resource as a new Kubernetes service: kubectl-kruise expose (TYPE NAME | "
        "TYPE/NAME) [--port=port] [--protocol=TCP|UDP|SCTP] [--target-port=number-or-name] [--name=name] "
        "[--type=type]. Possible resources: cloneset (clone), deployment (deploy).",
        parents=[globals_],
    )
    _add_output_flag(exp)
    exp.add_argument("resources", nargs="*", metavar="(TYPE NAME | TYPE/NAME)")
    exp.add_argument(
        "--port", default="", help="The port the service serves on (default: the container ports)."
    )
    exp.add_argument("--target-port", default="", help="Name or number of the container port to direct to.")
    exp.add_argument("--protocol", default="", help="The network protocol for the service (default: TCP).")
    exp.add_argument("--name", default="", help="The name for the newly created object.")
    exp.add_argument(
        "--type", dest="service_type", default="", help="ClusterIP, NodePort, LoadBalancer or ExternalName."
    )
    exp.add_argument(
        "-l", "--labels", default="", help="Labels to apply to the service created by this call."
    )
    exp.add_argument("--cluster-ip", default="", help="ClusterIP to assign ('None' for a headless service).")
    exp.add_argument(
        "--external-ip", default="", help="Additional external IP address to accept for the service."
    )
    exp.add_argument("--session-affinity", default="", help="None or ClientIP.")
    exp.add_argument(
        "--dry-run", type=parse_dry_run, default="none", help='Must be "none", "server", or "client".'
    )

    resize = sub.add_parser(
        "scale",
        help="Set a new size for a Deployment, ReplicaSet, CloneSet, or Advanced StatefulSet",
        description="Set a new size for a Deployment, ReplicaSet, CloneSet, or Advanced StatefulSet: "
        "kubectl-kruise scale [--resource-version=version] [--current-replicas=count] --replicas=COUNT "
        "(TYPE NAME | TYPE/NAME). If --current-replicas or --resource-version is specified, it is "
        "validated before the scale is attempted.",
        parents=[globals_],
    )
    _add_output_flag(resize)
    resize.add_argument("resources", nargs="*", metavar="(TYPE NAME | TYPE/NAME)")
    resize.add_argument(
        "--replicas", type=int, default=None, help="The new desired number of replicas. Required."
    )
    resize.add_argument(
        "--current-replicas", type=int, default=-1,
        help="Precondition for current size; -1 (default) for no condition.",
    )  # fmt: skip
    resize.add_argument("--resource-version", default="", help="Precondition for resource version.")
    resize.add_argument(
        "--timeout", type=parse_duration, default=0.0,
        help="How long to wait for the new size to be reached (0: don't wait).",
    )  # fmt: skip
    resize.add_argument(
        "--all", type=parse_bool, default=False,
        help="Select all resources in the namespace of the specified resource types",
    )  # fmt: skip
    resize.add_argument("-l", "--selector", default="", help="Selector (label query) to filter on.")
    resize.add_argument(
        "--dry-run", type=parse_dry_run, default="none", help='Must be "none", "server", or "client".'
    )

    scale = sub.add_parser(
        "scaledown",
        help="Scaledown a cloneset with selective Pods",
        description="Scaledown a cloneset with selective Pods: "
        "kubectl-kruise scaledown cloneset/NAME --pods a,b",
        parents=[globals_],
    )
    _add_output_flag(scale)
    scale.add_argument("resources", nargs="*", metavar="CLONESET")
    scale.add_argument("--pods", default="", help="Name of the pods to delete")
    _add_migrate(sub, globals_)
    _add_exec_get_describe(sub, globals_)
    return root


def _add_exec_get_describe(sub: Any, globals_: argparse.ArgumentParser) -> None:
    """kruise-tools' `exec`, `get` and `describe rollout`, with its flag names and defaults."""
    exe = sub.add_parser(
        "exec",
        help="Execute a command in a container",
        description="Execute a command in a container: kubectl-kruise exec (POD | TYPE/NAME) [-c CONTAINER] "
        "[-S SIDECARSET_CONTAINER] [flags] -- COMMAND [args...]. For TYPE/NAME the most active pod of the "
        "object is chosen; the stream runs through kubectl exec.",
        parents=[globals_],
    )
    exe.add_argument("arguments", nargs="*", metavar="(POD | TYPE/NAME)")
    exe.add_argument(
        "-c", "--container", default="",
        help="Container name. If omitted, the first container in the pod will be chosen",
    )  # fmt: skip
    exe.add_argument(
        "-S", "--sidecar", default="",
        help="SidecarSet container name. When sidecarset is hotUpgrade, the working container will be chosen",
    )  # fmt: skip
    exe.add_argument("-i", "--stdin", action="store_true", help="Pass stdin to the container")
    exe.add_argument("-t", "--tty", action="store_true", help="Stdin is a TTY")
    exe.add_argument(
        "--pod-running-timeout", type=parse_duration, default=60.0,
        help="How long to wait until at least one pod is running (e.g. 5s, 2m). Default 1m0s.",
    )  # fmt: skip

    get = sub.add_parser(
        "get",
        help="Display one or many resources",
        description="Display one or many resources related to kruise: kubectl-kruise get all [-n NS], or "
        "kubectl-kruise get RESOURCE [NAME...] with RESOURCE one of the kinds `get all` lists "
        "(clonesets.apps.kruise.io, ...).",
        parents=[globals_],
    )
    get.add_argument("arguments", nargs="*", metavar="all | RESOURCE [NAME...]")

    describe = sub.add_parser(
        "describe",
        help="Show details of a specific resource or group of resources",
        description="Show details of a rollout: kubectl-kruise describe rollout NAME.",
        parents=[globals_],
    )
    describe_kinds = describe.add_subparsers(dest="describe_kind", metavar="SUBCOMMAND")
    rollout = describe_kinds.add_parser(
        "rollout",
        aliases=["rollouts", "ro"],
        help="Get details about a rollout",
        description="Get details about and visual representation of a Kruise Rollout (rollouts.kruise.io): "
        "kubectl-kruise describe rollout NAME [-w] [--timeout=SECONDS] [--all] [--no-color].",
        parents=[globals_],
    )
    rollout.add_argument("names", nargs="*", metavar="NAME")
    rollout.add_argument(
        "-w", "--watch", type=parse_bool, default=False, help="Watch for changes to the rollout"
    )
    rollout.add_argument(
        "--no-color", type=parse_bool, default=False, help="If true, print output without color"
    )
    rollout.add_argument("--timeout", type=int, default=0, help="Timeout after specified seconds")
    rollout.add_argument(
        "--all", dest="all_pods", type=parse_bool, default=False, help="Show all pods in the rollout"
    )


def _add_dry_run_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dry-run", type=parse_dry_run, default="none", help='Must be "none", "server", or "client".'
    )


def _add_set_object_commands(set_kinds: Any, globals_: argparse.ArgumentParser) -> None:
    """`set serviceaccount|selector|subject`, with kruise-tools' flag names."""
    account = set_kinds.add_parser(
        "serviceaccount",
        aliases=["sa"],
        help="Update ServiceAccount of a resource",
        description="Update ServiceAccount of pod template resources: kubectl-kruise set serviceaccount "
        "(TYPE NAME | TYPE/NAME) SERVICE_ACCOUNT. Types: cloneset (clone), asts, daemon, deployment "
        "(deploy), statefulset (sts), daemonset (ds), replicaset (rs), replicationcontroller (rc), job, pod.",
        parents=[globals_],
    )
    account.add_argument("arguments", nargs="*", metavar="ARG")
    _add_dry_run_flag(account)
    _add_output_flag(account)

    selector = set_kinds.add_parser(
        "selector",
        help="Set the selector on a resource",
        description="Set the selector on a Service, replacing the old one: kubectl-kruise set selector "
        "(TYPE NAME | TYPE/NAME) EXPRESSIONS [--resource-version=version]. "
        "Selectors can only be set on Service objects.",
        parents=[globals_],
    )
    selector.add_argument("arguments", nargs="*", metavar="ARG")
    selector.add_argument(
        "--resource-version", default="",
        help="If non-empty, the update only succeeds if this is the current resource-version of the object.",
    )  # fmt: skip
    _add_dry_run_flag(selector)
    _add_output_flag(selector)

    subject = set_kinds.add_parser(
        "subject",
        help="Update User, Group or ServiceAccount in a RoleBinding/ClusterRoleBinding",
        description="Update User, Group or ServiceAccount in a RoleBinding/ClusterRoleBinding: "
        "kubectl-kruise set subject (TYPE NAME | TYPE/NAME) [--user=username] [--group=groupname] "
        "[--serviceaccount=namespace:serviceaccountname].",
        parents=[globals_],
    )
    subject.add_argument("arguments", nargs="*", metavar="ARG")
    subject.add_argument("--user", action="append", default=[], help="Usernames to bind to the role")
    subject.add_argument("--group", action="append", default=[], help="Groups to bind to the role")
    subject.add_argument(
        "--serviceaccount", action="append", default=[], help="Service accounts to bind to the role"
    )
    _add_dry_run_flag(subject)
    _add_output_flag(subject)


def _add_migrate(sub: Any, globals_: argparse.ArgumentParser) -> None:
    """kruise-tools' `migrate [DST_KIND] --from [SRC_KIND] [flags]`, with its flag names and defaults."""
    migrate = sub.add_parser(
        "migrate",
        help="Migrate from K8s original workloads to Kruise workloads",
        description="Migrate from K8s original workloads to Kruise workloads: "
        "kubectl-kruise migrate CloneSet --from Deployment -n NS --src-name SRC --dst-name DST "
        "[--create [--copy]] [--replicas N] [--max-surge N] [--timeout-seconds N]",
        parents=[globals_],
    )
    migrate.add_argument("kinds", nargs="*", metavar="DST_KIND")
    migrate.add_argument(
        "--from", dest="source_kind", default="", help="Type of the source workload (e.g. Deployment)."
    )
    migrate.add_argument("--src-name", default="", help="Name of the source workload.")
    migrate.add_argument("--dst-name", default="", help="Name of the destination workload.")
    migrate.add_argument(
        "--create",
        type=parse_bool,
        default=False,
        help="Create dst workload with replicas=0 from src workload.",
    )
    migrate.add_argument(
        "--copy", type=parse_bool, default=False, help="Copy replicas from src workload when create."
    )
    migrate.add_argument(
        "--replicas", type=int, default=-1,
        help="The replicas needs to migrate, -1 indicates all replicas in src workload.",
    )  # fmt: skip
    migrate.add_argument("--max-surge", type=int, default=1, help="Max surge during migration.")
    migrate.add_argument(
        "--timeout-seconds", type=int, default=-1,
        help="Timeout seconds for migration, -1 indicates no limited.",
    )  # fmt: skip


def normalize_argv(argv: Sequence[str]) -> list[str]:
    """Give bare boolean / optional-value flags their implied value, so argparse never mistakes
    the next argument for that value."""
    return [_BARE_FLAGS.get(arg, arg) for arg in argv]


def parse(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """Parse, taking everything after `--` as positionals verbatim (argparse before 3.12 drops
    or rejects a `--` met inside a subcommand)."""
    argv = list(argv)
    trailing: list[str] = []
    dashed = "--" in argv
    if dashed:
        at = argv.index("--")
        argv, trailing = argv[:at], argv[at + 1 :]
    args = parser.parse_args(normalize_argv(argv))
    if args.command == "exec":  # kruise-tools tells `exec POD CMD` from `exec POD -- CMD`
        args.exec_command = trailing if dashed else None
    elif trailing:
        field = {"create": "job_command", "set": "arguments"}.get(args.command, "resources")
        if not hasattr(args, field):
            parser.error(f"unrecognized arguments: {' '.join(trailing)}")
        setattr(args, field, [*getattr(args, field), *trailing])
    return args
