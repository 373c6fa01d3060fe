"""The Debian half of kruise-py's image: Debian's own python3.11 and the few libraries it links, no more.

Why not `mmdebstrap --variant=essential`: Debian's Essential set (dpkg, perl-base, coreutils, bash ...) is
there so a system can administer itself; a controller image never does, and those packages are half the
size of slim Debian. Like Google's distroless images, the base is the dependency closure of a few root
packages, unpacked with `dpkg-deb` and without maintainer scripts. What those scripts would have done that
the image needs is done here by hand (the CA bundle, OpenSSL's default-path links, /etc/passwd), and a
`/var/lib/dpkg/status` naming every unpacked package keeps image scanners (trivy, grype) able to
match Debian's security advisories.
"""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import dataclass
from pathlib import Path

# libstdc++6: the manylinux policy lets wheels (grpcio, google-re2) link the system's C++ runtime.
ROOTS = ("python3-minimal", "libpython3.11-stdlib", "libstdc++6", "ca-certificates", "netbase", "base-files")
# Dependencies that only serve maintainer scripts or interactive use: with no dpkg in the image and no
# maintainer script run, nothing in the image calls them.
SKIPPED = frozenset(
    {"dpkg", "debconf", "debconf-2.0", "perl-base", "perl", "install-info", "openssl", "awk", "mawk"}
    | {"mailcap", "mime-support", "tar"}
)
# Kept of /usr/share/doc: the licences (Debian's copyright files must travel with the binaries).
# gconv: glibc's iconv() charset modules (9 MB); Python's codecs are its own and OpenSSL uses none.
DROPPED_PATHS = ("usr/share/man", "usr/share/info", "usr/share/lintian", "usr/share/locale")
DROPPED_PATHS += ("usr/lib/x86_64-linux-gnu/gconv",)
MERGED_USR = {"bin": "usr/bin", "sbin": "usr/sbin", "lib": "usr/lib", "lib64": "usr/lib64"}


class DebianError(RuntimeError):
    pass


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    sha256: str
    control: str  # the package's record in the archive index, for /var/lib/dpkg/status


def _apt_records(names: set[str]) -> dict[str, str]:
    """The candidate record of each of `names` that apt knows as a real package (one apt-cache call)."""
    if not names:
        return {}
    done = subprocess.run(
        ["apt-cache", "show", "--no-all-versions", *sorted(names)],
        capture_output=True,
        text=True,
        check=False,
    )
    records = {}
    for record in done.stdout.split("\n\n"):
        if record.strip():
            records[_fields(record)["Package"]] = record.strip()
    return records


def _fields(record: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    key = ""
    for line in record.splitlines():
        if line.startswith((" ", "\t")) and key:
            fields[key] += "\n" + line
        elif ":" in line:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def _names(depends: str) -> list[list[str]]:
    """`a (>= 1) | b, c:any` -> [[a, b], [c]]: alternatives per dependency, version constraints dropped."""
    groups = []
    for group in filter(None, (g.strip() for g in depends.split(","))):
        groups.append([alt.strip().split(" ")[0].split(":")[0] for alt in group.split("|")])
    return groups


def _apt_pinned(pins: dict[str, str]) -> dict[str, str]:
    """The records of `pins` (name -> version) apt still knows; a version the mirror dropped is absent."""
    if not pins:
        return {}
    wanted = [f"{name}={version}" for name, version in sorted(pins.items())]
    done = subprocess.run(["apt-cache", "show", *wanted], capture_output=True, text=True, check=False)
    records = {}
    for record in done.stdout.split("\n\n"):
        fields = _fields(record) if record.strip() else {}
        if fields and pins.get(fields["Package"]) == fields.get("Version"):
            records[fields["Package"]] = record.strip()
    return records


def resolve(
    roots: tuple[str, ...] = ROOTS, pins: dict[str, str] | None = None, strict: bool = False
) -> list[Package]:
    """The closure of `roots` over Depends and Pre-Depends (first installable alternative), minus SKIPPED.

    With `pins` (a lock file's name -> version), a package resolves to its pinned version while the mirror
    still offers it. Debian's mirror keeps only a suite's current version, so a security update removes
    the pinned one: then the current version is used (the caller reports the drift) unless `strict`,
    which fails instead - a build must not start failing on its own as the mirror moves on."""
    found: dict[str, Package] = {}
    wanted: list[list[str]] = [[root] for root in roots]
    while wanted:
        records = _apt_records({alt for group in wanted for alt in group} - set(found) - SKIPPED)
        level: dict[str, str] = {}
        for group in wanted:
            choices = [alt for alt in group if alt not in SKIPPED]
            if not choices or any(alt in found or alt in level for alt in choices):
                continue
            choice = next((alt for alt in choices if alt in records), None)
            if choice is None:
                raise DebianError(f"package {choices[0]!r}: not in the apt lists (run `apt-get update`)")
            level[choice] = records[choice]
        if pins is not None:
            moved = {n: pins[n] for n, r in level.items() if n in pins and _fields(r)["Version"] != pins[n]}
            level.update(_apt_pinned(moved))
        wanted = []
        for name, record in sorted(level.items()):
            fields = _fields(record)
            version = fields["Version"]
            if strict and pins is not None and pins.get(name) != version:
                raise DebianError(
                    f"package {name!r}: the mirror offers {version}, docker/debian.lock pins "
                    f"{pins.get(name, 'nothing')}; refresh the lock with `make image-lock`"
                )
            found[name] = Package(name, version, fields["SHA256"], record)
            wanted += _names(fields.get("Pre-Depends", "") + "," + fields.get("Depends", ""))
    return sorted(found.values(), key=lambda p: p.name)


def drift(packages: list[Package], pins: dict[str, str]) -> list[str]:
    """How the resolved packages differ from the lock, one line per package (empty: exactly the lock)."""
    lines = [f"{p.name}: locked {pins.get(p.name, 'nothing')}, used {p.version}" for p in packages]
    lines = [line for p, line in zip(packages, lines, strict=True) if pins.get(p.name) != p.version]
    resolved = {p.name for p in packages}
    return lines + [f"{name}: locked {pins[name]}, no longer needed" for name in sorted(set(pins) - resolved)]


def download(packages: list[Package], cache: Path) -> dict[str, Path]:
    """Each package's .deb in `cache` (downloaded once), checked against the archive index's SHA256."""
    cache.mkdir(parents=True, exist_ok=True)

    def cached(package: Package) -> Path | None:
        for deb in sorted(cache.glob(f"{package.name}_*.deb")):
            if hashlib.sha256(deb.read_bytes()).hexdigest() == package.sha256:
                return deb
        return None

    missing = sorted(f"{p.name}={p.version}" for p in packages if cached(p) is None)
    if missing:
        subprocess.run(
            ["apt-get", "download", "-qq", "-o", "APT::Sandbox::User=root", *missing], cwd=cache, check=True
        )
    debs: dict[str, Path] = {}
    for package in packages:
        deb = cached(package)
        if deb is None:
            raise DebianError(f"package {package.name!r}: no .deb matching the index's SHA256 in {cache}")
        debs[package.name] = deb
    return debs


def unpack(packages: list[Package], debs: dict[str, Path], root: Path) -> None:
    """Unpack every package into `root` laid out as a merged-/usr system, then trim what no process reads."""
    for top, target in MERGED_USR.items():
        (root / target).mkdir(parents=True, exist_ok=True)
        (root / top).symlink_to(target)
    for package in packages:
        data = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(debs[package.name])], capture_output=True)
        if data.returncode != 0:
            raise DebianError(f"package {package.name!r}: dpkg-deb failed: {data.stderr.decode()}")
        subprocess.run(
            ["tar", "-x", "-C", str(root), "--keep-directory-symlink", "--numeric-owner", "--same-owner"],
            input=data.stdout,
            check=True,
        )
    for rel in DROPPED_PATHS:
        subprocess.run(["rm", "-rf", str(root / rel)], check=True)
    for doc in sorted((root / "usr/share/doc").glob("*")):
        for entry in sorted(doc.iterdir()) if doc.is_dir() and not doc.is_symlink() else []:
            if entry.name != "copyright":
                subprocess.run(["rm", "-rf", str(entry)], check=True)
    _write_status(packages, root)


