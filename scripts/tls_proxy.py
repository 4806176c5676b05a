"""A TLS-terminating proxy in front of the local cluster's Spark Connect server, which has no
TLS of its own (Spark 4.2's server speaks plain gRPC; production clusters put a TLS load
balancer or ingress in front of it, as this does). It offers HTTP/2 by ALPN, which gRPC clients
require, and forwards every byte to the server unchanged, so the bearer token still reaches
the server's own check.

    python scripts/tls_proxy.py <listen-port> <server-port> <cert.pem> <key.pem>

`throwaway_ca` makes a throw-away certificate authority and a `localhost` certificate it signed,
with the openssl command line (Debian's), for the profile's `ca_cert`.
"""

import asyncio
import ssl
import subprocess
import sys
from pathlib import Path

CHUNK = 65536


def throwaway_ca(folder: Path) -> dict[str, Path]:
    """A CA (ca.pem) and a certificate for localhost and 127.0.0.1 it signed (server.pem,
    server.key), valid for a week: what a profile's `ca_cert` and the proxy need."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {name: folder / name for name in ("ca.pem", "ca.key", "server.pem", "server.key")}
    names = folder / "names.ext"
    names.write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    openssl = ["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-days", "7"]
    subprocess.run([*openssl, "-x509", "-keyout", files["ca.key"], "-out", files["ca.pem"],
                    "-subj", "/CN=dbt-spark-streams test CA"],
                   check=True, capture_output=True)  # fmt: skip
    request = folder / "server.csr"
    subprocess.run([*openssl, "-keyout", files["server.key"], "-out", request,
                    "-subj", "/CN=localhost"], check=True, capture_output=True)  # fmt: skip
    subprocess.run(["openssl", "x509", "-req", "-in", request, "-CA", files["ca.pem"],
                    "-CAkey", files["ca.key"], "-CAcreateserial", "-days", "7",
                    "-out", files["server.pem"], "-extfile", names],
                   check=True, capture_output=True)  # fmt: skip
    return files


async def forward(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy one direction until it ends, then close the other side's writer."""
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, ssl.SSLError):
        pass
    finally:
        writer.close()


async def serve(listen_port: int, server_port: int, cert: str, key: str) -> None:
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert, key)
    tls.set_alpn_protocols(["h2"])

    async def relay(client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter) -> None:
        try:
            server_in, server_out = await asyncio.open_connection("127.0.0.1", server_port)
        except OSError:
            client_out.close()
            return
        await asyncio.gather(forward(client_in, server_out), forward(server_in, client_out))

    proxy = await asyncio.start_server(relay, "127.0.0.1", listen_port, ssl=tls)
    async with proxy:
        await proxy.serve_forever()


if __name__ == "__main__":
    listen, upstream, certificate, private_key = sys.argv[1:5]
    asyncio.run(serve(int(listen), int(upstream), certificate, private_key))
