"""Stand-ins for ``openkruise/hotupgrade-sample``: the programs of the tutorial's SidecarSet hot upgrade.

The upstream sample has four tags. ``sidecarv1``/``sidecarv2`` serve ``GET /serve`` on port 9091 with
"This is version(vN) sidecar"; ``busybox`` asks that every 100 ms and logs each answer; ``empty`` does
nothing and is what the hot-upgrade container idles on. The point of the sample is the switch: kruise
starts the new version in the *other* container of the pair while the old one still serves, and the
new one's postStart hook (``/migrate.sh``) holds the container until it has taken over. The new
sidecar knows it is the newer one from ``SIDECARSET_VERSION`` > ``SIDECARSET_VERSION_ALT`` (both are
downward-API env vars kruise injects from the pod's version annotations; ALT 0 means no upgrade is
under way). It binds a Unix socket in the pod's shared ``/dev/shm``, calls the old one's
``GET /migrate``, and the old one sends its *listening socket itself* over that Unix socket
(SCM_RIGHTS) and stops accepting. The port is never closed, so the client sees no failed request.

Here the sidecar is a Perl program on Debian's perl-base (Perl core reaches sendmsg/recvmsg through
``syscall``, so no compiler or CPAN module is needed), and the client, the empty container and the
hook are busybox shell. Observable behaviour matches upstream: the same port, paths, answers, env
protocol, hook path and the client's log line.
"""

from __future__ import annotations

import re

SERVE_PORT = 9091
MIGRATE_SOCKET = "/dev/shm/migrate.sock"
RESULT_FILE = "/result"

# (sendmsg, recvmsg) system call numbers; Perl core has no sendmsg, so the sidecar calls them directly.
SYSCALLS = {"amd64": (46, 47), "arm64": (211, 212)}

