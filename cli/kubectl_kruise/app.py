"""`kubectl-kruise`: check the arguments, connect, run one command, report.

Output goes to stdout, `error: ...` lines to stderr, and the exit code is 1 on any error, as
kubectl does. The grammar lives in `parser`, each command in its own module.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import TextIO

from kruise.cli.kubectl_kruise import (
    approve,
    commands,
    createbroadcastjob,
    createcrr,
    createjob,
    describerollout,
    execpod,
    expose,
    getall,
    kinds,
    migrate,
    objects,
    scale,
    setenv,
    setimage,
    setresources,
    setselector,
    setserviceaccount,
    setsubject,
)
from kruise.cli.kubectl_kruise.connection import ConnectionOptions
from kruise.cli.kubectl_kruise.errors import ExitStatus, PluginError
from kruise.cli.kubectl_kruise.output import Printer, api_error_text, error_line
from kruise.cli.kubectl_kruise.parser import build_parser, parse
from kruise.kube.client import Client
from kruise.kube.errors import ApiError

Runner = Callable[[Client, str, Printer], Awaitable[list[str]]]


def plan(args: argparse.Namespace, err: TextIO = sys.stderr) -> Runner:
    """Check everything that needs no server (so a typo fails before connecting), then bind the
    command to its arguments."""
    if args.command in ("exec", "get", "describe"):
        return plan_inspection(args, err)
    if args.command == "create" and args.create_kind in ("broadcastJob", "broadcastjob"):
        bcj_options = createbroadcastjob.CreateBroadcastJobOptions(
            name=args.name,
            image=args.image,
            source=args.source,
            command=tuple(args.job_command),
            dry_run=args.dry_run,
        )
        bcj_options.validate()
        return lambda c, ns, p: createbroadcastjob.create_broadcastjob(c, ns, bcj_options, p)
    if args.command == "create" and args.create_kind != "job":
        crr_options = createcrr.CreateCRROptions(
            name=args.name,
            pod=args.pod,
            containers=createcrr.parse_containers(args.containers),
            unready_grace_period_seconds=args.unready_grace,
            min_started_seconds=args.min_started,
        )
        crr_options.validate()
        return lambda c, ns, p: createcrr.create_crr(c, ns, crr_options, p)
    if args.command == "create":
        options = createjob.CreateJobOptions(
            name=args.name,
            image=args.image,
            source=args.source,
            command=tuple(args.job_command),
            dry_run=args.dry_run,
        )
        options.validate()
        return lambda c, ns, p: createjob.create_job(c, ns, options, p)
    if args.command == "set" and args.set_kind == "env":
        resources, env_options = setenv.options_from_arguments(
            list(args.arguments), args.env, args.containers, args.list, args.overwrite
        )
        env_targets = kinds.parse_targets(resources)
        return lambda c, ns, p: setenv.set_env(c, ns, env_targets, env_options, p)
    if args.command == "set" and args.set_kind == "resources":
        res_targets = kinds.parse_targets(list(args.arguments))
        res_options = setresources.options_from_flags(args.limits, args.requests, args.containers)
        return lambda c, ns, p: setresources.set_resources(c, ns, res_targets, res_options, p)
    if args.command == "set" and args.set_kind in ("serviceaccount", "sa"):
        sa_targets, account = setserviceaccount.split_arguments(list(args.arguments))
        return lambda c, ns, p: setserviceaccount.set_serviceaccount(c, ns, sa_targets, account, p)
    if args.command == "set" and args.set_kind == "selector":
        sel_targets, selector = setselector.split_arguments(list(args.arguments))
        version = args.resource_version
        return lambda c, ns, p: setselector.set_selector(c, ns, sel_targets, selector, version, p)
    if args.command == "set" and args.set_kind == "subject":
        subject_targets = kinds.parse_targets(list(args.arguments), objects.SET_TARGETS)
        subjects = setsubject.SubjectOptions(tuple(args.user), tuple(args.group), tuple(args.serviceaccount))
        subjects.validate(subject_targets)
        return lambda c, ns, p: setsubject.set_subject(c, ns, subject_targets, subjects, p)
    if args.command == "set":
        split = setimage.split_arguments(list(args.arguments))
        image_targets = kinds.parse_targets(split.resources, setimage.TARGETS)
        return lambda c, ns, p: setimage.set_image(c, ns, image_targets, split.images, p)
    if args.command == "scale":
        if args.replicas is None:
            raise scale.ScaleError('required flag(s) "replicas" not set')
        sizing = scale.ScaleOptions(
            replicas=args.replicas,
            current_replicas=args.current_replicas,
            resource_version=args.resource_version,
            timeout=args.timeout,
            selector=args.selector,
            all=args.all,
        )
        sizing.validate()
        selection = scale.select(list(args.resources), args.selector, args.all)
        return lambda c, ns, p: scale.scale(c, ns, selection, sizing, p)
    if args.command == "migrate":
        moving = migrate.MigrateOptions.complete(
            args.namespace,
            list(args.kinds),
            args.source_kind,
            args.src_name,
            args.dst_name,
            create=args.create,
            copy=args.copy,
            replicas=args.replicas,
            max_surge=args.max_surge,
            timeout_seconds=args.timeout_seconds,
        )
        return lambda c, ns, p: migrate.run(c, moving, p)
    if args.command == "rollout" and args.action == "approve":
        approving = kinds.parse_targets(list(args.resources), objects.APPROVE_TARGETS)
        return lambda c, ns, p: approve.rollout_approve(c, ns, approving, p)
    targets = kinds.parse_targets(list(args.resources))
    if args.command == "expose":
        exposing = expose.ExposeOptions(
            port=args.port,
            target_port=args.target_port,
            protocol=args.protocol,
            name=args.name,
            service_type=args.service_type,
            labels=args.labels,
            cluster_ip=args.cluster_ip,
            external_ip=args.external_ip,
            session_affinity=args.session_affinity,
            dry_run=args.dry_run,
        )
        exposing.validate()
        return lambda c, ns, p: expose.expose(c, ns, targets, exposing, p)
    if args.command == "scaledown":
        if not args.pods:
            raise commands.CommandError("must specify one pod name")
        return lambda c, ns, p: commands.scaledown(c, ns, targets, args.pods, p)
    action = args.action
    if action == "status":
        status = commands.StatusOptions(
            watch=args.watch, revision=args.revision, timeout=args.timeout or None, detail=args.detail
        )
        return lambda c, ns, p: commands.rollout_status(c, ns, targets, status, p)
    if action == "pause":
        return lambda c, ns, p: commands.rollout_pause(c, ns, targets, p)
    if action == "resume":
        return lambda c, ns, p: commands.rollout_resume(c, ns, targets, p)
    if action == "restart":
        return lambda c, ns, p: commands.rollout_restart(c, ns, targets, p)
    if action == "history":
        return lambda c, ns, p: commands.rollout_history(c, ns, targets, args.revision, p)
    return lambda c, ns, p: commands.rollout_undo(c, ns, targets, args.to_revision, p)


def plan_inspection(args: argparse.Namespace, err: TextIO) -> Runner:
    """`exec`, `get` and `describe rollout`: the commands that read rather than change."""
    if args.command == "exec":
        execution = execpod.ExecOptions.from_arguments(
            list(args.arguments),
            args.exec_command,
            err,
            container=args.container,
            sidecar_container=args.sidecar,
            stdin=args.stdin,
            tty=args.tty,
            pod_running_timeout=args.pod_running_timeout,
            kubeconfig=args.kubeconfig,
            context=args.context,
        )
        return lambda c, ns, p: execpod.exec_pod(c, ns, execution, p)
    if args.command == "get":
        listing = getall.GetOptions.from_arguments(list(args.arguments))
        return lambda c, ns, p: getall.get(c, ns, listing, p)
    if not args.names:
        raise describerollout.DescribeError("required rollout name not specified")
    describing = describerollout.DescribeOptions(
        name=args.names[0],
        watch=args.watch,
        no_color=args.no_color,
        all_pods=args.all_pods,
        timeout_seconds=args.timeout,
    )
    return lambda c, ns, p: describerollout.describe_rollout(c, ns, describing, p)


async def run(argv: Sequence[str], out: TextIO, err: TextIO) -> int:
    """The whole command; returns the exit code. Usage errors exit through argparse."""
    parser = build_parser()
    args = parse(parser, argv)
    if args.command is None:
        parser.print_help(out)
        return 0
    subcommands = (
        ("rollout", "action"),
        ("create", "create_kind"),
        ("set", "set_kind"),
        ("describe", "describe_kind"),
    )
    for command, field in subcommands:
        if args.command == command and getattr(args, field) is None:
            parser.parse_args([command, "--help"])
    connection = ConnectionOptions(args.kubeconfig, args.context, args.namespace, args.request_timeout)
    try:
        runner = plan(args, err)
        namespace = connection.resolve_namespace()
        client = await connection.client()
    except PluginError as exc:
        err.write(error_line(str(exc)))
        return 1
    try:
        printer = Printer(out, getattr(args, "output", ""), getattr(args, "dry_run", "none"), err)
        errors = await runner(client, namespace, printer)
    except PluginError as exc:
        errors = [str(exc)]
    except ApiError as exc:
        errors = [api_error_text(exc)]
    except ExitStatus as exc:
        return exc.code
    finally:
        await client.close()
    for text in errors:
        err.write(error_line(text))
    return 1 if errors else 0


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry (`kubectl-kruise`); kubectl runs it as `kubectl kruise ...`."""
    try:
        code = asyncio.run(run(sys.argv[1:] if argv is None else argv, sys.stdout, sys.stderr))
    except KeyboardInterrupt:
        code = 130
    sys.exit(code)
