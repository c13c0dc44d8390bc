/** A real TLS handshake between node:tls's server and client, for the certificates record makes. */
import { connect, createServer } from "node:tls";

/**
 * Serves `server`'s certificate on 127.0.0.1 and connects to it with `ca` as the client's only trust,
 * naming `servername` (none: the address itself is checked). Resolves with whether the client
 * accepted the certificate, and why not when it refused; the server is closed either way.
 */
export async function handshake(
  server: { key: string; cert: string },
  ca: string,
  servername?: string,
): Promise<{ authorized: boolean; error?: string }> {
  const listener = createServer({ key: server.key, cert: server.cert }, (socket) => socket.end());
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  const port = (listener.address() as { port: number }).port;
  try {
    return await new Promise((resolve) => {
      const socket = connect({ host: "127.0.0.1", port, ca, ...(servername ? { servername } : {}) }, () => {
        resolve({ authorized: socket.authorized });
        socket.destroy();
      });
      socket.once("error", (error) => resolve({ authorized: false, error: error.message }));
    });
  } finally {
    await new Promise((resolve) => listener.close(resolve));
  }
}
