import { describe, expect, it } from "vitest";
import type { Message, MessagePreview, MessageTemplate } from "mailroom";
import { contractExample, page, problemBody, problemOf, runCli, stubApi } from "./helpers.js";

/*
 * `mailroom send --template …` (and `messages create`, the same command) against a stand-in for
 * the API: how the template and variable flags become the createMessage body, and the mistakes
 * refused before anything is sent.
 */
const env = { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://mailroom.test" };
const queued = contractExample<Message>("QueuedMessage");
const welcome3: MessageTemplate = { id: "tpl_01jd3k8m2q5v7w9x1y3z5a7b9c", slug: "welcome", version: 3, layout: null };
const inBase4: MessageTemplate = { ...welcome3, layout: { id: "tpl_01jd3k9a1b2c3d4e5f6g7h8j9k", slug: "base", version: 4 } };

describe("mailroom send --template", () => {
  it("sends template { slug, variables } in place of a subject and body; --var values are strings", async () => {
    const api = stubApi(202, queued);

    const result = await runCli(["send", "--to", "ada@example.com", "--template", "welcome", "--var", "first_name=Ada", "--var", "count=7"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(api.seen).toMatchObject([{ method: "POST", target: "/v1/messages", body: { to: ["ada@example.com"], template: { slug: "welcome", variables: { first_name: "Ada", count: "7" } } } }]);
    expect(api.seen[0]?.body).not.toHaveProperty("subject");
  });

  it("takes JSON values from --var-json, with --var winning for the same name, and slug@version as given", async () => {
    const api = stubApi(202, queued);

    await runCli(["messages", "create", "--to", "ada@example.com", "--template", "welcome@3", "--var-json", '{"order": {"id": 7}, "vip": true, "first_name": "A"}', "--var", "first_name=Ada"], { env, fetch: api.fetch });

    expect(api.seen[0]?.body).toEqual({ to: ["ada@example.com"], template: { slug: "welcome@3", variables: { order: { id: 7 }, vip: true, first_name: "Ada" } } });
  });

  it("reads variables from --variables-file, and keeps the other message flags", async () => {
    const api = stubApi(202, queued);

    await runCli(["send", "--to", "ada@example.com", "--template", "receipt", "--variables-file", "vars.json", "--tag", "receipt", "--metadata", "order_id=7"], {
      env,
      fetch: api.fetch,
      files: { "vars.json": '{"order": {"id": 7, "total": 12.5}}' },
    });

    expect(api.seen[0]?.body).toEqual({ to: ["ada@example.com"], template: { slug: "receipt", variables: { order: { id: 7, total: 12.5 } } }, tags: ["receipt"], metadata: { order_id: "7" } });
  });

  it("sends no variables when none are given", async () => {
    const api = stubApi(202, queued);

    await runCli(["send", "--to", "ada@example.com", "--template", "welcome"], { env, fetch: api.fetch });

    expect(api.seen[0]?.body).toEqual({ to: ["ada@example.com"], template: { slug: "welcome" } });
  });

  it.each([
    [["--template", "welcome", "--subject", "Hi"], "--template brings its own subject and body: leave out --subject (or drop --template)."],
    [["--template", "welcome", "--html", "<p>Hi</p>", "--text", "Hi"], "leave out --html and --text"],
    [["--template", "welcome", "--html-file", "a.html"], "leave out --html-file"],
    [["--subject", "Hi", "--text", "Hi", "--var", "a=b"], "--var, --var-json and --variables-file give a template's variables: add --template <slug>."],
    [["--template", "welcome", "--var", "first_name"], '--var takes key=value; got "first_name".'],
    [["--template", "welcome", "--var-json", '"Ada"'], "--var-json: the value must be a JSON object of variables"],
    [["--template", "welcome", "--variables-file", "missing.json"], "--variables-file: cannot read missing.json"],
    [["--subject", "Hi"], "Give a body (--html, --html-file, --text or --text-file), or a --template."],
    [["--html", "<p>Hi</p>"], "Give a --subject (the message's subject line), or a --template."],
    [["--text", "Hi"], "Give a --subject (the message's subject line), or a --template."],
  ])("exits 2 for %j, sending nothing", async (flags, message) => {
    const api = stubApi(202, queued);

    const result = await runCli(["send", "--to", "ada@example.com", ...flags], { env, fetch: api.fetch, files: { "a.html": "<p>Hi</p>" } });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toMatchObject({ error: "usage", message: expect.stringContaining(message) });
    expect(api.seen).toEqual([]);
  });

  it("exits 1 with one line per bad variable when the API refuses them", async () => {
    const errors = [{ location: "body", pointer: "/template/variables/first_name", message: "is required" }];

    const result = await runCli(["send", "--to", "ada@example.com", "--template", "welcome"], { env, tty: true, fetch: stubApi(422, problemBody(422, "validation_failed", { errors })).fetch });

    expect(result.code).toBe(1);
    expect(result.stderr).toContain("  /template/variables/first_name: is required\n");
  });

  it("shows the template and version sent on a terminal, and no layout line for one sent in none", async () => {
    const sent: Message = { ...queued, template: welcome3 };

    const result = await runCli(["send", "--to", "ada@example.com", "--template", "welcome@3"], { env, tty: true, fetch: stubApi(202, sent).fetch });

    expect(result.stdout).toMatch(/^template\s+welcome@3$/m);
    expect(result.stdout).not.toMatch(/^layout\b/m);
  });

  it("shows the layout and its version the template was sent in", async () => {
    const sent: Message = { ...queued, template: inBase4 };

    const result = await runCli(["messages", "create", "--to", "ada@example.com", "--template", "welcome@3"], { env, tty: true, fetch: stubApi(202, sent).fetch });

    expect(result.stdout).toMatch(/^template\s+welcome@3\nlayout\s+base@4$/m);
  });

  it("shows the layout with --dry-run too", async () => {
    const preview: MessagePreview = { ...contractExample<MessagePreview>("MessagePreview"), template: inBase4 };

    const result = await runCli(["send", "--dry-run", "--to", "ada@example.com", "--template", "welcome@3"], { env, tty: true, fetch: stubApi(200, preview).fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^template\s+welcome@3\nlayout\s+base@4$/m);
  });
});

describe("mailroom messages list --template", () => {
  it("lists the messages sent from a template", async () => {
    const api = stubApi(200, page([]));

    const result = await runCli(["messages", "list", "--template", "welcome"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(api.seen.map((seen) => seen.target)).toEqual(["/v1/messages?limit=20&template=welcome"]);
  });
});
