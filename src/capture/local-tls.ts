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
const VALID_MS = 7 * 24 * 3600 * 1000;
const CLOCK_SLACK_MS = 3600 * 1000;

type Forge = typeof import("node-forge");

/**
 * An RSA key pair (node-forge signs with RSA only) from node:crypto, off the main thread: forge's own
 * key generation is JavaScript, and even OpenSSL's takes most of a second on a busy core.
 */
async function rsaKeys(forge: Forge) {
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

function certificate(forge: Forge, publicKey: import("node-forge").pki.PublicKey, commonName: string) {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  // A positive serial number of 16 random bytes (RFC 5280 asks for at most 20 octets).
  cert.serialNumber = `01${randomBytes(15).toString("hex")}`;
  const now = Date.now();
  cert.validity.notBefore = new Date(now - CLOCK_SLACK_MS);
  cert.validity.notAfter = new Date(now + VALID_MS);
  cert.setSubject([{ name: "commonName", value: commonName }]);
  return cert;
}

/**
 * A new authority and a server certificate it signed for 127.0.0.1 and localhost. node-forge is
 * loaded only here: the CLI's other commands never pay for it.
 */
export async function localCertificate(): Promise<LocalCertificate> {
  const { default: forge } = await import("node-forge");
  // Both pairs at once, on the thread pool.
  const [authorityKeys, serverKeys] = await Promise.all([rsaKeys(forge), rsaKeys(forge)]);
  const authority = certificate(forge, authorityKeys.publicKey, "payload-probe record (this session only)");
  authority.setIssuer(authority.subject.attributes);
  authority.setExtensions([
    { name: "basicConstraints", cA: true, pathLenConstraint: 0, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
  ]);
  authority.sign(authorityKeys.privateKey, forge.md.sha256.create());

  const server = certificate(forge, serverKeys.publicKey, "127.0.0.1");
  server.setIssuer(authority.subject.attributes);
  server.setExtensions([
    { name: "basicConstraints", cA: false, critical: true },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true },
    {
      name: "subjectAltName",
      altNames: [
        { type: 7, ip: "127.0.0.1" },
        { type: 2, value: "localhost" },
      ],
    },
  ]);
  server.sign(authorityKeys.privateKey, forge.md.sha256.create());
  return {
    key: serverKeys.pem,
    cert: forge.pki.certificateToPem(server),
    authority: forge.pki.certificateToPem(authority),
  };
}
