import { describe, expect, it } from "vitest";
import { SecretScanner } from "../../src/capture/secrets.js";
import { CORPUS_SEED, credentialCorpus, dotEnv, lookAlikes } from "../fixtures/secret-corpus.js";

const corpus = credentialCorpus();

function expectNoValue(text: string): void {
  for (const { kind, value } of corpus) expect(text.includes(value), `${kind} ${value.slice(0, 24)}…`).toBe(false);
}

describe(`SecretScanner (corpus seed ${CORPUS_SEED}: SECRETS_SEED makes the same keys)`, () => {
  it("finds every credential of the corpus on its own and names its kind", () => {
    expect(corpus.length).toBeGreaterThanOrEqual(40);
    for (const credential of corpus) {
      const scanner = new SecretScanner();
      const { text: stored, tally } = scanner.redact(`Here it is: ${credential.line} (from the vault)`);
      expect(stored.includes(credential.value), credential.line.slice(0, 40)).toBe(false);
      expect(stored).toContain(`[redacted:${credential.kind}:`);
      expect(tally).toEqual({ replaced: 1, kinds: { [credential.kind]: 1 } });
    }
  });

  it("replaces the secrets of a .env dump inside a JSON body and keeps the body JSON", () => {
    const scanner = new SecretScanner();
    const body = JSON.stringify({ messages: [{ role: "tool", content: dotEnv(corpus) }] });
    const { text: stored, tally } = scanner.redact(body);
    expectNoValue(stored);
    expect(JSON.parse(stored).messages[0].role).toBe("tool");
    expect(tally.replaced).toBe(corpus.length);
  });

  it("takes apart tool arguments that are JSON inside a JSON string", () => {
    const scanner = new SecretScanner();
    const args = JSON.stringify({ path: ".env", content: dotEnv(corpus) });
    const body = JSON.stringify({ messages: [{ tool_calls: [{ function: { name: "write", arguments: args } }] }] });
    const stored = scanner.redact(body).text;
    expectNoValue(stored);
    const inner = JSON.parse(JSON.parse(stored).messages[0].tool_calls[0].function.arguments);
    expect(inner.path).toBe(".env");
  });

  it("finds a secret split across SSE events and replaces every piece of it", () => {
    const scanner = new SecretScanner();
    const text = `keys:\n${dotEnv(corpus)}\n`;
    const events = [];
    for (let at = 0; at < text.length; at += 7) {
      const chunk = { choices: [{ index: 0, delta: { content: text.slice(at, at + 7) } }] };
      events.push(`data: ${JSON.stringify(chunk)}\n\n`);
    }
    const stored = scanner.redact(`${events.join("")}data: [DONE]\n\n`).text;
    const joined = stored
      .split("\n")
      .filter((line) => line.startsWith("data: {"))
      .map((line) => JSON.parse(line.slice(6)).choices[0].delta.content)
      .join("");
    expectNoValue(joined);
    expect(joined).toContain("[redacted:anthropic-key:");
    expect(stored.endsWith("data: [DONE]\n\n")).toBe(true);
  });

  it("gives one secret one marker within a run, and another run another", () => {
    const scanner = new SecretScanner();
    const key = corpus.find((c) => c.kind === "github-token")!.value;
    const once = scanner.redact(`a ${key} b`).text;
    expect(scanner.redact(JSON.stringify({ again: key })).text).toContain(once.slice(2, -2));
    expect(new SecretScanner().redact(`a ${key} b`).text).not.toBe(once);
  });

  it("replaces an AWS secret key ending in / or +, which the preset's rule misses, as an AWS secret key", () => {
    const scanner = new SecretScanner();
    const stored = scanner.redact("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzz9zzzzzz/ next").text;
    expect(stored).toMatch(/^aws_secret_access_key = \[redacted:aws-secret-key:[0-9a-f]{8}\] next$/);
  });

  it("replaces an OpenAI key ending in -, which the preset's rule misses, whole and as an OpenAI key", () => {
    const tail = (length: number) => `${"aB3_".repeat(length).slice(0, length - 1)}-`;
    const keys = [
      `sk-proj-${tail(74)}T3BlbkFJ${tail(74)}`,
      `sk-svcacct-${tail(58)}T3BlbkFJ${tail(58)}`,
      `sk-admin-${tail(58)}T3BlbkFJ${tail(74)}`,
    ];
    for (const key of keys)
      for (const [before, after] of [
        ['{"key":"', '"}'],
        ["OPENAI_API_KEY=", "\n"],
        ["use ", " now"],
      ]) {
        const scanner = new SecretScanner();
        const stored = scanner.redact(`${before}${key}${after}`).text;
        expect(stored, key.slice(0, 12)).toMatch(/^[^\]]*\[redacted:openai-key:[0-9a-f]{8}\][^\]]*$/);
        expect(stored.startsWith(before) && stored.endsWith(after)).toBe(true);
      }
  });

  it("replaces SendGrid keys with - in them, which the preset's rule misses, whole and as SendGrid keys", () => {
    for (const key of [
      "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",
      "SG.ng-VfQFYQlKU0ufo8x5d1A.TwL2iGABf9DHoTf09kqeF8tAmbihYzrnopKc1s5cr",
      "SG.ngeVfQFYQlKU0ufo8x5d1A.TwL2iGABf9DHoTf09kqeF8tAmbihYzrnopKc1s5c-",
    ]) {
      const stored = new SecretScanner().redact(`use ${key} now`).text;
      expect(stored, key).toMatch(/^use \[redacted:sendgrid-key:[0-9a-f]{8}\] now$/);
    }
  });

  it("replaces the password of a URL of any scheme and leaves URLs with none alone", () => {
    for (const url of [
      "ssh://git@host:22/repo",
      "git+ssh://git@github.com:org/repo.git",
      "https://example.com:8080/a@b",
    ])
      expect(new SecretScanner().redact(`clone ${url} now`).text).toBe(`clone ${url} now`);
    const stored = new SecretScanner().redact("ssh://deploy:Xk2.hunter%2122@bastion:22/").text;
    expect(stored).toMatch(/^ssh:\/\/deploy:\[redacted:url-password:[0-9a-f]{8}\]@bastion:22\/$/);
  });

  it("replaces Authorization header credentials, and leaves the words and references alone", () => {
    const stored = new SecretScanner().redact('{"Authorization": "Bearer abcdEFGH1234ijklMNOP"}').text;
    expect(stored).toMatch(/^\{"Authorization": "Bearer \[redacted:bearer-token:[0-9a-f]{8}\]"\}$/);
    for (const text of ["a Bearer token in the header", "Bearer ${API_TOKEN}", "Bearer $TOKEN", "Basic usage"])
      expect(new SecretScanner().redact(text).text).toBe(text);
  });

  it("keeps the host and user of a connection string and replaces its password", () => {
    const scanner = new SecretScanner();
    const stored = scanner.redact("DATABASE_URL=postgres://app:Xk2-hunter22q@db.example.com:5432/main").text;
    expect(stored).toMatch(/^DATABASE_URL=postgres:\/\/app:\[redacted:db-connection:[0-9a-f]{8}\]@db\.example\.com/);
  });

  it("finds the corpus in JSON whose writer escaped every slash (PHP), once and inside tool arguments", () => {
    const scanner = new SecretScanner();
    const php = (value: unknown) => JSON.stringify(value).replaceAll("/", "\\/");
    const args = php({ path: "/app/.env", content: dotEnv(corpus) });
    const body = php({
      messages: [
        { role: "tool", content: dotEnv(corpus) },
        { role: "assistant", arguments: args },
      ],
    });
    expect(body).toContain(":\\/\\/deploy:");
    expect(body).toContain(":\\\\\\/\\\\\\/deploy:");
    const { text: stored, tally } = scanner.redact(body);
    const parsed = JSON.parse(stored);
    expectNoValue(parsed.messages[0].content);
    expectNoValue(JSON.parse(parsed.messages[1].arguments).content);
    expect(parsed.messages[0].content).toMatch(
      /https:\/\/deploy:\[redacted:basic-auth:[0-9a-f]{8}\]@git\.example\.org/,
    );
    expect(tally.replaced).toBe(2 * corpus.length);
  });

  it("finds secrets with \\uXXXX escapes in them: the symbols Go's and Gson's writers escape, once and twice", () => {
    const scanner = new SecretScanner();
    // Gson escapes <, >, &, = and ' (Go the first three): every NAME=value line's `=`, and symbols in values.
    const gson = (json: string) =>
      json.replace(/[<>&=']/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
    const go = "postgres://app:Xk2&hunter<22q@db.example.com/main";
    const body = gson(JSON.stringify({ messages: [{ role: "tool", content: `${dotEnv(corpus)}\n${go}` }] }));
    expect(body).toContain("DB_PASSWORD\\u003d");
    expect(body).toContain("Xk2\\u0026hunter\\u003c22q");
    const once = scanner.redact(body);
    const text = JSON.parse(once.text).messages[0].content as string;
    expectNoValue(text);
    expect(text).toContain("postgres://app:[redacted:db-connection:");
    expect(text).not.toContain("hunter");
    expect(once.tally.replaced).toBe(corpus.length + 1);
    // Escaped twice, as in tool arguments: `\\u003d` is `\u003d` inside a JSON string.
    const twice = JSON.stringify({ arguments: gson(JSON.stringify({ content: dotEnv(corpus) })) });
    expect(twice).toContain("\\\\u003d");
    expectNoValue(JSON.parse(JSON.parse(scanner.redact(twice).text).arguments).content);
  });

  it("counts each text's secrets in its own tally: a JSON value's replaced secrets count nowhere (issue 36)", () => {
    const scanner = new SecretScanner();
    const key = corpus.find((c) => c.kind === "github-token")!.value;
    const event = scanner.value({ tool: "read", output: `GITHUB_TOKEN=${key}` });
    expect(JSON.stringify(event)).not.toContain(key);
    expect(scanner.redact("no secret in this body").tally).toEqual({ replaced: 0, kinds: {} });
    expect(scanner.redact(`one: ${key}`).tally).toEqual({ replaced: 1, kinds: { "github-token": 1 } });
  });

  it("leaves look-alikes alone: lockfile hashes, git SHAs, UUIDs, base64 images", () => {
    const scanner = new SecretScanner();
    for (const text of lookAlikes()) {
      expect(scanner.redact(text)).toEqual({ text, tally: { replaced: 0, kinds: {} } });
      const json = JSON.stringify({ content: text });
      expect(scanner.redact(json)).toEqual({ text: json, tally: { replaced: 0, kinds: {} } });
    }
  });
});
