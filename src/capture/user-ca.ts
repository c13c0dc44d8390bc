/**
 * The authority `record --forward` signs its certificates with: made once per user and kept in the
 * user's cache (`<cache>/ca/`, the folder 0700, the key 0600), never in a run. A client given its
 * certificate trusts the proxy to speak for the model APIs' hosts; the key never leaves this machine,
 * and `payload-probe ca --remove` takes both away. The certificates it signs for hosts live in memory
 * for one session only.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { inputError } from "../errors.js";
import { removeOwnFolder } from "../files/safe-path.js";
import { userCacheDir } from "../files/user-cache.js";
import {
  type AltName,
  authorityCertificate,
  ecKeys,
  keysFromPem,
  loadX509,
  serverCertificate,
  VALID_MS,
  type X509,
} from "./local-tls.js";

const KEY_FILE = "key.pem";
const CERT_FILE = "cert.pem";
const AUTHORITY_NAME = "payload-probe record --forward (this user only)";
/**
 * The authority holds a year, and one with less than a host certificate's week left is made anew: a
 * certificate signed today must not outlive its authority.
 */
const AUTHORITY_VALID_MS = 365 * 24 * 3600 * 1000;

/** The authority's folder in the user's cache. */
export const authorityDir = (env: NodeJS.ProcessEnv = process.env) => join(userCacheDir(env), "ca");

/** Where the authority's certificate is (the file clients may be given; its key stays next to it). */
export const authorityCertPath = (env: NodeJS.ProcessEnv = process.env) => join(authorityDir(env), CERT_FILE);

/** The authority, loaded: its certificate as PEM and what signs with it. */
export interface UserAuthority {
  certPem: string;
  /** A certificate (and its key, PEM) for a host, made once per host for the authority's life in memory. */
  certificateFor(host: string): Promise<{ key: string; cert: string }>;
}

function readPair(dir: string): { key: string; cert: string } | null {
  try {
    return { key: readFileSync(join(dir, KEY_FILE), "utf8"), cert: readFileSync(join(dir, CERT_FILE), "utf8") };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/**
 * Writes a new authority. Each file is written beside its place and renamed into it, the key first
 * and 0600 from its creation: a reader sees a whole pair or none, and two sessions making one at once
 * each end with a pair that matches (the certificate is renamed last, after its own key).
 */
async function makeAuthority(x509: X509, dir: string): Promise<{ key: string; cert: string }> {
  const keys = await ecKeys();
  const cert = (await authorityCertificate(x509, keys, AUTHORITY_NAME, AUTHORITY_VALID_MS)).toString("pem");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const stamp = `${process.pid}-${Date.now()}`;
  const keyTemp = join(dir, `.${KEY_FILE}.${stamp}`);
  writeFileSync(keyTemp, keys.pem, { mode: 0o600, flag: "wx" });
  const certTemp = join(dir, `.${CERT_FILE}.${stamp}`);
  writeFileSync(certTemp, cert, { mode: 0o644, flag: "wx" });
  renameSync(keyTemp, join(dir, KEY_FILE));
  renameSync(certTemp, join(dir, CERT_FILE));
  return { key: keys.pem, cert };
}

/**
 * The user's authority, made now when there is none yet. One made by an earlier version (an RSA key)
 * is kept while it lasts and signs the new hosts' ECDSA keys.
 */
export async function userAuthority(env: NodeJS.ProcessEnv = process.env): Promise<UserAuthority> {
  const x509 = await loadX509();
  const dir = authorityDir(env);
  const found = readPair(dir);
  const lasts = (pem: string) => new x509.X509Certificate(pem).notAfter.getTime() > Date.now() + VALID_MS;
  const pair = found && lasts(found.cert) ? found : await makeAuthority(x509, dir);
  const authority = new x509.X509Certificate(pair.cert);
  const authorityKeys = await keysFromPem(pair.key);
  if (!authorityKeys) {
    const expected =
      "expected an ECDSA P-256 or RSA private key (`payload-probe ca --remove`, and record makes a new one)";
    throw inputError(join(dir, KEY_FILE), undefined, expected);
  }
  // One key serves every host of the session: its certificates live in this process alone, so a key
  // per host would protect nothing more.
  const hostKeys = ecKeys();
  const made = new Map<string, Promise<{ key: string; cert: string }>>();
  return {
    certPem: pair.cert,
    certificateFor(host) {
      let certificate = made.get(host);
      if (!certificate) {
        certificate = hostKeys.then(async (keys) => {
          const name: AltName = /^[\d.]+$|:/.test(host) ? { ip: host } : { dns: host };
          const cert = await serverCertificate(x509, keys.publicKey, [name], authority, authorityKeys.privateKey);
          return { key: keys.pem, cert };
        });
        made.set(host, certificate);
      }
      return certificate;
    },
  };
}

/** Removes the authority's folder (only the two files it makes may be in it); false when there was none. */
export function removeUserAuthority(env: NodeJS.ProcessEnv = process.env): boolean {
  const dir = authorityDir(env);
  const existed = readPair(dir) !== null;
  removeOwnFolder(userCacheDir(env), dir, [KEY_FILE, CERT_FILE], "the recording authority's folder");
  return existed;
}
