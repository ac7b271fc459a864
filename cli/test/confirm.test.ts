import { describe, expect, it } from "vitest";
import { contractExample, problemOf, runCli, stubApi, type RunOptions } from "./helpers.js";

/*
 * The commands that lose something for good ask first, as gh and the Stripe CLI do: at a terminal
 * a question on stderr, answered on stdin; anywhere else (a script, a pipe, --json) they refuse
 * unless given --yes. Against a stand-in for the API, to see that a refusal sends nothing.
 */
const apiEnv = { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://mailroom.test" };
const userEnv = { MAILROOM_API_KEY: "mru_test_4f8a2c9e1b7d3f6a0c5e8b2d9f1a7c3e5b", MAILROOM_BASE_URL: "http://mailroom.test" };

interface Destructive {
  argv: string[];
  env: Record<string, string>;
  target: string;
  answer: unknown;
  /** The question, up to and with `[y/N] `: it names the thing that will be lost. */
  question: string;
  /** What the message for scripts says the command does. */
  does: string;
  declined: string;
}

const destructive: Destructive[] = [
  {
    argv: ["templates", "delete", "welcome"],
    env: apiEnv,
    target: "/v1/templates/welcome",
    answer: contractExample("DeletedTemplate"),
    question: "Delete template welcome? Messages already sent keep their content; this cannot be undone. [y/N] ",
    does: "templates delete deletes template welcome",
    declined: "Nothing deleted.",
  },
  {
    argv: ["webhooks", "delete", "whk_01jd3k8m2q5v7w9x1y3z5a7b9c"],
    env: apiEnv,
    target: "/v1/webhooks/whk_01jd3k8m2q5v7w9x1y3z5a7b9c",
    answer: contractExample("DeletedWebhook"),
    question: "Delete webhook endpoint whk_01jd3k8m2q5v7w9x1y3z5a7b9c? Its pending deliveries and recorded attempts go with it; this cannot be undone. [y/N] ",
    does: "webhooks delete deletes webhook endpoint whk_01jd3k8m2q5v7w9x1y3z5a7b9c",
    declined: "Nothing deleted.",
  },
  {
    argv: ["domains", "delete", "dom_01jd3k8m2q5v7w9x1y3z5a7b9c"],
    env: apiEnv,
    target: "/v1/domains/dom_01jd3k8m2q5v7w9x1y3z5a7b9c",
    answer: contractExample("DeletedDomain"),
    question: "Delete domain dom_01jd3k8m2q5v7w9x1y3z5a7b9c? It can no longer send live mail and its DKIM keys are lost; this cannot be undone. [y/N] ",
    does: "domains delete deletes domain dom_01jd3k8m2q5v7w9x1y3z5a7b9c",
    declined: "Nothing deleted.",
  },
  {
    argv: ["suppressions", "delete", "sup_01jd3k8m2q5v7w9x1y3z5a7b9c"],
    env: apiEnv,
    target: "/v1/suppressions/sup_01jd3k8m2q5v7w9x1y3z5a7b9c",
    answer: contractExample("DeletedSuppression"),
    question: "Delete suppression sup_01jd3k8m2q5v7w9x1y3z5a7b9c? Mail can reach its address again. [y/N] ",
    does: "suppressions delete deletes suppression sup_01jd3k8m2q5v7w9x1y3z5a7b9c",
    declined: "Nothing deleted.",
  },
  {
    argv: ["api-keys", "revoke", "key_01jc3v6q9k2m8r4t7w0y5z1b3d"],
    env: apiEnv,
    target: "/v1/api-keys/key_01jc3v6q9k2m8r4t7w0y5z1b3d",
    answer: contractExample("RestrictedApiKey"),
    question: "Revoke API key key_01jc3v6q9k2m8r4t7w0y5z1b3d? It stops working at once; this cannot be undone. [y/N] ",
    does: "api-keys revoke revokes API key key_01jc3v6q9k2m8r4t7w0y5z1b3d",
    declined: "Nothing revoked.",
  },
  {
    argv: ["accounts", "remove-member", "usr_01jd3k8m2q5v7w9x1y3z5a7b9c"],
    env: userEnv,
    target: "/v1/members/usr_01jd3k8m2q5v7w9x1y3z5a7b9c",
    answer: contractExample("Member"),
    question: "Remove member usr_01jd3k8m2q5v7w9x1y3z5a7b9c from the workspace? Their tokens for it stop working at once. [y/N] ",
    does: "accounts remove-member removes member usr_01jd3k8m2q5v7w9x1y3z5a7b9c from the workspace",
    declined: "Nothing removed.",
  },
  {
    argv: ["accounts", "revoke-invitation", "inv_01jd3k8m2q5v7w9x1y3z5a7b9c"],
    env: userEnv,
    target: "/v1/invitations/inv_01jd3k8m2q5v7w9x1y3z5a7b9c",
    answer: contractExample("Invitation"),
    question: "Revoke invitation inv_01jd3k8m2q5v7w9x1y3z5a7b9c? Its link stops working at once. [y/N] ",
    does: "accounts revoke-invitation revokes invitation inv_01jd3k8m2q5v7w9x1y3z5a7b9c",
    declined: "Nothing revoked.",
  },
];

const cases = destructive.map((command) => [command.argv.slice(0, 2).join(" "), command] as const);

/** A person at a terminal, who types `stdin` (or ends it at once, with Ctrl-D, for ""). */
const atTerminal = (stdin: string): Partial<RunOptions> => ({ tty: true, stdinTty: true, stdin });

describe.each(cases)("mailroom %s", (_name, command) => {
  const run = (extra: string[], options: Partial<RunOptions>) => {
    const api = stubApi(200, command.answer);
    return runCli([...command.argv, ...extra], { env: command.env, fetch: api.fetch, ...options }).then((result) => ({ result, seen: api.seen }));
  };

  it("exits 2 without --yes where there is no terminal to ask on, sending nothing", async () => {
    const { result, seen } = await run([], {});

    expect(result.code).toBe(2);
    expect(problemOf(result)).toEqual({ error: "usage", message: `${command.does} and there is no terminal to confirm on: pass --yes.` });
    expect(seen).toEqual([]);
  });

  it("exits 2 without --yes when stdin is a terminal but stdout is piped, sending nothing", async () => {
    const { result, seen } = await run([], { stdinTty: true, stderrTty: true, stdin: "y\n" });

    expect(result.code).toBe(2);
    expect(problemOf(result).message).toMatch(/pass --yes\.$/);
    expect(seen).toEqual([]);
  });

  it("exits 2 without --yes with --json, even at a terminal, asking nothing", async () => {
    const { result, seen } = await run(["--json"], atTerminal("y\n"));

    expect(result.code).toBe(2);
    expect(result.stderr).not.toContain("[y/N]");
    expect(problemOf(result).message).toMatch(/pass --yes\.$/);
    expect(seen).toEqual([]);
  });

  it("exits 2 without --yes when stdin is not a terminal, even with stdout on one", async () => {
    const { result, seen } = await run([], { tty: true, stdin: "y\n" });

    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${command.does} and there is no terminal to confirm on: pass --yes.`);
    expect(seen).toEqual([]);
  });

  it.each([["--yes"], ["-y"]])("sends the request with %s, asking nothing", async (flag) => {
    const { result, seen } = await run([flag], {});

    expect(result.code, result.stderr).toBe(0);
    expect(seen).toMatchObject([{ method: "DELETE", target: command.target }]);
  });

  it("sends the request with --yes at a terminal, asking nothing", async () => {
    const { result, seen } = await run(["--yes"], atTerminal(""));

    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toContain("[y/N]");
    expect(seen).toHaveLength(1);
  });

  it.each([["y\n"], ["yes\n"], ["Y\n"], [" YES \n"]])("asks at a terminal, naming what is lost, and sends the request when answered %j", async (answer) => {
    const { result, seen } = await run([], atTerminal(answer));

    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr.startsWith(command.question)).toBe(true);
    expect(seen).toMatchObject([{ method: "DELETE", target: command.target }]);
  });

  it.each([["n\n"], ["\n"], ["yep\n"], ["no\ny\n"]])("exits 1 sending nothing when answered %j", async (answer) => {
    const { result, seen } = await run([], atTerminal(answer));

    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`${command.question}${command.declined}\n`);
    expect(result.stdout).toBe("");
    expect(seen).toEqual([]);
  });

  it("exits 1 sending nothing when stdin ends before an answer (Ctrl-D)", async () => {
    const { result, seen } = await run([], atTerminal(""));

    expect(result.code).toBe(1);
    // The terminal echoed no line break for Ctrl-D: the refusal starts a line of its own.
    expect(result.stderr).toBe(`${command.question}\n${command.declined}\n`);
    expect(seen).toEqual([]);
  });
});

describe("confirmations", () => {
  it("check the API key before asking: a question answered for nothing wastes the answer", async () => {
    const api = stubApi(200, {});

    const result = await runCli(["templates", "delete", "welcome"], { env: {}, fetch: api.fetch, ...atTerminal("y\n") });

    expect(result.code).toBe(2);
    expect(result.stderr).not.toContain("[y/N]");
    expect(result.stderr).toMatch(/^No API key\./);
    expect(api.seen).toEqual([]);
  });

  it("show a slug's control characters as symbols in the question", async () => {
    const api = stubApi(200, {});

    const result = await runCli(["templates", "delete", "we\u001b[2Jlcome"], { env: apiEnv, fetch: api.fetch, ...atTerminal("n\n") });

    expect(result.stderr).toMatch(/^Delete template we␛\[2Jlcome\? /);
    expect(api.seen).toEqual([]);
  });

  it("list --yes in each command's --help", async () => {
    for (const { argv } of destructive) {
      const result = await runCli([...argv.slice(0, 2), "--help"], { env: apiEnv });
      expect(result.stdout, argv.join(" ")).toMatch(/^ +-y, --yes +.*without asking/m);
    }
  });
});
