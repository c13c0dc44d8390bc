/**
 * Whether a request carries a valid AWS Signature Version 4 for given keys: the check a Bedrock
 * endpoint makes, for the mock (`mock --sigv4`) and the tests' Bedrock stand-in. The request is
 * signed again, as it arrived and over the headers its `Authorization` says were signed, with AWS's
 * own signer (@smithy/signature-v4, rather than a canonical request built by hand), and the two
 * signatures compared. The keys are only read, never stored.
 */
import { createHash, createHmac } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { SignatureV4 } from "@smithy/signature-v4";
import { safeDecode } from "../providers/cloud-endpoints.js";

export interface AwsKeys {
  accessKeyId: string;
  secretAccessKey: string;
}

/** node:crypto in the shape the signer takes (an HMAC when given a secret). */
type Data = string | ArrayBuffer | ArrayBufferView;
const bytesOf = (data: Data) =>
  typeof data === "string"
    ? Buffer.from(data)
    : ArrayBuffer.isView(data)
      ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
      : Buffer.from(data);

class Sha256 {
  private readonly hash;
  constructor(secret?: Data) {
    this.hash = secret === undefined ? createHash("sha256") : createHmac("sha256", bytesOf(secret));
  }
  update(data: Data): void {
    this.hash.update(bytesOf(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
}

/** `20261204T221935Z` as a Date; null when it is not one. */
function amzDate(text: string): Date | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  return m ? new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!)) : null;
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]+)$/;

/**
 * Whether the request's signature is the one `keys` make for it. SigV4 escapes the path once more for
 * its canonical form, and clients differ on which path they hand the signer: AWS's own SDKs the path
 * as sent (a model id's `%3A` escaped again), Anthropic's Bedrock client the decoded one; either
 * signature covers the same method, host, path, headers and body, so either is taken.
 */
export async function sigV4Valid(request: IncomingMessage, body: Uint8Array, keys: AwsKeys): Promise<boolean> {
  const authorization = String(request.headers.authorization ?? "");
  const scope = AUTHORIZATION.exec(authorization);
  const headers: Record<string, string> = {};
  for (const name of scope?.[5]?.split(";") ?? []) headers[name] = String(request.headers[name] ?? "");
  const signingDate = amzDate(headers["x-amz-date"] ?? "");
  if (!scope || scope[1] !== keys.accessKeyId || signingDate === null) return false;
  const url = new URL(request.url ?? "/", "http://x");
  // No x-amz-content-sha256 of the signer's own: a client that signed one has it among its headers;
  // one that did not (Codex's Rust signer) signed the body's hash without the header.
  const options = { credentials: keys, region: scope[3]!, service: scope[4]!, sha256: Sha256, applyChecksum: false };
  const signer = new SignatureV4(options);
  const query = Object.fromEntries(url.searchParams);
  for (const path of new Set([url.pathname, safeDecode(url.pathname)])) {
    const hostname = headers.host ?? "";
    const unsigned = { method: request.method ?? "POST", protocol: "https:", hostname, path, query, headers, body };
    const signed = await signer.sign(unsigned, { signingDate });
    if (signed.headers.authorization === authorization) return true;
  }
  return false;
}
