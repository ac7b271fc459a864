import { describe, expect, it } from "vitest";
import type { DeletedObject, RenderedTemplate, Template, TemplateVersion } from "mailroom";
import { contractExample, page, problemBody, problemOf, runCli, stubApi, useTestServer } from "./helpers.js";

/*
 * `mailroom templates …` against a stand-in for the API that answers with the contract's own
 * examples: what each command sends, and what it prints in JSON and on a terminal.
 */
const env = { MAILROOM_API_KEY: "svc_test_stub", MAILROOM_BASE_URL: "http://mailroom.test" };
const TEMPLATE_ID = "tpl_01jd3k8m2q5v7w9x1y3z5a7b9c";
const published = contractExample<Template>("PublishedTemplate");
const withDraft = contractExample<Template>("TemplateWithDraft");
const deleted = contractExample<DeletedObject>("DeletedTemplate");
const version = contractExample<TemplateVersion>("PublishedTemplateVersion");
const rendered = contractExample<RenderedTemplate>("RenderedTemplate");
const declarations = published.variables;
const LAYOUT_HTML = '<div class="mail">{{ content }}<p>Acme Inc.</p></div>';
/** A layout as the API answers it: no subject (""), and itself in no layout. */
const baseLayout: Template = { ...published, id: "tpl_base", kind: "layout", slug: "base", name: "Base", subject: "", html: LAYOUT_HTML, variables: [], referenced_variables: ["content"] };
const inLayout: Template = { ...published, layout: "base" };

