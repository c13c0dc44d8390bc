/**
 * A certificate for the proxy's HTTPS listener, made afresh for each session and never written with
 * its key: an authority of the session's own, and a certificate it signs for 127.0.0.1 and localhost.
 * A client that must reach its provider over HTTPS (Codex refuses a ChatGPT backend that is not)
 * trusts the authority for that session alone; its private key dies with the process, so nothing
 * else can be signed with it.
 */
import { generateKeyPair, randomBytes } from "node:crypto";
import { promisify } from "node:util";

/** What a TLS listener serves (`key`, `cert`) and what its clients trust (`authority`), all PEM. */
export interface LocalCertificate {
  key: string;
  cert: string;
  authority: string;
}

/** How long the certificates hold: a week, longer than any recording, from an hour back (a clock a little off). */
export const VALID_MS = 7 * 24 * 3600 * 1000;
const CLOCK_SLACK_MS = 3600 * 1000;

export type Forge = typeof import("node-forge");
type PublicKey = import("node-forge").pki.PublicKey;
type Certificate = import("node-forge").pki.Certificate;
export type PrivateKey = import("node-forge").pki.rsa.PrivateKey;

/** node-forge, loaded only when a certificate is made: the CLI's other commands never pay for it. */
export async function loadForge(): Promise<Forge> {
  return (await import("node-forge")).default;
}

/**
 * An RSA key pair (node-forge signs with RSA only) from node:crypto, off the main thread: forge's own
 * key generation is JavaScript, and even OpenSSL's takes most of a second on a busy core.
 */
export async function rsaKeys(forge: Forge) {
  const pair = await promisify(generateKeyPair)("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  return {
    pem: pair.privateKey,
    privateKey: forge.pki.privateKeyFromPem(pair.privateKey),
    publicKey: forge.pki.publicKeyFromPem(pair.publicKey),
  };
}

function certificate(forge: Forge, publicKey: PublicKey, commonName: string, validMs = VALID_MS): Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  // A positive serial number of 16 random bytes (RFC 5280 asks for at most 20 octets).
  cert.serialNumber = `01${randomBytes(15).toString("hex")}`;
  const now = Date.now();
  cert.validity.notBefore = new Date(now - CLOCK_SLACK_MS);
  cert.validity.notAfter = new Date(now + validMs);
  cert.setSubject([{ name: "commonName", value: commonName }]);
  return cert;
}

/** An authority's self-signed certificate (it signs server certificates only: no path below it). */
export function authorityCertificate(
  forge: Forge,
  keys: { privateKey: PrivateKey; publicKey: PublicKey },
  name: string,
  validMs = VALID_MS,
) {
  const authority = certificate(forge, keys.publicKey, name, validMs);
  authority.setIssuer(authority.subject.attributes);
  authority.setExtensions([
    { name: "basicConstraints", cA: true, pathLenConstraint: 0, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
  ]);
  authority.sign(keys.privateKey, forge.md.sha256.create());
  return authority;
}

/** Where a server certificate holds: IP addresses and DNS names. */
export type AltName = { ip: string } | { dns: string };

/** A server certificate for `names` (the first its common name), signed by `authority` with `authorityKey`. */
export function serverCertificate(
  forge: Forge,
  publicKey: PublicKey,
  names: AltName[],
  authority: Certificate,
  authorityKey: PrivateKey,
): string {
  const first = names[0]!;
  const server = certificate(forge, publicKey, "ip" in first ? first.ip : first.dns);
  server.setIssuer(authority.subject.attributes);
  server.setExtensions([
    { name: "basicConstraints", cA: false, critical: true },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true },
    {
      name: "subjectAltName",
      altNames: names.map((name) => ("ip" in name ? { type: 7, ip: name.ip } : { type: 2, value: name.dns })),
    },
  ]);
  server.sign(authorityKey, forge.md.sha256.create());
  return forge.pki.certificateToPem(server);
}

/** A new authority and a server certificate it signed for 127.0.0.1 and localhost. */
export async function localCertificate(): Promise<LocalCertificate> {
  const forge = await loadForge();
  // Both pairs at once, on the thread pool.
  const [authorityKeys, serverKeys] = await Promise.all([rsaKeys(forge), rsaKeys(forge)]);
  const authority = authorityCertificate(forge, authorityKeys, "payload-probe record (this session only)");
  const names = [{ ip: "127.0.0.1" }, { dns: "localhost" }];
  return {
    key: serverKeys.pem,
    cert: serverCertificate(forge, serverKeys.publicKey, names, authority, authorityKeys.privateKey),
    authority: forge.pki.certificateToPem(authority),
  };
}