SIDECAR_PL = r"""#!/usr/bin/perl
# Stand-in for openkruise/hotupgrade-sample's sidecar (kruise-py, sandbox/realnode/hotupgrade.py says why).
use strict;
use warnings;
use IO::Socket::INET;
use IO::Socket::UNIX;
use POSIX qw(strftime);
use Socket qw(SOL_SOCKET SOCK_STREAM);

my $VERSION = '@VERSION@';
my $PORT = @PORT@;
my $MIGRATE_SOCKET = '@MIGRATE_SOCKET@';
my $RESULT_FILE = '@RESULT_FILE@';
my ($SYS_SENDMSG, $SYS_RECVMSG) = (@SYS_SENDMSG@, @SYS_RECVMSG@);
my $SCM_RIGHTS = 1;
my $CMSG_LEN_ONE_FD = 20;    # CMSG_LEN(sizeof(int)) on LP64

$| = 1;
$SIG{TERM} = $SIG{INT} = sub { exit 0 };

sub note {
    my ($level, $message) = @_;
    print strftime("$level%m%d %H:%M:%S", gmtime) . " $$ sidecar] $message\n";
}

# The address of a scalar's string buffer, for the pointers inside struct msghdr.
sub address_of { return unpack('J', pack('p', $_[0])) }

# struct msghdr (LP64): name, namelen, iov, iovlen, control, controllen, flags.
sub msghdr {
    my ($iov, $control) = @_;
    return pack('J L x4 J J J J l x4', 0, 0, address_of($_[0]), 1, address_of($_[1]), length $_[1], 0);
}

sub send_fd {
    my ($fd) = @_;
    my $peer = IO::Socket::UNIX->new(Type => SOCK_STREAM, Peer => $MIGRATE_SOCKET)
        or return "connect $MIGRATE_SOCKET: $!";
    my $byte = 'x';
    my $iov = pack('J J', address_of($byte), 1);
    my $control = pack('J l l l x4', $CMSG_LEN_ONE_FD, SOL_SOCKET, $SCM_RIGHTS, $fd);
    my $header = msghdr($iov, $control);
    my $sent = syscall($SYS_SENDMSG, fileno($peer), $header, 0);
    my $error = $!;
    close $peer;
    return $sent == 1 ? '' : "sendmsg: $error";
}

sub receive_fd {
    my ($server) = @_;
    my $peer = $server->accept or return (undef, "accept on $MIGRATE_SOCKET: $!");
    my $byte = "\0";
    my $control = "\0" x 64;
    my $iov = pack('J J', address_of($byte), 1);
    my $header = msghdr($iov, $control);
    my $got = syscall($SYS_RECVMSG, fileno($peer), $header, 0);
    my $error = $!;
    close $peer;
    return (undef, "recvmsg: $error") if $got < 0;
    my ($length, $level, $type, $fd) = unpack('J l l l', $control);
    return (undef, 'the old sidecar sent no file descriptor')
        unless $length >= $CMSG_LEN_ONE_FD && $level == SOL_SOCKET && $type == $SCM_RIGHTS;
    return ($fd, '');
}

sub http_get {
    my ($path) = @_;
    my $connection = IO::Socket::INET->new(
        PeerAddr => '127.0.0.1', PeerPort => $PORT, Proto => 'tcp', Timeout => 5,
    ) or return "connect 127.0.0.1:$PORT: $!";
    print $connection "GET $path HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    my $response = do { local $/; <$connection> };
    close $connection;
    return 'no answer' unless defined $response;
    my ($status, $body) = $response =~ m{^HTTP/1\.[01] (\d+)[^\n]*\n.*?\r?\n\r?\n(.*)\z}s
        or return 'not an HTTP answer';
    return $status == 200 ? $body : "status $status";
}

# (upgrading, newer): ALT unset or 0 means no hot upgrade is under way.
sub hot_upgrade_state {
    my $version = $ENV{SIDECARSET_VERSION} // '';
    my $alt = $ENV{SIDECARSET_VERSION_ALT} // '';
    return (0, 0) if $alt eq '' || $alt eq '0';
    unless ($version =~ /^\d+$/ && $alt =~ /^\d+$/) {
        note('E', "SIDECARSET_VERSION=$version SIDECARSET_VERSION_ALT=$alt: must be integers");
        return (0, 0);
    }
    return (1, $version > $alt);
}

sub take_over_listener {
    unlink $MIGRATE_SOCKET;
    my $server = IO::Socket::UNIX->new(Type => SOCK_STREAM, Local => $MIGRATE_SOCKET, Listen => 1);
    unless ($server) {
        note('E', "listen on $MIGRATE_SOCKET: $!; will listen anew");
        return undef;
    }
    note('I', "request migration: http://127.0.0.1:$PORT/migrate");
    my $answer = http_get('/migrate');
    my ($fd, $error) = $answer eq 'success' ? receive_fd($server) : (undef, "migration answered: $answer");
    close $server;
    unlink $MIGRATE_SOCKET;
    if (!defined $fd) {
        note('E', "migrate older sidecar's listener failed ($error); will listen anew");
        return undef;
    }
    note('I', "received the listening socket (fd $fd) from the older sidecar");
    return IO::Socket::INET->new_from_fd($fd, 'r+');
}

sub respond {
    my ($client, $status, $body) = @_;
    my $reason = $status == 200 ? 'OK' : 'Not Found';
    print $client "HTTP/1.0 $status $reason\r\nContent-Type: text/plain; charset=utf-8\r\n"
        . 'Content-Length: ' . length($body) . "\r\nConnection: close\r\n\r\n$body";
}

# Serve until the listener has been handed to a newer sidecar.
sub serve {
    my ($listener) = @_;
    while (1) {
        my $client = $listener->accept;
        unless ($client) {
            next if $!{EINTR};
            die "accept: $!\n";
        }
        my $request = <$client> // '';
        while (defined(my $line = <$client>)) { last if $line =~ /^\r?\n\z/ }
        my ($path) = $request =~ m{^GET (\S+)};
        $path //= '';
        if ($path eq '/serve') {
            select(undef, undef, undef, 0.01);
            respond($client, 200, "This is version($VERSION) sidecar");
        } elsif ($path eq '/migrate') {
            note('I', 'start migrate old sidecar Listener to newer sidecar');
            my $error = send_fd(fileno $listener);
            if ($error) {
                note('E', $error);
                respond($client, 200, 'failed');
            } else {
                close $listener;
                respond($client, 200, 'success');
                close $client;
                note('I', 'listener handed over; no longer accepting');
                return;
            }
        } else {
            respond($client, 404, "404 page not found\n");
        }
        close $client;
    }
}

my ($upgrading, $newer) = hot_upgrade_state();
my $listener;
if ($upgrading) {
    note('I', 'start hot upgrade');
    unless ($newer) {
        note('I', "older sidecar doesn't listen, and exit 0");
        sleep 60;
        exit 0;
    }
    $listener = take_over_listener();
}
$listener //= IO::Socket::INET->new(LocalPort => $PORT, Listen => 128, ReuseAddr => 1, Proto => 'tcp')
    or die "listen :$PORT: $!\n";
note('I', "Listen(:$PORT) and serve(version=$VERSION)");
if (open(my $result, '>>', $RESULT_FILE)) {
    print $result 'success';
    close $result;
}
serve($listener);
sleep while 1;
"""

