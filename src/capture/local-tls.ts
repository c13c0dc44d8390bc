/**
 * A certificate for the proxy's HTTPS listener, made afresh for each session and never written with
 * its key: an authority of the session's own, and a certificate it signs for 127.0.0.1 and localhost.
 * A client that must reach its provider over HTTPS (Codex refuses a ChatGPT backend that is not)
 * trusts the authority for that session alone; its private key dies with the process, so nothing
 * else can be signed with it.
 *
 * Keys are ECDSA P-256 from WebCrypto (generated in about a millisecond, where an RSA key is a prime
 * search of a third of a second and more); certificates are @peculiar/x509's, signed with SHA-256.
 */
import { createPrivateKey, createPublicKey, KeyObject, randomBytes, webcrypto } from "node:crypto";

/** What a TLS listener serves (`key`, `cert`) and what its clients trust (`authority`), all PEM. */
export interface LocalCertificate {
  key: string;
  cert: string;
  authority: string;
}

/** How long the certificates hold: a week, longer than any recording, from an hour back (a clock a little off). */
export const VALID_MS = 7 * 24 * 3600 * 1000;
const CLOCK_SLACK_MS = 3600 * 1000;

export type X509 = typeof import("@peculiar/x509");
type Certificate = import("@peculiar/x509").X509Certificate;
type GeneralName = import("@peculiar/x509").JsonGeneralName;
type CryptoKey = webcrypto.CryptoKey;

/** A key pair that signs: the private key, its public key, and the private key as PKCS #8 PEM. */
export interface SigningKeys {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  pem: string;
}

const P256 = { name: "ECDSA", namedCurve: "P-256" } as const;

/**
 * @peculiar/x509, loaded only when a certificate is made: the CLI's other commands never pay for it.
 * Its dependency injection (tsyringe) wants the Reflect metadata API on the global Reflect at load,
 * which only a polyfill provides, so that is loaded first.
 */
export async function loadX509(): Promise<X509> {
  await import("reflect-metadata");
  return import("@peculiar/x509");
}

/** A new ECDSA P-256 key pair. */
export async function ecKeys(): Promise<SigningKeys> {
  const pair = await webcrypto.subtle.generateKey(P256, true, ["sign", "verify"]);
  const pem = KeyObject.from(pair.privateKey).export({ type: "pkcs8", format: "pem" }) as string;
  return { privateKey: pair.privateKey, publicKey: pair.publicKey, pem };
}

/**
 * The pair of a private key in PEM (PKCS #8 or an RSA or EC key's own form), ready to sign: ECDSA
 * P-256, or RSA (an authority made by an earlier version) with PKCS #1 v1.5 and SHA-256. Null for
 * any other kind of key, and for text that is no key.
 */
export async function keysFromPem(pem: string): Promise<SigningKeys | null> {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch {
    return null;
  }
  const curve = privateKey.asymmetricKeyDetails?.namedCurve;
  const algorithm =
    privateKey.asymmetricKeyType === "rsa"
      ? { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }
      : privateKey.asymmetricKeyType === "ec" && curve === "prime256v1"
        ? P256
        : null;
  if (!algorithm) return null;
  const { subtle } = webcrypto;
  const der = (key: KeyObject, type: "pkcs8" | "spki") => key.export({ type, format: "der" });
  return {
    privateKey: await subtle.importKey("pkcs8", der(privateKey, "pkcs8"), algorithm, false, ["sign"]),
    publicKey: await subtle.importKey("spki", der(createPublicKey(privateKey), "spki"), algorithm, true, ["verify"]),
    pem,
  };
}

/** What every certificate here shares: a fresh serial, the validity window, the signature's digest. */
function common(signingKey: CryptoKey, validMs: number) {
  const now = Date.now();
  return {
    // A positive serial number of 16 random bytes (RFC 5280 asks for at most 20 octets).
    serialNumber: `01${randomBytes(15).toString("hex")}`,
    notBefore: new Date(now - CLOCK_SLACK_MS),
    notAfter: new Date(now + validMs),
    // ECDSA or RSA PKCS #1 v1.5, as the signing key is; SHA-256 either way.
    signingAlgorithm: { ...signingKey.algorithm, hash: "SHA-256" },
  };
}

/** An authority's self-signed certificate (it signs server certificates only: no path below it). */
export function authorityCertificate(
  x509: X509,
  keys: { privateKey: CryptoKey; publicKey: CryptoKey },
  name: string,
  validMs = VALID_MS,
): Promise<Certificate> {
  const usage = x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign;
  return x509.X509CertificateGenerator.createSelfSigned({
    ...common(keys.privateKey, validMs),
    name: [{ CN: [name] }],
    keys,
    extensions: [new x509.BasicConstraintsExtension(true, 0, true), new x509.KeyUsagesExtension(usage, true)],
  });
}

/** Where a server certificate holds: IP addresses and DNS names. */
export type AltName = { ip: string } | { dns: string };

/**
 * A server certificate for `names` (the first its common name) and `publicKey` (ECDSA: it signs its
 * handshakes, and encrypts no keys, so digitalSignature is its one key usage), signed by `authority`
 * with `authorityKey`.
 */
export async function serverCertificate(
  x509: X509,
  publicKey: CryptoKey,
  names: AltName[],
  authority: Certificate,
  authorityKey: CryptoKey,
): Promise<string> {
  const first = names[0]!;
  const server = await x509.X509CertificateGenerator.create({
    ...common(authorityKey, VALID_MS),
    subject: [{ CN: ["ip" in first ? first.ip : first.dns] }],
    // The authority's own encoding of its name, so the issuer matches its subject byte for byte.
    issuer: authority.subjectName,
    publicKey,
    signingKey: authorityKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(
        names.map(
          (name): GeneralName => ("ip" in name ? { type: "ip", value: name.ip } : { type: "dns", value: name.dns }),
        ),
      ),
    ],
  });
  return server.toString("pem");
}

/** A new authority and a server certificate it signed for 127.0.0.1 and localhost. */
export async function localCertificate(): Promise<LocalCertificate> {
  const x509 = await loadX509();
  const [authorityKeys, serverKeys] = await Promise.all([ecKeys(), ecKeys()]);
  const authority = await authorityCertificate(x509, authorityKeys, "payload-probe record (this session only)");
  const names = [{ ip: "127.0.0.1" }, { dns: "localhost" }];
  return {
    key: serverKeys.pem,
    cert: await serverCertificate(x509, serverKeys.publicKey, names, authority, authorityKeys.privateKey),
    authority: authority.toString("pem"),
  };
}
