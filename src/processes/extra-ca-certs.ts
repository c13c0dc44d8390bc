/**
 * NODE_EXTRA_CA_CERTS without paying for it at every start.
 *
 * Node 20 reads and parses that file, and its own root certificates with it, while it starts and
 * before any code runs: about 80 ms on a 2-core VM with a 144-certificate bundle, in every process,
 * though most commands never open a TLS connection (Node 22 waits until one is opened). So run.sh
 * starts the CLI on Node < 22 with the variable moved to `PAYLOAD_PROBE_EXTRA_CA_CERTS`. The CLI
 * puts it back at once, so what it starts (npm, a `pi --version`, MCP servers outside a probe) gets
 * the user's environment unchanged, and the clients in this process that may speak TLS (a provider
 * over HTTP, the capture proxy's upstream, the OTLP exporter) add the file's certificates to Node's
 * roots themselves, when they first reach an https URL.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

export const DEFERRED_CA_ENV = "PAYLOAD_PROBE_EXTRA_CA_CERTS";

/** The file run.sh held back from this process's start, when it did. */
let deferredFile: string | undefined;
let trusted: string[] | undefined;
let globalDispatcherSet = false;

/** Puts the variable run.sh moved aside back in place; the CLI calls it first of all. */
export function restoreExtraCaCerts(env: NodeJS.ProcessEnv = process.env): void {
  const file = env[DEFERRED_CA_ENV];
  if (file === undefined) return;
  delete env[DEFERRED_CA_ENV];
  if (file === "") return;
  env.NODE_EXTRA_CA_CERTS = file;
  deferredFile = file;
}

/**
 * The certificate authorities Node would trust had it read the file at start (its roots and the
 * file's), or undefined when Node did read it, or there was none: then its defaults are right. A
 * file that cannot be read is passed over with a warning, as Node passes it over.
 */
export function trustedCas(warn: (message: string) => void = defaultWarn): string[] | undefined {
  if (deferredFile === undefined) return undefined;
  if (trusted === undefined) {
    // node:tls loads here, not with the CLI: it costs about 10 ms that most commands never need.
    const { rootCertificates } = createRequire(import.meta.url)("node:tls") as typeof import("node:tls");
    trusted = [...rootCertificates];
    try {
      trusted.push(readFileSync(deferredFile, "utf8"));
    } catch (error) {
      warn(`ignoring extra certs from ${deferredFile} (NODE_EXTRA_CA_CERTS): ${(error as Error).message}`);
    }
  }
  return trusted;
}

/**
 * Before `fetch` or undici reaches `url`: for an https URL with held-back certificates, the global
 * dispatcher (shared by Node's fetch and undici) becomes one that trusts them. undici loads only then.
 */
export async function trustExtraCasFor(url: string): Promise<void> {
  if (globalDispatcherSet || !url.startsWith("https:")) return;
  const ca = trustedCas();
  if (ca === undefined) return;
  const { Agent, setGlobalDispatcher } = await import("undici");
  setGlobalDispatcher(new Agent({ connect: { ca } }));
  globalDispatcherSet = true;
}

const defaultWarn = (message: string) => process.stderr.write(`payload-probe: ${message}\n`);
