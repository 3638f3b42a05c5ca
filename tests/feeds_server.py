"""A local feed server on 127.0.0.1 for the feed tests: the remote side of the process edge.

Serves the real-world-shaped fixtures in tests/kenning/knowledge/feeds/fixtures and the awkward
answers a feed
fetcher meets (304 by ETag and by Last-Modified, 500, 429 with Retry-After, redirects, a 50 MB body,
a slow drip). ``requests`` records every request (path and headers), so a test can show what was
(not) fetched.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "kenning" / "knowledge" / "feeds" / "fixtures"
ETAG = '"v1-4bf94d92"'
LAST_MODIFIED = "Tue, 01 Dec 2026 18:00:00 GMT"
BIG = 50 * 1024 * 1024
XML = "application/rss+xml; charset=utf-8"


@dataclass
class Seen:
    path: str
    headers: dict[str, str] = field(default_factory=dict)


class FeedServer:
    """``routes`` maps a path to a handler; tests may add their own (e.g. a feed that changes)."""

    def __init__(self) -> None:
        self.requests: list[Seen] = []
        self.routes: dict[str, Callable[[BaseHTTPRequestHandler], None]] = dict(_ROUTES)
        self.bytes_sent: dict[str, int] = {}
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        self.port = int(self.httpd.server_address[1])
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    @property
    def allow(self) -> str:
        """The KENNING_FEED_ALLOW entry that lets the fetcher reach this server (nothing else)."""
        return f"127.0.0.1:{self.port}"

    def hits(self, path: str) -> list[Seen]:
        return [seen for seen in self.requests if seen.path == path]

    def serve(self, path: str, body: bytes, content_type: str = XML) -> None:
        self.routes[path] = lambda h: _send(h, 200, body, content_type)

    def redirect(self, path: str, location: str) -> None:
        self.routes[path] = _redirect(location)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _handler(server: FeedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            server.requests.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}))
            route = server.routes.get(self.path)
            if route is None:
                _send(self, 404, b"not found", "text/plain")
            else:
                route(self)

        def log_message(self, format: str, *args: object) -> None:
            pass  # quiet test output

    return Handler


def _send(
    h: BaseHTTPRequestHandler,
    status: int,
    body: bytes = b"",
    content_type: str = XML,
    headers: dict[str, str] | None = None,
) -> None:
    h.send_response(status)
    for name, value in {
        "Content-Type": content_type,
        "Content-Length": str(len(body)),
        **(headers or {}),
    }.items():
        h.send_header(name, value)
    h.end_headers()
    if body:
        h.wfile.write(body)


def _fixture(name: str, content_type: str = XML) -> Callable[[BaseHTTPRequestHandler], None]:
    return lambda h: _send(h, 200, (FIXTURES / name).read_bytes(), content_type)


def _etag(h: BaseHTTPRequestHandler) -> None:
    if h.headers.get("If-None-Match") == ETAG:
        _send(h, 304, headers={"ETag": ETAG})
    else:
        _send(h, 200, (FIXTURES / "rss2.xml").read_bytes(), headers={"ETag": ETAG})


def _last_modified(h: BaseHTTPRequestHandler) -> None:
    if h.headers.get("If-Modified-Since") == LAST_MODIFIED:
        _send(h, 304)
    else:
        _send(
            h,
            200,
            (FIXTURES / "atom.xml").read_bytes(),
            "application/atom+xml",
            headers={"Last-Modified": LAST_MODIFIED},
        )


def _big(h: BaseHTTPRequestHandler) -> None:
    """50 MB of a feed-looking body, chunked (no Content-Length): only the cap can stop it."""
    h.send_response(200)
    h.send_header("Content-Type", XML)
    h.send_header("Transfer-Encoding", "chunked")
    h.end_headers()
    chunk = b"<!-- " + b"x" * 65_000 + b" -->\n"
    try:
        head = b'<?xml version="1.0"?><rss version="2.0"><channel>\n'
        h.wfile.write(f"{len(head):x}\r\n".encode() + head + b"\r\n")
        for _ in range(BIG // len(chunk) + 1):
            h.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        h.wfile.write(b"0\r\n\r\n")
    except OSError:
        pass  # the fetcher hung up at its cap: what the test wants


def _drip(h: BaseHTTPRequestHandler) -> None:
    """Headers at once, then a byte every 0.2 s for a minute: each read is quick, the whole not."""
    h.send_response(200)
    h.send_header("Content-Type", XML)
    h.send_header("Content-Length", "300")
    h.end_headers()
    try:
        for _ in range(300):
            h.wfile.write(b" ")
            h.wfile.flush()
            time.sleep(0.2)
    except OSError:
        pass


def _redirect(location: str) -> Callable[[BaseHTTPRequestHandler], None]:
    return lambda h: _send(h, 302, headers={"Location": location})


_ROUTES: dict[str, Callable[[BaseHTTPRequestHandler], None]] = {
    "/rss2.xml": _fixture("rss2.xml"),
    "/atom.xml": _fixture("atom.xml", "application/atom+xml"),
    "/rss1.rdf": _fixture("rss1.rdf", "application/rdf+xml"),
    "/podcast.xml": _fixture("podcast.xml"),
    "/malformed.xml": _fixture("malformed.xml", "text/xml"),
    "/garbage.xml": _fixture("garbage.xml", "text/xml"),
    "/page.html": _fixture("garbage.xml", "text/html; charset=utf-8"),
    "/etag.xml": _etag,
    "/last-modified.xml": _last_modified,
    "/big.xml": _big,
    "/drip.xml": _drip,
    "/error.xml": lambda h: _send(h, 500, b"internal error", "text/plain"),
    "/busy.xml": lambda h: _send(h, 429, b"slow down", "text/plain", {"Retry-After": "7200"}),
    "/loop-a.xml": _redirect("/loop-b.xml"),
    "/loop-b.xml": _redirect("/loop-a.xml"),
    "/moved.xml": _redirect("/rss2.xml"),
    "/to-metadata.xml": _redirect("http://169.254.169.254/latest/meta-data/"),
}


@pytest.fixture
def feed_server() -> Iterator[FeedServer]:
    server = FeedServer()
    server.thread.start()
    yield server
    server.close()


@dataclass(frozen=True)
class Tls:
    """A throwaway CA and a certificate for ``host`` that it signed (PEM files under ``folder``)."""

    ca: Path
    cert: Path
    key: Path

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca))


def make_tls(folder: Path, host: str) -> Tls:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    def name(common: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])

    now = datetime.now(UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(name("test CA"))
        .issuer_name(name("test CA"))
        .public_key(ca_key.public_key())
        .serial_number(1)
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    leaf = (
        x509.CertificateBuilder()
        .subject_name(name(host))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(2)
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    tls = Tls(folder / "ca.pem", folder / "cert.pem", folder / "key.pem")
    tls.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    tls.cert.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    tls.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return tls


def serve_tls(server: FeedServer, tls: Tls) -> list[str]:
    """Make ``server`` speak TLS with ``tls``; the SNI names the clients sent, as a live list."""
    names: list[str] = []
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tls.cert, tls.key)

    def seen(sock: ssl.SSLObject, sni: str | None, ctx: ssl.SSLContext) -> None:
        names.append(str(sni))

    context.sni_callback = seen
    server.httpd.socket = context.wrap_socket(server.httpd.socket, server_side=True)
    return names
