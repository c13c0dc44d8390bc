import { describe, expect, it } from "vitest";
import { credentialQueryName, redactUrl } from "../../src/capture/redact.js";

const stored = (query: string, extra: string[] = []) =>
  redactUrl(new URL(`http://127.0.0.1:9/v1/messages?${query}`), credentialQueryName(extra)).split("?")[1];

describe("stored URLs: credential query values", () => {
  it("redacts the API key names of Anthropic, Google and Azure API Management", () => {
    for (const name of ["x-api-key", "X-Api-Key", "subscription-key", "api-key", "ocp-apim-subscription-key"])
      expect(stored(`${name}=SECRET&trace=1`), name).toBe(`${name}=%5Bredacted%5D&trace=1`);
  });

  it("compares names after percent-decoding, so encoded spellings of a credential name are redacted", () => {
    for (const name of ["%6Bey", "k%65y", "%4B%45%59", "api%5Fkey", "x%2Dapi%2Dkey", "sub+scription-key"])
      expect(stored(`${name}=SECRET`), name).toBe(`${name}=%5Bredacted%5D`);
  });

  it("strips control, format and white-space characters and folds width before comparing", () => {
    for (const name of [
      "key%00",
      "%00key",
      "k%00ey",
      "key%0A",
      "%20key%09",
      "key%E2%80%8B",
      "%EF%BD%8B%EF%BD%85%EF%BD%99",
    ])
      expect(stored(`${name}=SECRET`), name).toBe(`${name}=%5Bredacted%5D`);
    expect(stored("tenant%00=SECRET", ["Tenant"])).toBe("tenant%00=%5Bredacted%5D");
  });

  it("keeps every parameter in order, duplicates after decoding included, each credential value redacted", () => {
    expect(stored("key=A&trace=1&%6Bey=B&KEY=C&trace=2")).toBe(
      "key=%5Bredacted%5D&trace=1&%6Bey=%5Bredacted%5D&KEY=%5Bredacted%5D&trace=2",
    );
  });

  it("keeps other parameters byte for byte and reads `;` as a separator too", () => {
    expect(stored("q=a%20b+c&empty=&flag&x=%zz;key=SECRET")).toBe("q=a%20b+c&empty=&flag&x=%zz;key=%5Bredacted%5D");
  });
});