describe("mailroom templates create", () => {
  it("sends slug, name, subject and html with an Idempotency-Key, and prints the template as the API sent it", async () => {
    const api = stubApi(201, published);

    const result = await runCli(["templates", "create", "--slug", "welcome", "--name", "Welcome", "--subject", "Welcome, {{ first_name }}", "--html", "<p>Hi {{ first_name }}</p>", "--publish"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<Template>()).toEqual(published);
    expect(api.seen).toMatchObject([
      { method: "POST", target: "/v1/templates", body: { slug: "welcome", name: "Welcome", subject: "Welcome, {{ first_name }}", html: "<p>Hi {{ first_name }}</p>", publish: true }, idempotencyKey: expect.any(String) },
    ]);
  });

  it("reads the html, the text and the declared variables from files", async () => {
    const api = stubApi(201, withDraft);
    const files = { "welcome.html": "<h1>{{ first_name }}</h1>", "welcome.txt": "Hi {{ first_name }}", "vars.json": JSON.stringify(declarations) };

    const result = await runCli(
      ["templates", "create", "--slug", "welcome", "--name", "Welcome", "--subject", "Hi", "--html-file", "welcome.html", "--text-file", "welcome.txt", "--variables-file", "vars.json", "--idempotency-key", "tpl-1"],
      { env, fetch: api.fetch, files },
    );

    expect(result.code, result.stderr).toBe(0);
    expect(api.seen).toMatchObject([{ body: { slug: "welcome", name: "Welcome", subject: "Hi", html: "<h1>{{ first_name }}</h1>", text: "Hi {{ first_name }}", variables: declarations }, idempotencyKey: "tpl-1" }]);
    expect(api.seen[0]?.body).not.toHaveProperty("publish");
  });

  it("creates a layout with --kind layout, sending no subject", async () => {
    const api = stubApi(201, baseLayout);

    const result = await runCli(["templates", "create", "--kind", "layout", "--slug", "base", "--name", "Base", "--html", LAYOUT_HTML, "--publish"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(api.seen[0]?.body).toEqual({ kind: "layout", slug: "base", name: "Base", html: LAYOUT_HTML, publish: true });
  });

  it("sends the --layout a template is sent in, and leaves kind out by default", async () => {
    const api = stubApi(201, inLayout);

    await runCli(["templates", "create", "--slug", "welcome", "--name", "Welcome", "--layout", "base", "--subject", "Welcome, {{ first_name }}", "--html", "<p>Hi</p>"], { env, fetch: api.fetch });

    expect(api.seen[0]?.body).toEqual({ slug: "welcome", name: "Welcome", subject: "Welcome, {{ first_name }}", html: "<p>Hi</p>", layout: "base" });
  });

  it("leaves a missing --subject to the API, printing its 422 at /subject", async () => {
    const errors = [{ location: "body", pointer: "/subject", message: "is required (only a layout has no subject)" }];
    const api = stubApi(422, problemBody(422, "validation_failed", { errors }));

    const result = await runCli(["templates", "create", "--slug", "w", "--name", "W", "--html", "H"], { env, tty: true, fetch: api.fetch });

    expect(result.code).toBe(1);
    expect(api.seen[0]?.body).toEqual({ slug: "w", name: "W", html: "H" });
    expect(result.stderr).toContain("  /subject: is required (only a layout has no subject)\n");
  });

  it("shows a layout's kind on a terminal, without a subject or a layout of its own", async () => {
    const result = await runCli(["templates", "create", "--kind", "layout", "--slug", "base", "--name", "Base", "--html", LAYOUT_HTML], { env, tty: true, fetch: stubApi(201, baseLayout).fetch });

    expect(result.stdout).toMatch(/^kind\s+layout$/m);
    expect(result.stdout).not.toMatch(/^(subject|layout)\b/m);
    expect(result.stdout).toContain(`html:\n${LAYOUT_HTML}\n`);
  });

  it("prints the content, the variables and the next step on a terminal", async () => {
    const result = await runCli(["templates", "create", "--slug", "welcome", "--name", "Welcome", "--subject", "S", "--html", "H"], { env, tty: true, fetch: stubApi(201, withDraft).fetch });

    expect(result.stdout).toMatch(/^slug\s+welcome$/m);
    expect(result.stdout).toMatch(/^published_version\s+1$/m);
    expect(result.stdout).toMatch(/^latest_version\s+2 \(draft\)$/m);
    expect(result.stdout).toMatch(/^first_name\s+string\s+required\s+The recipient's first name$/m);
    expect(result.stdout).toMatch(/^plan\s+string\s+default "the free plan"$/m);
    expect(result.stdout).toContain("text: derived from the HTML");
    expect(result.stdout).toContain("text: derived from the HTML\n");
    expect(result.stderr).toBe("Draft v2 saved. Check it with: mailroom templates render welcome --version draft; send it with: mailroom templates publish welcome\n");
  });

  it.each([
    [["--name", "W", "--subject", "S", "--html", "H"], "Give the template a --slug."],
    [["--slug", "w", "--name", "W", "--subject", "S"], "Give the HTML body with --html or --html-file."],
    [["--slug", "w", "--name", "W", "--subject", "S", "--html", "H", "--kind", "partial"], "Invalid values"],
    [["--slug", "w", "--name", "W", "--subject", "S", "--html", "H", "--variables-file", "vars.json"], "--variables-file: vars.json must hold a JSON array of variables"],
    [["--slug", "w", "--name", "W", "--subject", "S", "--html", "H", "--variables-file", "missing.json"], "--variables-file: cannot read missing.json (ENOENT)"],
    [["--slug", "w", "--name", "W", "--subject", "S", "--html", "H", "--html-file", "welcome.html"], "mutually exclusive"],
  ])("exits 2 for %j, sending nothing", async (flags, message) => {
    const api = stubApi(201, published);

    const result = await runCli(["templates", "create", ...flags], { env, fetch: api.fetch, files: { "vars.json": '{"first_name": "string"}', "welcome.html": "<p>Hi</p>" } });

    expect(result.code).toBe(2);
    expect(problemOf(result)).toMatchObject({ error: "usage", message: expect.stringContaining(message) });
    expect(api.seen).toEqual([]);
  });

  it("exits 1 with the API's problem, field and line, for a Liquid syntax error", async () => {
    const errors = [{ location: "body", pointer: "/html", message: "tag {% if %} not closed", line: 3 }];
    // The API's detail for one failing field is that field again: not said twice.
    const api = stubApi(422, problemBody(422, "validation_failed", { detail: "/html: tag {% if %} not closed", errors }));

    const result = await runCli(["templates", "create", "--slug", "w", "--name", "W", "--subject", "S", "--html", "{% if x %}"], { env, tty: true, fetch: api.fetch });

    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Error: 422 validation_failed: Title of validation_failed\n  /html (line 3): tag {% if %} not closed\n");
  });
});

describe("mailroom templates list", () => {
  it("prints one page as the API sent it, passing --limit and --after", async () => {
    const api = stubApi(200, page([published], "cur_2"));

    const result = await runCli(["templates", "list", "--limit", "1", "--after", "cur_1"], { env, fetch: api.fetch });

    expect(result.json()).toEqual(page([published], "cur_2"));
    expect(api.seen.map((seen) => `${seen.method} ${seen.target}`)).toEqual(["GET /v1/templates?limit=1&after=cur_1"]);
  });

  it("lists the layouts only with --kind layout", async () => {
    const api = stubApi(200, page([baseLayout]));

    const result = await runCli(["templates", "list", "--kind", "layout"], { env, fetch: api.fetch });

    expect(result.json()).toEqual(page([baseLayout]));
    expect(api.seen.map((seen) => seen.target)).toEqual(["/v1/templates?limit=20&kind=layout"]);
  });

  it("lists the templates sent in a layout with --layout", async () => {
    const api = stubApi(200, page([published]));

    await runCli(["templates", "list", "--layout", "base"], { env, fetch: api.fetch });

    expect(api.seen.map((seen) => seen.target)).toEqual(["/v1/templates?limit=20&layout=base"]);
  });

  it("prints slug, name, kind, published version and draft as a table on a terminal", async () => {
    const unpublished: Template = { ...withDraft, id: "tpl_2", slug: "receipt", name: "Receipt", published_version: null, latest_version: 1 };

    const result = await runCli(["templates", "list"], { env, tty: true, fetch: stubApi(200, page([withDraft, unpublished, published, baseLayout])).fetch });

    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^SLUG\s+NAME\s+KIND\s+PUBLISHED\s+DRAFT\s+UPDATED\s+ID$/);
    expect(lines[1]).toMatch(new RegExp(`^welcome\\s+Welcome\\s+standard\\s+v1\\s+v2\\s+${withDraft.updated_at}\\s+${TEMPLATE_ID}$`));
    expect(lines[2]).toMatch(new RegExp(`^receipt\\s+Receipt\\s+standard\\s+none\\s+v1\\s+${withDraft.updated_at}\\s+tpl_2$`));
    // No draft: an empty DRAFT column, so the date starts where the column after it does.
    expect(lines[3]).toMatch(new RegExp(`^welcome\\s+Welcome\\s+standard\\s+v1\\s+${published.updated_at}\\s+${TEMPLATE_ID}$`));
    expect(lines[3]?.indexOf(published.updated_at)).toBe(lines[0]?.indexOf("UPDATED"));
    expect(lines[4]).toMatch(new RegExp(`^base\\s+Base\\s+layout\\s+v1\\s+${published.updated_at}\\s+tpl_base$`));
  });
});

describe("mailroom templates get", () => {
  it("gets the template by slug", async () => {
    const api = stubApi(200, published);

    const result = await runCli(["templates", "get", "welcome"], { env, fetch: api.fetch });

    expect(result.json<Template>()).toEqual(published);
    expect(api.seen).toMatchObject([{ method: "GET", target: "/v1/templates/welcome", idempotencyKey: null }]);
  });

  it("shows the kind and the layout on a terminal: the layout's slug, or none", async () => {
    const sentInBase = await runCli(["templates", "get", "welcome"], { env, tty: true, fetch: stubApi(200, inLayout).fetch });
    const sentAlone = await runCli(["templates", "get", "welcome"], { env, tty: true, fetch: stubApi(200, published).fetch });

    expect(sentInBase.stdout).toMatch(/^kind\s+standard$/m);
    expect(sentInBase.stdout).toMatch(/^layout\s+base$/m);
    expect(sentAlone.stdout).toMatch(/^layout\s+none$/m);
  });

  it("exits 1 with the API's 404 for a template the workspace does not have", async () => {
    const result = await runCli(["templates", "get", "nope"], { env, fetch: stubApi(404, problemBody(404, "not_found")).fetch });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 404, code: "not_found" });
  });
});

describe("mailroom templates update", () => {
  it("PATCHes only the fields given", async () => {
    const api = stubApi(200, withDraft);

    const result = await runCli(["templates", "update", "welcome", "--subject", "Welcome aboard, {{ first_name }}"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(api.seen).toEqual([{ method: "PATCH", target: "/v1/templates/welcome", authorization: "Bearer svc_test_stub", idempotencyKey: null, body: { subject: "Welcome aboard, {{ first_name }}" } }]);
  });

  it("sends text: null for --no-text, and the html and variables from files", async () => {
    const api = stubApi(200, withDraft);
    const files = { "welcome.html": "<p>New</p>", "vars.json": JSON.stringify(declarations) };

    await runCli(["templates", "update", "welcome", "--html-file", "welcome.html", "--no-text", "--variables-file", "vars.json", "--name", "Hello"], { env, fetch: api.fetch, files });

    expect(api.seen[0]?.body).toEqual({ name: "Hello", html: "<p>New</p>", text: null, variables: declarations });
  });

  it.each([
    [["--layout", "base"], "base"],
    [["--no-layout"], null],
  ])("sends layout for %j", async (flags, layout) => {
    const api = stubApi(200, withDraft);

    const result = await runCli(["templates", "update", "welcome", ...flags], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(api.seen[0]?.body).toEqual({ layout });
  });

  it("sends --base-revision as base_revision, alone too (a check that changes nothing)", async () => {
    const api = stubApi(200, withDraft);

    await runCli(["templates", "update", "welcome", "--html", "<p>New</p>", "--base-revision", "7"], { env, fetch: api.fetch });
    const result = await runCli(["templates", "update", "welcome", "--base-revision", "7"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(api.seen.map((request) => request.body)).toEqual([{ html: "<p>New</p>", base_revision: 7 }, { base_revision: 7 }]);
  });

  it.each(["0", "-1", "1.5", "seven"])("exits 2 for --base-revision %s, sending nothing", async (value) => {
    const api = stubApi(200, withDraft);

    const result = await runCli(["templates", "update", "welcome", "--subject", "Hi", "--base-revision", value], { env, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result).message).toContain("--base-revision");
    expect(api.seen).toEqual([]);
  });

  it("exits 1 with template_changed when the template changed since the revision given", async () => {
    const api = stubApi(409, problemBody(409, "template_changed"));

    const result = await runCli(["templates", "update", "welcome", "--subject", "Hi", "--base-revision", "7"], { env, fetch: api.fetch });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 409, code: "template_changed" });
  });

  it("exits 2 when there is nothing to update", async () => {
    const api = stubApi(200, withDraft);

    const result = await runCli(["templates", "update", "welcome"], { env, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result).message).toContain("Nothing to update");
    expect(api.seen).toEqual([]);
  });
});

describe("mailroom templates publish", () => {
  it("publishes the draft, with an Idempotency-Key and an empty body", async () => {
    const api = stubApi(200, published);

    const result = await runCli(["templates", "publish", "welcome"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(api.seen).toEqual([{ method: "POST", target: "/v1/templates/welcome/publish", authorization: "Bearer svc_test_stub", idempotencyKey: expect.any(String), body: {} }]);
  });

  it("rolls back to --version, and says which version now sends on a terminal", async () => {
    const api = stubApi(200, { ...published, published_version: 2 });

    const result = await runCli(["templates", "publish", "welcome", "--version", "2"], { env, tty: true, fetch: api.fetch });

    expect(api.seen[0]?.body).toEqual({ version: 2 });
    expect(result.stdout).not.toContain("Published:");
    expect(result.stderr).toBe("Published: v2 now sends as welcome.\n");
  });

  // A layout is never sent by itself (422): its hints point at the templates sent in it.
  describe("the hints for a layout, which cannot be sent by itself", () => {
    const hint = async (argv: string[], answer: Template) => (await runCli(argv, { env, tty: true, fetch: stubApi(200, answer).fetch })).stderr;
    const create = ["templates", "create", "--kind", "layout", "--slug", "base", "--name", "Base", "--html", LAYOUT_HTML];

    it("after create --publish: the templates sent in it use that version, and how to list them", async () => {
      expect(await hint([...create, "--publish"], baseLayout)).toBe("v1 is published: the templates sent in layout base use it; see them with: mailroom templates list --layout base\n");
    });

    it("after a draft: what publishing it changes, how to check it in a template, and how to publish it", async () => {
      const draft: Template = { ...baseLayout, latest_version: 2, has_draft: true };
      expect(await hint(create, draft)).toBe(
        "Draft v2 saved. Publishing it changes the mail of every template sent in layout base (mailroom templates list --layout base); check one in it with: mailroom templates render <template> --layout-version draft; publish it with: mailroom templates publish base\n",
      );
    });

    it("after publish: the templates sent in it now use that version", async () => {
      expect(await hint(["templates", "publish", "base"], { ...baseLayout, published_version: 2, latest_version: 2 })).toBe(
        "Published: the templates sent in layout base now use v2; see them with: mailroom templates list --layout base\n",
      );
    });
  });

  it("exits 2 for a --version that is not a number", async () => {
    const api = stubApi(200, published);

    const result = await runCli(["templates", "publish", "welcome", "--version", "draft"], { env, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result).message).toBe('--version takes a version number (1, 2, …); got "draft".');
    expect(api.seen).toEqual([]);
  });

  it("exits 1 with 409 nothing_to_publish when there is no draft", async () => {
    const result = await runCli(["templates", "publish", "welcome"], { env, fetch: stubApi(409, problemBody(409, "nothing_to_publish")).fetch });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ code: "nothing_to_publish" });
  });

  it("sends --base-revision as base_revision, for a publish and a rollback", async () => {
    const api = stubApi(200, published);

    await runCli(["templates", "publish", "welcome", "--base-revision", "7"], { env, fetch: api.fetch });
    const result = await runCli(["templates", "publish", "welcome", "--version", "1", "--base-revision", "8"], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(api.seen.map((request) => request.body)).toEqual([{ base_revision: 7 }, { version: 1, base_revision: 8 }]);
  });

  it.each(["0", "-1", "1.5", "seven"])("exits 2 for --base-revision %s, publishing nothing", async (value) => {
    const api = stubApi(200, published);

    const result = await runCli(["templates", "publish", "welcome", "--version", "1", "--base-revision", value], { env, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result).message).toContain("--base-revision");
    expect(api.seen).toEqual([]);
  });

  it("exits 1 with template_changed when the template changed since the revision given", async () => {
    const api = stubApi(409, problemBody(409, "template_changed"));

    const result = await runCli(["templates", "publish", "welcome", "--version", "1", "--base-revision", "7"], { env, fetch: api.fetch });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ status: 409, code: "template_changed" });
  });
});

describe("mailroom templates list-versions", () => {
  it("lists the versions, also as `templates versions`, and shows version, state and subject on a terminal", async () => {
    const [draft] = contractExample<{ data: TemplateVersion[] }>("TemplateVersionListPage").data;
    const api = stubApi(200, page([draft, version]));

    const json = await runCli(["templates", "list-versions", "welcome", "--limit", "5"], { env, fetch: api.fetch });
    const human = await runCli(["templates", "versions", "welcome"], { env, tty: true, fetch: api.fetch });

    expect(json.json()).toEqual(page([draft, version]));
    expect(api.seen.map((seen) => seen.target)).toEqual(["/v1/templates/welcome/versions?limit=5", "/v1/templates/welcome/versions?limit=20"]);
    const lines = human.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^VERSION\s+STATE\s+SUBJECT\s+CREATED\s+PUBLISHED$/);
    expect(lines[1]).toMatch(/^2\s+draft\s+Welcome aboard, \{\{ first_name \}\}\s+2026-11-21T09:30:00\.000Z$/);
    expect(lines[2]).toMatch(/^1\s+published\s+Welcome, \{\{ first_name \}\}\s+2026-11-21T09:00:00\.000Z\s+2026-11-21T09:00:00\.000Z$/);
  });
});

describe("mailroom templates get-version", () => {
  it("gets the numbered version", async () => {
    const api = stubApi(200, version);

    const result = await runCli(["templates", "get-version", "welcome", "1"], { env, fetch: api.fetch });

    expect(result.json<TemplateVersion>()).toEqual(version);
    expect(api.seen).toMatchObject([{ method: "GET", target: "/v1/templates/welcome/versions/1" }]);
  });

  it("shows it as slug@version on a terminal", async () => {
    const result = await runCli(["templates", "get-version", "welcome", "1"], { env, tty: true, fetch: stubApi(200, version).fetch });

    expect(result.stdout).toMatch(/^template\s+welcome@1$/m);
    expect(result.stdout).toMatch(/^state\s+published$/m);
    expect(result.stdout).toMatch(/^layout\s+none$/m);
  });

  it("shows the layout the version is sent in", async () => {
    const result = await runCli(["templates", "get-version", "welcome", "1"], { env, tty: true, fetch: stubApi(200, { ...version, layout: "base" }).fetch });

    expect(result.stdout).toMatch(/^layout\s+base$/m);
  });

  it("exits 2 for a version that is not a number", async () => {
    const api = stubApi(200, version);

    const result = await runCli(["templates", "get-version", "welcome", "latest"], { env, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result).message).toBe('<version> takes a version number (1, 2, …); got "latest".');
    expect(api.seen).toEqual([]);
  });
});

describe("mailroom templates delete", () => {
  it("deletes the template and prints the API's answer", async () => {
    const api = stubApi(200, deleted);

    const result = await runCli(["templates", "delete", "welcome", "--yes"], { env, fetch: api.fetch });

    expect(result.json<DeletedObject>()).toEqual({ id: TEMPLATE_ID, object: "template", deleted: true });
    expect(api.seen).toMatchObject([{ method: "DELETE", target: "/v1/templates/welcome", idempotencyKey: null }]);
  });

  it.each([
    ["welcome", "template_in_use", "while a scheduled message needs it"],
    ["base", "layout_in_use", "for a layout while a template is sent in it"],
  ])("exits 1 for %s with 409 %s %s", async (slug, code) => {
    const result = await runCli(["templates", "delete", slug, "--yes"], { env, fetch: stubApi(409, problemBody(409, code)).fetch });

    expect(result.code).toBe(1);
    expect(problemOf(result)).toMatchObject({ code });
  });
});

describe("mailroom templates render", () => {
  it("sends --version draft and the --variables JSON, and prints what a send would", async () => {
    const api = stubApi(200, rendered);

    const result = await runCli(["templates", "render", "welcome", "--version", "draft", "--variables", '{"first_name": "Ada"}'], { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(result.json<RenderedTemplate>()).toEqual(rendered);
    expect(api.seen).toMatchObject([{ method: "POST", target: "/v1/templates/welcome/render", body: { version: "draft", variables: { first_name: "Ada" } }, idempotencyKey: expect.any(String) }]);
  });

  it("merges --variables-file, --var-json and --var, the most specific winning, and sends a numbered --version as a number", async () => {
    const api = stubApi(200, rendered);
    const files = { "vars.json": JSON.stringify({ first_name: "File", plan: "pro", order: { id: 1 } }) };

    await runCli(["templates", "render", "welcome", "--version", "3", "--variables-file", "vars.json", "--var-json", '{"order": {"id": 7}, "vip": true}', "--var", "first_name=Ada", "--var", "note=a=b"], {
      env,
      fetch: api.fetch,
      files,
    });

    expect(api.seen[0]?.body).toEqual({ version: 3, variables: { first_name: "Ada", plan: "pro", order: { id: 7 }, vip: true, note: "a=b" } });
  });

  it("sends --layout-version as the layout's version to render in: draft, or a number", async () => {
    const api = stubApi(200, rendered);

    await runCli(["templates", "render", "welcome", "--layout-version", "draft"], { env, fetch: api.fetch });
    await runCli(["templates", "render", "welcome", "--layout-version", "3"], { env, fetch: api.fetch });

    expect(api.seen.map((seen) => seen.body)).toEqual([{ layout_version: "draft" }, { layout_version: 3 }]);
  });

  it("sends an empty body without flags: the published version, no variables", async () => {
    const api = stubApi(200, rendered);

    await runCli(["templates", "render", "welcome"], { env, fetch: api.fetch });

    expect(api.seen[0]?.body).toEqual({});
  });

  it("prints the template and layout versions, and the rendered subject, html and text, on a terminal", async () => {
    const result = await runCli(["templates", "render", "welcome"], { env, tty: true, fetch: stubApi(200, rendered).fetch });

    expect(result.stdout).toBe(
      'template  welcome@2\nlayout    base@4\n\nsubject   Welcome aboard, Ada\n\nhtml:\n<div class="mail"><p>Hello Ada, thanks for joining the free plan.</p><p>Acme Inc.</p></div>\n\ntext:\nHello Ada, thanks for joining the free plan.\n\nAcme Inc.\n',
    );
  });

  it("prints no layout line for a template sent in none", async () => {
    const alone: RenderedTemplate = { ...rendered, layout: null, html: "<p>Hi Ada</p>", text: "Hi Ada" };

    const result = await runCli(["templates", "render", "welcome"], { env, tty: true, fetch: stubApi(200, alone).fetch });

    expect(result.stdout).toBe("template  welcome@2\n\nsubject   Welcome aboard, Ada\n\nhtml:\n<p>Hi Ada</p>\n\ntext:\nHi Ada\n");
  });

  it.each([
    [["--var-json", "[1, 2]"], "--var-json: the value must be a JSON object of variables"],
    [["--var-json", "{first_name: Ada}"], "--var-json: the value is not JSON"],
    [["--var", "first_name"], '--var takes key=value; got "first_name".'],
    [["--version", "latest"], '--version takes a version number (1, 2, …) or draft; got "latest".'],
    [["--layout-version", "0"], '--layout-version takes a version number (1, 2, …) or draft; got "0".'],
  ])("exits 2 for %j, sending nothing", async (flags, message) => {
    const api = stubApi(200, rendered);

    const result = await runCli(["templates", "render", "welcome", ...flags], { env, fetch: api.fetch });

    expect(result.code).toBe(2);
    expect(problemOf(result).message).toContain(message);
    expect(api.seen).toEqual([]);
  });

  it("exits 1 with one line per bad variable", async () => {
    const errors = [
      { location: "body", pointer: "/variables/first_name", message: "is required" },
      { location: "body", pointer: "/variables/nickname", message: "is not declared" },
    ];

    const result = await runCli(["templates", "render", "welcome", "--var", "nickname=A"], { env, tty: true, fetch: stubApi(422, problemBody(422, "validation_failed", { errors })).fetch });

    expect(result.code).toBe(1);
    expect(result.stderr).toContain("  /variables/first_name: is required\n  /variables/nickname: is not declared\n");
  });
});

describe("mailroom templates --help", () => {
  it("lists every verb with an example", async () => {
    const result = await runCli(["templates", "--help"], { env: {} });

    expect(result.code).toBe(0);
    for (const verb of ["create", "list", "get <template>", "update <template>", "publish <template>", "list-versions <template>", "get-version <template>", "delete <template>", "render <template>"]) {
      expect(result.stdout).toContain(`mailroom templates ${verb}`);
    }
  });

  it("still prints the CLI's own version for mailroom --version", async () => {
    const result = await runCli(["--version"], { env: {} });

    expect(result.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});

describe("mailroom templates against the real server", () => {
  let serverEnv: Record<string, string>;
  useTestServer((started) => (serverEnv = started.env));

  it("creates a template from files, edits and renders its draft, publishes it, and lists both versions", async () => {
    const files = { "receipt.html": "<p>{{ first_name }}: order {{ order.id }}</p>", "vars.json": JSON.stringify([{ name: "first_name", type: "string", required: true }, { name: "order", type: "object", required: true }]) };
    const cli = (...argv: string[]) => runCli(argv, { env: serverEnv, files });

    const created = await cli("templates", "create", "--slug", "receipt", "--name", "Receipt", "--subject", "Order {{ order.id }}", "--html-file", "receipt.html", "--variables-file", "vars.json", "--publish");
    expect(created.code, created.stderr).toBe(0);
    expect(created.json<Template>()).toMatchObject({ slug: "receipt", published_version: 1, variables: [{ name: "first_name" }, { name: "order" }] });

    const updated = await cli("templates", "update", "receipt", "--subject", "Your order {{ order.id }}");
    expect(updated.json<Template>()).toMatchObject({ published_version: 1, latest_version: 2, has_draft: true });

    const draft = await cli("templates", "render", "receipt", "--version", "draft", "--var", "first_name=Ada", "--var-json", '{"order": {"id": 7}}');
    expect(draft.json<RenderedTemplate>()).toMatchObject({ version: 2, subject: "Your order 7", html: "<p>Ada: order 7</p>" });

    const refused = await cli("templates", "render", "receipt", "--var", "first_name=Ada");
    expect(refused.code).toBe(1);
    expect(problemOf(refused)).toMatchObject({ status: 422, errors: [expect.objectContaining({ pointer: "/variables/order" })] });

    expect((await cli("templates", "publish", "receipt")).json<Template>()).toMatchObject({ published_version: 2, has_draft: false });
    const versions = await cli("templates", "versions", "receipt");
    expect(versions.json<{ data: TemplateVersion[] }>().data.map((each) => [each.version, each.state])).toEqual([
      [2, "published"],
      [1, "archived"],
    ]);
    expect((await cli("templates", "get-version", "receipt", "1")).json<TemplateVersion>()).toMatchObject({ subject: "Order {{ order.id }}" });
  });

  it("creates a layout and a template sent in it, renders them together, and lists the layouts", async () => {
    const cli = (...argv: string[]) => runCli(argv, { env: serverEnv });

    const layout = await cli("templates", "create", "--kind", "layout", "--slug", "frame", "--name", "Frame", "--html", "<div>{{ content }}<p>Acme</p></div>", "--publish");
    expect(layout.code, layout.stderr).toBe(0);
    expect(layout.json<Template>()).toMatchObject({ kind: "layout", subject: "", layout: null });

    const created = await cli("templates", "create", "--slug", "hello", "--name", "Hello", "--layout", "frame", "--subject", "Hi", "--html", "<p>Hi {{ first_name }}</p>", "--publish");
    expect(created.json<Template>()).toMatchObject({ kind: "standard", layout: "frame" });

    const shown = await cli("templates", "render", "hello", "--var", "first_name=Ada");
    expect(shown.json<RenderedTemplate>()).toMatchObject({ layout: { slug: "frame", version: 1 }, html: "<div><p>Hi Ada</p><p>Acme</p></div>" });
    expect((await cli("templates", "list", "--kind", "layout")).json<{ data: Template[] }>().data.map((each) => each.slug)).toEqual(["frame"]);

    // A change to the layout, tried on the templates it will touch before it is published.
    await cli("templates", "update", "frame", "--html", "<main>{{ content }}<footer>Acme</footer></main>");
    expect((await cli("templates", "list", "--layout", "frame")).json<{ data: Template[] }>().data.map((each) => each.slug)).toEqual(["hello"]);
    const inDraft = await cli("templates", "render", "hello", "--layout-version", "draft", "--var", "first_name=Ada");
    expect(inDraft.json<RenderedTemplate>()).toMatchObject({ layout: { slug: "frame", version: 2 }, html: "<main><p>Hi Ada</p><footer>Acme</footer></main>" });

    expect((await cli("templates", "update", "hello", "--no-layout")).json<Template>()).toMatchObject({ layout: null, has_draft: true });
  });
});

describe("template slugs that look like numbers", () => {
  // yargs reads an untyped word that looks like a number as one: 0x10 was sent as 16, 1e3 as 1000.
  it.each([
    [["templates", "get", "0x10"], "GET", "/v1/templates/0x10", published],
    [["templates", "get", "1e3"], "GET", "/v1/templates/1e3", published],
    [["templates", "delete", "0x10", "--yes"], "DELETE", "/v1/templates/0x10", deleted],
    [["templates", "delete", "007", "--yes"], "DELETE", "/v1/templates/007", deleted],
    [["templates", "update", "1e3", "--name", "N"], "PATCH", "/v1/templates/1e3", published],
    [["templates", "publish", "0x10"], "POST", "/v1/templates/0x10/publish", published],
    [["templates", "versions", "0x10"], "GET", "/v1/templates/0x10/versions?limit=20", page([version])],
    [["templates", "get-version", "0x10", "3"], "GET", "/v1/templates/0x10/versions/3", version],
    [["templates", "render", "1e3"], "POST", "/v1/templates/1e3/render", rendered],
  ])("%j addresses the template by that slug as written", async (argv, method, target, answer) => {
    const api = stubApi(200, answer);

    const result = await runCli(argv, { env, fetch: api.fetch });

    expect(result.code, result.stderr).toBe(0);
    expect(api.seen).toMatchObject([{ method, target }]);
  });

  it.each([
    [["webhooks", "get", "0x10"], "/v1/webhooks/0x10"],
    [["messages", "get", "1e3"], "/v1/messages/1e3"],
    [["domains", "get", "0x10"], "/v1/domains/0x10"],
    [["api-keys", "get", "1e3"], "/v1/api-keys/1e3"],
    [["suppressions", "get", "0x10"], "/v1/suppressions/0x10"],
    [["inbound", "get", "1e3"], "/v1/inbound/1e3"],
    [["request-logs", "get", "0x10"], "/v1/request-logs/0x10"],
  ])("%j sends the id as written too", async (argv, target) => {
    // The answer does not matter here (an error, even): only what was asked.
    const api = stubApi(404, problemBody(404, "not_found"));

    await runCli(argv, { env, fetch: api.fetch });

    expect(api.seen[0]?.target).toBe(target);
  });
});
