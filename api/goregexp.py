"""Regular expressions that users write, compiled and matched as upstream's Go `regexp` does.

Upstream compiles user patterns (a SidecarSet's `resourcesPolicy.targetContainersNameRegex`, the
`allowedAnnotationKeyExprs` of kruise-configuration's patch-pod-metadata whitelist) with Go's
`regexp.Compile` and tests them with `MatchString`: RE2 syntax, leftmost-first, an unanchored
search. Python's `re` accepts more (lookarounds, backreferences, possessive quantifiers) and
matches some things differently (`\\d`, `\\w`, `\\s` are Unicode there, `$` also matches before a
final newline), so these patterns go through Google's RE2 (`google-re2`), the engine Go's package
was modelled on, with its default Perl-like options — Go's `regexp.Compile` flags.

RE2 and Go 1.23's parser (upstream's toolchain) still differ in a few places; `compile` closes
them by scanning the pattern before RE2 sees it:
  * `\\C` (any byte) is refused by Go, accepted by RE2;
  * a named group `(?P<name>` / `(?<name>` needs an ASCII `[A-Za-z0-9_]+` name in Go (RE2 takes
    Unicode letters); `(?<` not closed by `>` (a lookbehind `(?<=`, `(?<!`) is Go's "invalid named
    capture" with the rest of the pattern.
Errors read as Go prints them (`error parsing regexp: <code>: `<expr>``); RE2's wording is
mapped to Go's error codes. Known remaining differences: RE2's 8 MiB program budget refuses some
huge patterns Go still builds (`\\pL{1000}`, reported as Go's "expression too large"), and Go's
limit of 1000 nested subexpressions is not checked.
"""

from __future__ import annotations

from dataclasses import dataclass

import re2

# Go's regexp/syntax ErrorCode strings.
ERR_INVALID_CHAR_CLASS = "invalid character class"
ERR_INVALID_CHAR_RANGE = "invalid character class range"
ERR_INVALID_ESCAPE = "invalid escape sequence"
ERR_INVALID_NAMED_CAPTURE = "invalid named capture"
ERR_INVALID_PERL_OP = "invalid or unsupported Perl syntax"
ERR_INVALID_REPEAT_OP = "invalid nested repetition operator"
ERR_INVALID_REPEAT_SIZE = "invalid repeat count"
ERR_INVALID_UTF8 = "invalid UTF-8"
ERR_MISSING_BRACKET = "missing closing ]"
ERR_MISSING_PAREN = "missing closing )"
ERR_MISSING_REPEAT_ARGUMENT = "missing argument to repetition operator"
ERR_TRAILING_BACKSLASH = "trailing backslash at end of expression"
ERR_UNEXPECTED_PAREN = "unexpected )"
ERR_LARGE = "expression too large"

# RE2's error text (before ": <arg>") -> Go's code for the same failure.
_RE2_TO_GO = {
    "invalid escape sequence": ERR_INVALID_ESCAPE,
    "invalid character class": ERR_INVALID_CHAR_CLASS,
    "invalid character class range": ERR_INVALID_CHAR_RANGE,
    "missing ]": ERR_MISSING_BRACKET,
    "missing )": ERR_MISSING_PAREN,
    "unexpected )": ERR_UNEXPECTED_PAREN,
    "trailing \\": ERR_TRAILING_BACKSLASH,
    "no argument for repetition operator": ERR_MISSING_REPEAT_ARGUMENT,
    "invalid repetition size": ERR_INVALID_REPEAT_SIZE,
    "bad repetition operator": ERR_INVALID_REPEAT_OP,
    "invalid perl operator": ERR_INVALID_PERL_OP,
    "invalid UTF-8": ERR_INVALID_UTF8,
    "invalid named capture group": ERR_INVALID_NAMED_CAPTURE,
}
_RE2_TOO_LARGE = "pattern too large - compile failed"


class GoRegexpError(ValueError):
    """A pattern Go's `regexp.Compile` refuses; `str()` is Go's `*syntax.Error` text."""

    def __init__(self, code: str, expr: str) -> None:
        self.code = code
        self.expr = expr
        super().__init__(f"error parsing regexp: {code}: `{expr}`")


def _options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # RE2 would print every refused user pattern to stderr
    return options


_OPTIONS = _options()