MIGRATE_SH = """#!/bin/sh
# postStart hook: the empty container (version 0) has nothing to migrate; otherwise hold the container
# until the sidecar reports it serves (it writes @RESULT_FILE@), as the upstream sample's hook does.
if [ "${SIDECARSET_VERSION}" = "0" ]; then
  echo "empty image"
  exit 0
fi
tries=0
while [ "$tries" -lt 300 ]; do
  if [ -e @RESULT_FILE@ ]; then
    echo "check start success"
    rm -f @RESULT_FILE@
    exit 0
  fi
  sleep 0.2
  tries=$((tries + 1))
done
echo "start failed"
exit 1
"""

EMPTY_SH = """#!/bin/sh
# hot-upgrade empty container: same command, hook and probes as the sidecar, but does no work.
trap 'exit 0' TERM INT
while :; do sleep 2147483647 & wait $!; done
"""

CLIENT_SH = """#!/bin/sh
# The sample's main container: ask the sidecar every 100 ms and log the answer; like upstream it
# logs the first failed request and exits (status 0), so a failure shows in the logs and restarts.
url=http://127.0.0.1:@PORT@/serve
while :; do
  if body=$(timeout 5 wget -q -O - "$url" 2>&1); then
    stamp=$(date -u '+%m%d %H:%M:%S')
    echo "I$stamp $$ main.go:39] request sidecar server success, and response(body=$body)"
  else
    stamp=$(date -u '+%m%d %H:%M:%S')
    echo "E$stamp $$ main.go:33] request sidecar($url) failed: $body"
    exit 0
  fi
  sleep 0.1
done
"""


def _fill(template: str, values: dict[str, object]) -> str:
    for key, value in values.items():
        template = template.replace(f"@{key}@", str(value))
    leftover = re.findall(r"@[A-Z_]+@", template)
    if leftover:
        raise ValueError(f"hot-upgrade template: unfilled placeholders {leftover}")
    return template


def sidecar_program(version: str, architecture: str) -> str:
    """The sidecar's ``/manager`` for ``version`` (``v1``, ``v2``) on ``architecture``."""
    if architecture not in SYSCALLS:
        raise ValueError(f"architecture: sendmsg numbers known for {sorted(SYSCALLS)}, got {architecture!r}")
    if not version or not version.isalnum():
        raise ValueError(f"version: must be alphanumeric like v1, got {version!r}")
    send, receive = SYSCALLS[architecture]
    return _fill(
        SIDECAR_PL,
        {
            "VERSION": version,
            "PORT": SERVE_PORT,
            "MIGRATE_SOCKET": MIGRATE_SOCKET,
            "RESULT_FILE": RESULT_FILE,
            "SYS_SENDMSG": send,
            "SYS_RECVMSG": receive,
        },
    )


def migrate_script() -> str:
    return _fill(MIGRATE_SH, {"RESULT_FILE": RESULT_FILE})


def client_script() -> str:
    return _fill(CLIENT_SH, {"PORT": SERVE_PORT})
