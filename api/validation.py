"""Field errors in the apiserver's wording, and the generic validators every kind reuses.

Validation functions return lists of FieldError instead of raising, so that the webhook can
report every problem at once (as kube-apiserver does) and tests can compare exact messages.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from kruise.api.common import SHAPE_ERROR, LabelSelector, _int_or_percent


class ErrorType(Enum):
    """field.ErrorType: the value is the text the apiserver prints, the name the cause reason suffix."""

    NotFound = "Not found"
    Required = "Required value"
    Duplicate = "Duplicate value"
    Invalid = "Invalid value"
    NotSupported = "Unsupported value"
    Forbidden = "Forbidden"
    TooLong = "Too long"
    TooMany = "Too many"
    Internal = "Internal error"


_OMIT = object()


def _render(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if value is None:
        return "null"
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class FieldError:
    """One problem at one field path, rendered exactly like k8s.io/apimachinery field.Error."""

    type: ErrorType
    field: str
    value: Any = _OMIT
    detail: str = ""

    def body(self) -> str:
        bare = (ErrorType.Required, ErrorType.Forbidden, ErrorType.Internal, ErrorType.TooLong)
        if self.type in bare or self.value is _OMIT:
            text = self.type.value
        else:
            text = f"{self.type.value}: {_render(self.value)}"
        if self.detail:
            text += f": {self.detail}"
        return text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"


def changed_outside(new: dict[str, Any], old: dict[str, Any], mutable: tuple[str, ...]) -> bool:
    """Whether any top-level key other than `mutable` differs: upstream's "only these spec fields may
    change" rule, which compares the whole spec after blanking the allowed fields."""
    return {k: v for k, v in new.items() if k not in mutable} != {
        k: v for k, v in old.items() if k not in mutable
    }


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(ErrorType.Invalid, path, value, detail)


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(ErrorType.Required, path, _OMIT, detail)


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(ErrorType.Forbidden, path, _OMIT, detail)


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError(ErrorType.Duplicate, path, value)


def not_supported(path: str, value: Any, supported: list[str]) -> FieldError:
    detail = "supported values: " + ", ".join(json.dumps(s) for s in supported) if supported else ""
    return FieldError(ErrorType.NotSupported, path, value, detail)


def too_long(path: str, max_length: int) -> FieldError:
    return FieldError(ErrorType.TooLong, path, _OMIT, f"must have at most {max_length} bytes")


