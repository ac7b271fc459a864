import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { credentialUrlProblem, maskUrlCredentials, redactRequestUrl, withoutInput } from "../../src/domain/redact.js";

describe("maskUrlCredentials", () => {
  it("masks the user name and the whole password, even one with an @", () => {
    expect(maskUrlCredentials("mysql://app:p@ss@db.internal:3306/mailroom")).toBe("mysql://***:***@db.internal:3306/mailroom");
    expect(maskUrlCredentials("smtp://u%40x.example:p%3Aw@relay.example:587")).toBe("smtp://***:***@relay.example:587");
    expect(maskUrlCredentials("mysql://app@db.internal/mailroom")).toBe("mysql://***@db.internal/mailroom");
  });

  it("leaves a URL without credentials as it was given", () => {
    for (const url of ["sqlite:./data/mailroom.db", "sqlite:/srv/my mail#1.db", "mysql://db.internal/mailroom"]) expect(maskUrlCredentials(url)).toBe(url);
  });

  it("shows nothing of a URL that does not parse", () => {
    expect(maskUrlCredentials("mysql://app:hunter2#x@db.internal/mailroom")).not.toContain("hunter2");
  });
});

describe("credentialUrlProblem", () => {
  it("says what is wrong without repeating the URL", () => {
    for (const url of ["mysql://app:hunter2#x@db/m", "mysql://app:2024#hunter2@db/m", "smtp://u:1/hunter2@relay", "smtp://u:hunter2%@relay", "mysql:///hunter2"]) {
      const problem = credentialUrlProblem(url);
      expect(problem, url).not.toBeNull();
      expect(problem).not.toContain("hunter2");
    }
    expect(credentialUrlProblem("mysql://app:p@ss@db.internal/mailroom?ssl=true")).toBeNull();
    expect(credentialUrlProblem("smtp://u:caf%E9@relay.example")).toMatch(/an escape that is not UTF-8 .*%C3%A9/);
    expect(credentialUrlProblem("smtp://u:caf%C3%A9@relay.example")).toBeNull();
  });
});

describe("withoutInput", () => {
  it("drops the URL a parser put in an error, and in its causes", () => {
    const parsing = (() => {
      try {
        return new URL("mysql://app:hunter2#x@db.internal/mailroom");
      } catch (error) {
        return error as Error;
      }
    })();
    expect(inspect(parsing)).toContain("hunter2"); // the trap: Node keeps the input
    const wrapped = new Error("cannot open the database", { cause: parsing });
    const printed = inspect(withoutInput(wrapped));
    expect(printed).toContain("cannot open the database");
    expect(printed).toContain("Invalid URL");
    expect(printed).not.toContain("hunter2");
  });
});

describe("redactRequestUrl", () => {
  const secret = "q3ZKx8d2bWf0_Yt-7L1mN4pR6sT9uV0wX2yZ3aB5cD8";

  it("masks an invitation's secret in its link and in its preview", () => {
    expect(redactRequestUrl(`/invitations/${secret}`)).toBe("/invitations/[redacted]");
    expect(redactRequestUrl(`/auth/invitations/${secret}?x=1`)).toBe("/auth/invitations/[redacted]?x=1");
  });

  it("masks it in a page's ?next= that returns to the invitation", () => {
    const url = redactRequestUrl(`/sign-in?next=${encodeURIComponent(`/invitations/${secret}`)}&x=1`);
    expect(url).not.toContain(secret);
    expect(decodeURIComponent(url)).toBe("/sign-in?next=/invitations/[redacted]&x=1");
  });

  it("keeps every other URL, invitations' ids and the accept route included", () => {
    for (const url of ["/v1/invitations/inv_01jx", "/auth/invitations/accept", "/v1/messages?limit=10", "/sign-in?next=%2Fmessages"]) expect(redactRequestUrl(url)).toBe(url);
  });
});
