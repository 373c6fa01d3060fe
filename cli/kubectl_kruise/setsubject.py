"""`set subject (TYPE NAME | TYPE/NAME)... [--user=U]... [--group=G]... [--serviceaccount=NS:NAME]...`.

Adds users, groups and service accounts to a RoleBinding or ClusterRoleBinding, as kruise-tools
(and kubectl) do: subjects already bound are not added twice, an unchanged binding is neither
written nor printed, every named object is read before any is written, and other kinds are refused
by name. A service account without a namespace (`:name`) takes the command's namespace, which a
ClusterRoleBinding has none of to lend, so there it is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kruise.cli.kubectl_kruise import kinds, objects
from kruise.cli.kubectl_kruise.errors import PluginError
from kruise.cli.kubectl_kruise.output import Printer
from kruise.cli.kubectl_kruise.templatepatch import Edit, PatchCommand, Plan, patch_each
from kruise.kube.client import Client

COMMAND = PatchCommand("subjects updated", "failed to patch subjects to rolebinding: ", read_all_first=True)
RBAC_GROUP = "rbac.authorization.k8s.io"
SUBJECT_FIELDS = ("kind", "apiGroup", "name", "namespace")


class SetSubjectError(PluginError):
    """Bad flags or a kind without subjects; upstream's wording."""


@dataclass(frozen=True)
class SubjectOptions:
    users: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    service_accounts: tuple[str, ...] = ()

    def validate(self, targets: list[kinds.Target]) -> None:
        if not (self.users or self.groups or self.service_accounts):
            raise SetSubjectError("you must specify at least one value of user, group or serviceaccount")
        for account in self.service_accounts:
            tokens = account.split(":")
            if len(tokens) != 2 or not tokens[1]:
                raise SetSubjectError("serviceaccount must be <namespace>:<name>")
            if not tokens[0] and any(t.workload is objects.CLUSTERROLEBINDING for t in targets):
                raise SetSubjectError(
                    "serviceaccount must be <namespace>:<name>, namespace must be specified"
                )

    def subjects(self, namespace: str) -> list[dict[str, str]]:
        """Users, then groups, then service accounts, each sorted and without repeats (as upstream)."""
        out = [{"kind": "User", "apiGroup": RBAC_GROUP, "name": user} for user in sorted(set(self.users))]
        out += [
            {"kind": "Group", "apiGroup": RBAC_GROUP, "name": group} for group in sorted(set(self.groups))
        ]
        for account in sorted(set(self.service_accounts)):
            account_namespace, _, name = account.partition(":")
            out.append({"kind": "ServiceAccount", "name": name, "namespace": account_namespace or namespace})
        return out


def _key(subject: dict[str, Any]) -> tuple[str, ...]:
    return tuple(str(subject.get(field) or "") for field in SUBJECT_FIELDS)


def added_subjects(existing: list[dict[str, Any]], wanted: list[dict[str, str]]) -> list[dict[str, str]]:
    """The wanted subjects the binding does not have yet, compared field by field as Go's `==`."""
    have = {_key(subject) for subject in existing}
    return [subject for subject in wanted if _key(subject) not in have]


def plan(options: SubjectOptions, namespace: str) -> Plan:
    wanted = options.subjects(namespace)

    def edit(target: kinds.Target, obj: dict[str, Any]) -> Edit:
        if target.workload not in (objects.ROLEBINDING, objects.CLUSTERROLEBINDING):
            raise SetSubjectError(
                f"{objects.object_name(target)} setting subjects is only supported for "
                "RoleBinding/ClusterRoleBinding"
            )
        existing = list(obj.get("subjects") or [])
        added = added_subjects(existing, wanted)
        if not added:
            return Edit()
        # The test fails the patch if the subjects changed since they were read (none lost, none doubled).
        guard = [{"op": "test", "path": "/subjects", "value": existing}] if existing else []
        return Edit([*guard, {"op": "add", "path": "/subjects", "value": existing + added}])

    return edit


async def set_subject(
    client: Client, namespace: str, targets: list[kinds.Target], options: SubjectOptions, printer: Printer
) -> list[str]:
    return await patch_each(client, namespace, targets, plan(options, namespace), COMMAND, printer)