def _write_status(packages: list[Package], root: Path) -> None:
    status_dir = root / "var/lib/dpkg"
    status_dir.mkdir(parents=True, exist_ok=True)
    entries = []
    for package in packages:
        lines = [
            line
            for line in package.control.splitlines()
            if not line.startswith(("Filename:", "Size:", "MD5sum:", "SHA256:", "Description-md5:"))
        ]
        lines.insert(1, "Status: install ok installed")
        entries.append("\n".join(lines))
    (status_dir / "status").write_text("\n\n".join(entries) + "\n")


def configure(root: Path) -> None:
    """What the skipped maintainer scripts and base-passwd would have set up, and the image needs."""
    _ca_bundle(root)
    ssl = root / "usr/lib/ssl"
    ssl.mkdir(parents=True, exist_ok=True)
    # OpenSSL's default verify paths (OPENSSLDIR=/usr/lib/ssl); Debian's `openssl` package ships these links
    (ssl / "certs").symlink_to("/etc/ssl/certs")
    (ssl / "cert.pem").symlink_to("/etc/ssl/certs/ca-certificates.crt")
    etc = root / "etc"
    (etc / "passwd").write_text(
        "root:x:0:0:root:/root:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
    )
    (etc / "group").write_text("root:x:0:\nnogroup:x:65534:\n")
    (etc / "nsswitch.conf").write_text("passwd: files\ngroup: files\nhosts: files dns\nservices: files\n")
    for rel, mode in (("tmp", 0o1777), ("var/tmp", 0o1777), ("root", 0o700), ("proc", 0o555)):
        (root / rel).mkdir(parents=True, exist_ok=True)
        (root / rel).chmod(mode)
    for rel in ("dev", "sys", "run", "etc/ssl/private"):
        (root / rel).mkdir(parents=True, exist_ok=True)


def _ca_bundle(root: Path) -> None:
    """/etc/ssl/certs/ca-certificates.crt as `update-ca-certificates` builds it on a fresh install: every
    certificate Debian ships, in the sorted order its postinst writes /etc/ca-certificates.conf."""
    shipped = root / "usr/share/ca-certificates"
    certs = sorted(p.relative_to(shipped).as_posix() for p in shipped.rglob("*.crt"))
    if not certs:
        raise DebianError("ca-certificates: no certificate under /usr/share/ca-certificates")
    bundle = b""
    for rel in certs:
        pem = (shipped / rel).read_bytes()
        bundle += pem if pem.endswith(b"\n") else pem + b"\n"
    target = root / "etc/ssl/certs"
    target.mkdir(parents=True, exist_ok=True)
    (target / "ca-certificates.crt").write_bytes(bundle)
    (root / "etc/ca-certificates.conf").write_text("".join(f"{rel}\n" for rel in certs))