@dataclass(frozen=True)
class GoRegexp:
    """A compiled user pattern; `match_string` is Go's `(*Regexp).MatchString`."""

    pattern: str
    _compiled: re2._Regexp

    def match_string(self, text: str) -> bool:
        """Whether the pattern matches anywhere in `text` (unanchored, as Go's MatchString)."""
        return self._compiled.search(_valid_utf8(text)) is not None


def _valid_utf8(text: str) -> str:
    """Lone surrogates (only a JSON `\\udXXX` escape makes them) become U+FFFD, as Go decodes them."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)
    return text


def compile(pattern: str) -> GoRegexp:
    """Go's `regexp.Compile(pattern)`; raises GoRegexpError with Go's message when refused."""
    try:
        pattern.encode("utf-8")
    except UnicodeEncodeError as exc:
        # Only a JSON `\udXXX` escape makes a lone surrogate; shown as U+FFFD so the message encodes.
        raise GoRegexpError(ERR_INVALID_UTF8, _valid_utf8(pattern[exc.start :])) from None
    go_only = _go_only_error(pattern)
    if go_only is not None:
        position, error = go_only
        # RE2 and Go both parse left to right: an error RE2 finds before `position` is Go's first.
        # (An open group is not an error at a cut point: Go reports a missing ")" at the end.)
        earlier = _re2_error(pattern[:position])
        if earlier is not None and earlier.code != ERR_MISSING_PAREN:
            error = _re2_error(pattern) or earlier
        raise error
    try:
        compiled = re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        raise _translate(pattern, exc) from None
    return GoRegexp(pattern, compiled)


def _re2_error(pattern: str) -> GoRegexpError | None:
    try:
        re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        return _translate(pattern, exc)
    return None


def _translate(pattern: str, exc: re2.error) -> GoRegexpError:
    raw = exc.args[0] if exc.args else b""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    if text == _RE2_TOO_LARGE:
        return GoRegexpError(ERR_LARGE, pattern)
    head, sep, arg = text.partition(": ")
    code = _RE2_TO_GO.get(head if sep else text)
    if code is None:
        return GoRegexpError(text, pattern)
    if code == ERR_TRAILING_BACKSLASH:
        return GoRegexpError(code, "")
    return GoRegexpError(code, arg)


def _go_only_error(pattern: str) -> tuple[int, GoRegexpError] | None:
    """The first construct Go refuses but RE2 accepts, with its offset; None when there is none.

    A light lexer in Go's order: `\\Q...\\E` is literal, a `[...]` class is skipped whole (with
    `[:name:]` and escapes inside it), escapes take one character, `(?P<` / `(?<` open named groups.
    """
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            nxt = pattern[i + 1 : i + 2]
            if nxt == "Q":
                end = pattern.find("\\E", i + 2)
                i = n if end < 0 else end + 2
                continue
            if nxt == "C":
                return i, GoRegexpError(ERR_INVALID_ESCAPE, "\\C")
            i += 2
        elif c == "[":
            i = _class_end(pattern, i)
        elif (named := _named_group_start(pattern, i)) is not None:
            start = named
            end = pattern.find(">", i)
            if end < 0:
                return i, GoRegexpError(ERR_INVALID_NAMED_CAPTURE, pattern[i:])
            if not _valid_capture_name(pattern[start:end]):
                return i, GoRegexpError(ERR_INVALID_NAMED_CAPTURE, pattern[i : end + 1])
            i = end + 1
        else:
            i += 1
    return None


def _named_group_start(pattern: str, i: int) -> int | None:
    """Where the name starts when a named group opens at `i` (Go wants something after `<`)."""
    if pattern.startswith("(?P<", i) and len(pattern) - i > 4:
        return i + 4
    if pattern.startswith("(?<", i) and len(pattern) - i > 3:
        return i + 3
    return None


def _class_end(pattern: str, start: int) -> int:
    """The offset after the class opening at `start` (`]` first or after `^` is a literal)."""
    i = start + 1
    if pattern.startswith("^", i):
        i += 1
    first = True
    while i < len(pattern) and (pattern[i] != "]" or first):
        first = False
        if pattern.startswith("[:", i) and (close := pattern.find(":]", i + 2)) >= 0:
            i = close + 2
        elif pattern[i] == "\\":
            i += 2
        else:
            i += 1
    return i + 1


def _valid_capture_name(name: str) -> bool:
    """Go's isValidCaptureName: one or more ASCII letters, digits or underscores."""
    return bool(name) and all(ch == "_" or (ch.isascii() and ch.isalnum()) for ch in name)