def aggregate_message(errors: list[FieldError]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message alone, several in brackets, duplicates dropped."""
    seen: list[str] = []
    for err in errors:
        text = str(err)
        if text not in seen:
            seen.append(text)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


def to_status(kind: str, group: str, name: str, errors: list[FieldError]) -> dict[str, Any]:
    """apierrors.NewInvalid as a metav1.Status dict (HTTP 422) with one cause per field error."""
    qualified = f"{kind}.{group}" if group else kind
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'{qualified} "{name}" is invalid: {aggregate_message(errors)}',
        "reason": "Invalid",
        "details": {
            "name": name,
            "group": group,
            "kind": kind,
            "causes": [
                {"reason": f"FieldValue{err.type.name}", "message": err.body(), "field": err.field}
                for err in errors
            ],
        },
        "code": 422,
    }


# --- generic validators (apimachinery validation) ---

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")

DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
    "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
QUALIFIED_NAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
    "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
    "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def dns1123_label_errors(value: str) -> list[str]:
    msgs = []
    if len(value) > 63:
        msgs.append("must be no more than 63 characters")
    if not _DNS1123_LABEL.fullmatch(value):
        msgs.append(DNS1123_LABEL_MSG)
    return msgs


def dns1123_subdomain_errors(value: str) -> list[str]:
    msgs = []
    if len(value) > 253:
        msgs.append("must be no more than 253 characters")
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        msgs.append(DNS1123_SUBDOMAIN_MSG)
    return msgs


def qualified_name_errors(value: str) -> list[str]:
    """validation.IsQualifiedName: optional DNS-subdomain prefix, '/', then a 63-char name."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
        msgs: list[str] = []
    elif len(parts) == 2:
        prefix, name = parts
        msgs = []
        if not prefix:
            msgs.append("prefix part must be non-empty")
        else:
            msgs.extend("prefix part " + m for m in dns1123_subdomain_errors(prefix))
    else:
        return [
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and "
            "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
            "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix "
            "and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        msgs.append("name part must be non-empty")
    elif len(name) > 63:
        msgs.append("name part must be no more than 63 characters")
    if name and not _QUALIFIED_NAME.fullmatch(name):
        msgs.append(QUALIFIED_NAME_MSG)
    return msgs


def label_value_errors(value: str) -> list[str]:
    msgs = []
    if len(value) > 63:
        msgs.append("must be no more than 63 characters")
    if not _LABEL_VALUE.fullmatch(value):
        msgs.append(LABEL_VALUE_MSG)
    return msgs


def validate_labels(labels: dict[str, str] | None, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for key, value in (labels or {}).items():
        errs.extend(invalid(path, key, m) for m in qualified_name_errors(key))
        errs.extend(invalid(path, value, m) for m in label_value_errors(value))
    return errs


def validate_label_selector(selector: LabelSelector | None, path: str) -> list[FieldError]:
    """metav1validation.ValidateLabelSelector."""
    if selector is None:
        return []
    errs: list[FieldError] = []
    for i, req in enumerate(selector.match_expressions or []):
        rpath = f"{path}.matchExpressions[{i}]"
        if req.operator in ("In", "NotIn"):
            if not req.values:
                errs.append(
                    required(f"{rpath}.values", "must be specified when `operator` is 'In' or 'NotIn'")
                )
        elif req.operator in ("Exists", "DoesNotExist"):
            if req.values:
                errs.append(
                    forbidden(
                        f"{rpath}.values",
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        else:
            errs.append(invalid(f"{rpath}.operator", req.operator, "not a valid selector operator"))
        errs.extend(invalid(f"{rpath}.key", req.key, m) for m in qualified_name_errors(req.key))
    errs.extend(validate_labels(selector.match_labels, f"{path}.matchLabels"))
    return errs


def validate_nonnegative(value: int | None, path: str) -> list[FieldError]:
    if value is not None and value < 0:
        return [invalid(path, value, "must be greater than or equal to 0")]
    return []


PERCENT_MSG = (
    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', "
    "regex used for validation is '[0-9]+%')"
)


def int_or_percent_errors(value: int | str | None, path: str) -> list[FieldError]:
    """apps ValidatePositiveIntOrPercent: a non-negative int or a well-formed "N%"."""
    if value is None:
        return []
    if isinstance(value, int):
        return validate_nonnegative(value, path)
    if not re.fullmatch(r"[0-9]+%", value):
        return [invalid(path, value, PERCENT_MSG)]
    return []


def percent_over_100(value: int | str | None, path: str) -> list[FieldError]:
    """IsNotMoreThan100Percent."""
    if value is None or not isinstance(value, str):
        return []
    try:
        number, percent = _int_or_percent(value)
    except ValueError:
        return []
    if percent and number > 100:
        return [invalid(path, value, "must not be greater than 100%")]
    return []


@dataclass
class Errors:
    """A small accumulator so validators read top-down: `errs.add(...)`, `errs.extend(...)`."""

    items: list[FieldError] = field(default_factory=list)

    def add(self, err: FieldError) -> None:
        self.items.append(err)

    def extend(self, errs: list[FieldError]) -> None:
        self.items.extend(errs)


def pydantic_errors(exc: Any) -> list[FieldError]:
    """Turn a pydantic ValidationError (wrong types, missing fields) into apiserver-style field errors.

    Union branches (int-or-string) report once per branch in pydantic; they collapse to one error here.
    """
    errs: list[FieldError] = []
    seen: set[str] = set()
    for item in exc.errors():
        path = ""
        for part in item["loc"]:
            if isinstance(part, int):
                path += f"[{part}]"
            elif part in ("int", "str", "bool", "float"):
                continue
            else:
                path += f".{part}" if path else str(part)
        if path in seen:
            continue
        seen.add(path)
        if item["type"] == SHAPE_ERROR:  # inside a schemaless embedded object: name the inner field
            ctx = item["ctx"]
            errs.append(invalid(path + ("." if ctx["at"] and ctx["at"][0] != "[" else "") + ctx["at"],
                                ctx["value"], ctx["rule"]))  # fmt: skip
        elif item["type"] == "missing":
            errs.append(required(path))
        else:
            errs.append(invalid(path, item.get("input"), item["msg"]))
    return errs


JOB_NAME_MAX_LEN = 63
_JOB_NAME_FMT = r"^[a-zA-Z0-9\-]+$"


def validate_job_name(kind: str, name: str | None, generate_name: str | None) -> list[FieldError]:
    """The name rule of upstream's BroadcastJob and AdvancedCronJob webhooks: letters, digits and '-' only
    (no dots, unlike a DNS subdomain), at most 63 characters; generateName when there is no name."""
    if name:
        path, value = "metadata.name", name
    elif generate_name:
        path, value = "metadata.generateName", generate_name
    else:
        return [required("metadata.name", "name or generateName is required")]
    errs: list[FieldError] = []
    if not re.fullmatch(_JOB_NAME_FMT, value):
        message = f"{kind} name must consist of alphanumeric characters or '-'"
        errs.append(
            invalid(
                path, value, f"{message} (e.g. 'example-com', regex used for validation is '{_JOB_NAME_FMT}')"
            )
        )
    if len(value) > JOB_NAME_MAX_LEN:
        errs.append(invalid(path, value, f"must be no more than {JOB_NAME_MAX_LEN} characters"))
    return errs
