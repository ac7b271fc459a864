import { performance as nodePerformance } from "node:perf_hooks";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { LIMITS } from "../../src/domain/limits.js";
import { databases } from "../helpers/databases.js";
import { templateCalls } from "../helpers/template-calls.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";
import type { components } from "../../generated/v1.js";

type Template = components["schemas"]["Template"];
type TemplateVersion = components["schemas"]["TemplateVersion"];
type Message = components["schemas"]["Message"];

const WELCOME = {
  slug: "welcome",
  name: "Welcome",
  subject: "Welcome, {{ first_name }}",
  html: "<p>Hello {{ first_name }}, you are on {{ plan }}.</p>",
  variables: [
    { name: "first_name", type: "string", required: true, description: "The recipient's first name" },
    { name: "plan", type: "string", default: "the free plan" },
  ],
};

describe.each(databases)("Templates ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(database);
  });
  afterEach(async () => t.close());

  const calls = templateCalls(() => t);
  const create = (overrides: Record<string, unknown> = {}, key?: string) => calls.create({ ...WELCOME, ...overrides }, key);
  const { update, publish } = calls;
  const render = (ref: string, payload: object = {}, key?: string) => t.call({ method: "POST", url: `/v1/templates/${ref}/render`, payload, ...(key ? { key } : {}) });
  const versions = async (ref: string) => {
    const res = await t.call({ method: "GET", url: `/v1/templates/${ref}/versions?limit=100` });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().data as TemplateVersion[]).map((v) => `${v.version}:${v.state}`);
  };
  const slugs = async (key?: string) => {
    const res = await t.call({ method: "GET", url: "/v1/templates?limit=100", ...(key ? { key } : {}) });
    expect(res.statusCode).toBe(200);
    return (res.json().data as Template[]).map((template) => template.slug);
  };
  const send = (payload: object, key?: string) => t.call({ method: "POST", url: "/v1/messages", payload, ...(key ? { key } : {}) });
  const storedMessages = async () => (await t.runtime.db.knex("messages").count({ n: "*" }).first())!.n;

  describe("createTemplate", () => {
    it("answers 201 with a Location and version 1 as a draft, its variables spelt out", async () => {
      const res = await t.call({ method: "POST", url: "/v1/templates", payload: WELCOME });
      expect(res.statusCode).toBe(201);
      const template = res.json() as Template;
      expect(res.headers.location).toBe("/v1/templates/welcome");
      expect(template).toEqual({
        id: expect.stringMatching(/^tpl_[0-9a-z]{26}$/),
        object: "template",
        kind: "standard",
        slug: "welcome",
        name: "Welcome",
        published_version: null,
        latest_version: 1,
        has_draft: true,
        revision: 1,
        subject: WELCOME.subject,
        html: WELCOME.html,
        text: null,
        layout: null,
        variables: [
          { name: "first_name", type: "string", required: true, default: null, description: "The recipient's first name" },
          { name: "plan", type: "string", required: false, default: "the free plan", description: null },
        ],
        referenced_variables: ["first_name", "plan"],
        created_at: new Date(t.clock.now()).toISOString(),
        updated_at: new Date(t.clock.now()).toISOString(),
      });
      expect(await versions("welcome")).toEqual(["1:draft"]);
    });

    it("publishes version 1 at once with publish: true", async () => {
      const template = await create({ publish: true });
      expect(template).toMatchObject({ published_version: 1, latest_version: 1, has_draft: false });
      expect(await versions("welcome")).toEqual(["1:published"]);
    });

    it("answers 409 template_exists for a slug the workspace has; another workspace may use it", async () => {
      await create();
      const res = await t.call({ method: "POST", url: "/v1/templates", payload: { ...WELCOME, name: "Again" } });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ code: "template_exists", detail: expect.stringContaining("welcome") });
      await create({}, t.other.sandboxKey);
      expect(await slugs()).toEqual(["welcome"]);
    });

    it("answers 409 to the second of two concurrent creates of the same slug", async () => {
      const answers = await Promise.all([0, 1].map(() => t.call({ method: "POST", url: "/v1/templates", payload: WELCOME })));
      expect(answers.map((res) => res.statusCode).sort()).toEqual([201, 409]);
      expect(await slugs()).toEqual(["welcome"]);
    });

    it("refuses a slug that is not lowercase letters, digits and single hyphens", async () => {
      for (const slug of ["Welcome", "wel_come", "-welcome", "welcome-", "wel--come", "", "x".repeat(65)]) {
        const res = await t.call({ method: "POST", url: "/v1/templates", payload: { ...WELCOME, slug } });
        expect(res.statusCode, slug).toBe(422);
        expect(res.json().code, slug).toBe("validation_failed");
        expect(new Set((res.json().errors as Array<{ pointer: string }>).map((e) => e.pointer)), slug).toEqual(new Set(["/slug"]));
      }
      expect(await slugs()).toEqual([]);
    });

    it("lists every Liquid syntax error with its field and line, and stores nothing", async () => {
      const res = await t.call({
        method: "POST",
        url: "/v1/templates",
        payload: { ...WELCOME, subject: "Hi {{ first_name", html: "<p>one</p>\n<p>two</p>\n{% if plan %}\n<p>{{ plan | shout }}</p>\n{% endif %}", text: "ok\n{% for x %}" },
      });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({
        code: "validation_failed",
        errors: [
          { pointer: "/subject", line: 1, message: expect.stringContaining("not closed") },
          { pointer: "/html", line: 4, message: expect.stringContaining("undefined filter: shout") },
          { pointer: "/text", line: 2, message: expect.any(String) },
        ],
      });
      expect(await slugs()).toEqual([]);
    });

    it("refuses include, render and layout: a template cannot read other templates or files", async () => {
      for (const tag of ["{% include 'welcome' %}", "{% render '/etc/passwd' %}", "{% layout 'base' %}"]) {
        const res = await t.call({ method: "POST", url: "/v1/templates", payload: { ...WELCOME, html: `<p>x</p>\n${tag}` } });
        expect(res.statusCode, tag).toBe(422);
        expect(res.json().errors, tag).toEqual([expect.objectContaining({ pointer: "/html", line: 2, message: expect.stringContaining("not available") })]);
      }
    });

    it("checks the variable declarations: unique names, defaults of the declared type, no default on a required one", async () => {
      const res = await t.call({
        method: "POST",
        url: "/v1/templates",
        payload: {
          ...WELCOME,
          variables: [
            { name: "a", type: "string" },
            { name: "a", type: "number" },
            { name: "b", type: "number", default: "7" },
            { name: "c", type: "array", default: {} },
            { name: "d", type: "string", required: true, default: "x" },
            { name: "not valid", type: "string" },
            { name: "e", type: "date" },
          ],
        },
      });
      expect(res.statusCode).toBe(422);
      const pointers = (res.json().errors as Array<{ pointer: string }>).map((e) => e.pointer).sort();
      expect(pointers).toEqual(["/variables/5/name", "/variables/6/type"]);
      // The schema's errors come first; once they are fixed the declarations are checked too.
      const again = await t.call({
        method: "POST",
        url: "/v1/templates",
        payload: { ...WELCOME, variables: [{ name: "a", type: "string" }, { name: "a", type: "number" }, { name: "b", type: "number", default: "7" }, { name: "c", type: "array", default: {} }, { name: "d", type: "string", required: true, default: "x" }] },
      });
      expect(again.statusCode).toBe(422);
      expect(again.json().errors).toEqual([
        { location: "body", pointer: "/variables/1/name", message: "a is declared twice" },
        { location: "body", pointer: "/variables/2/default", message: "must be a number" },
        { location: "body", pointer: "/variables/3/default", message: "must be an array" },
        { location: "body", pointer: "/variables/4/default", message: "a required variable has no default" },
      ]);
      expect(await slugs()).toEqual([]);
    });

    it("stores 100 declarations with long descriptions and defaults of up to 64 KiB, and refuses a larger default", async () => {
      // 500 four-byte characters per description, and three defaults at the limit (65,536 bytes as JSON, quotes included): past MySQL's TEXT.
      const variables = Array.from({ length: 100 }, (_, i) => ({ name: `v${i}`, type: "string", description: "😀".repeat(500), ...(i < 3 ? { default: "é".repeat(32_767) } : {}) }));
      const made = await t.call({ method: "POST", url: "/v1/templates", payload: { ...WELCOME, variables } });
      expect(made.statusCode, made.body.slice(0, 300)).toBe(201);
      await create({ slug: "other" });
      const updated = await update("other", { variables });
      expect(updated.variables).toHaveLength(100);
      for (const ref of ["welcome", "other"]) {
        const res = await t.call({ method: "GET", url: `/v1/templates/${ref}` });
        expect(res.statusCode).toBe(200);
        expect((res.json() as Template).variables).toEqual(variables.map((v) => ({ required: false, default: null, ...v })));
      }
      const tooBig = [{ name: "big", type: "object", default: { text: "x".repeat(65_530) } }];
      for (const res of [await t.call({ method: "POST", url: "/v1/templates", payload: { ...WELCOME, slug: "big", variables: tooBig } }), await t.call({ method: "PATCH", url: "/v1/templates/other", payload: { variables: tooBig } })]) {
        expect(res.statusCode).toBe(422);
        expect(res.json().errors).toEqual([{ location: "body", pointer: "/variables/0/default", message: "is 65,541 bytes as JSON; a default is at most 65,536 (64 KiB)" }]);
      }
      const together = Array.from({ length: 5 }, (_, i) => ({ name: `v${i}`, type: "string", default: "x".repeat(60_000) }));
      const tooMany = await t.call({ method: "POST", url: "/v1/templates", payload: { ...WELCOME, slug: "big", variables: together } });
      expect(tooMany.statusCode).toBe(422);
      expect(tooMany.json().errors).toEqual([{ location: "body", pointer: "/variables", message: "hold defaults of 300,010 bytes as JSON together; a version's defaults are at most 262,144 (256 KiB) together" }]);
      expect(await slugs()).toEqual(["other", "welcome"]);
    });

    it("refuses unknown fields and missing required ones", async () => {
      const res = await t.call({ method: "POST", url: "/v1/templates", payload: { slug: "welcome", html: "<p>x</p>", colour: "red" } });
      expect(res.statusCode).toBe(422);
      expect((res.json().errors as Array<{ pointer: string }>).map((e) => e.pointer).sort()).toEqual(["/colour", "/name"]);
      // A subject is required of a standard template only (a layout has none): the service says so.
      const noSubject = await t.call({ method: "POST", url: "/v1/templates", payload: { slug: "welcome", name: "Welcome", html: "<p>x</p>" } });
      expect(noSubject.statusCode).toBe(422);
      expect(noSubject.json().errors).toEqual([{ location: "body", pointer: "/subject", message: "is required (only a layout has no subject)" }]);
    });
  });

  describe("listTemplates", () => {
    it("pages through the workspace's templates, newest first, the same with the sandbox and the live key", async () => {
      for (const slug of ["a", "b", "c", "d", "e"]) {
        await create({ slug });
        t.clock.advance(1000);
      }
      const seen: string[] = [];
      let after: string | null = null;
      let pages = 0;
      do {
        const res = await t.call({ method: "GET", url: `/v1/templates?limit=2${after ? `&after=${after}` : ""}` });
        expect(res.statusCode).toBe(200);
        const page = res.json() as { data: Template[]; has_more: boolean; next_cursor: string | null };
        seen.push(...page.data.map((template) => template.slug));
        after = page.next_cursor;
        pages++;
      } while (after !== null && pages < 10);
      expect(pages).toBe(3);
      expect(seen).toEqual(["e", "d", "c", "b", "a"]);
      // Templates belong to the workspace, not to an environment (DESIGN.md §6).
      expect(await slugs(t.workspace.liveKey)).toEqual(seen);
      expect(await slugs(t.other.sandboxKey)).toEqual([]);
      expect(await slugs(t.other.liveKey)).toEqual([]);
    });

    it("shows each template with its latest version", async () => {
      await create({ publish: true });
      await update("welcome", { subject: "Draft subject" });
      const res = await t.call({ method: "GET", url: "/v1/templates" });
      expect(res.json().data).toEqual([expect.objectContaining({ slug: "welcome", subject: "Draft subject", published_version: 1, latest_version: 2, has_draft: true })]);
    });
  });

  describe("getTemplate", () => {
    it("answers by slug and by id, to a sandbox and a live key of the workspace alike", async () => {
      const made = await create();
      for (const ref of ["welcome", made.id]) {
        for (const key of [t.workspace.sandboxKey, t.workspace.liveKey]) {
          const res = await t.call({ method: "GET", url: `/v1/templates/${ref}`, key });
          expect(res.statusCode).toBe(200);
          expect(res.json()).toEqual(made);
        }
      }
    });

    it("answers 404 for its slug or id followed by a space, or in capitals, on every database", async () => {
      const made = await create();
      for (const ref of ["welcome%20", "WELCOME", `${made.id}%20`, made.id.toUpperCase()]) {
        const res = await t.call({ method: "GET", url: `/v1/templates/${ref}` });
        expect(res.statusCode, ref).toBe(404);
        expect(res.json()).toMatchObject({ code: "not_found", detail: `No template ${decodeURIComponent(ref)} in this workspace.` });
      }
    });

    it("answers 404 for an unknown template and for another workspace's", async () => {
      const made = await create();
      expect((await t.call({ method: "GET", url: "/v1/templates/nope" })).statusCode).toBe(404);
      for (const key of [t.other.sandboxKey, t.other.liveKey]) {
        for (const ref of ["welcome", made.id]) {
          const res = await t.call({ method: "GET", url: `/v1/templates/${ref}`, key });
          expect(res.statusCode).toBe(404);
          expect(res.json().code).toBe("not_found");
        }
      }
    });
  });

  describe("updateTemplate", () => {
    it("changes an unpublished draft in place", async () => {
      await create();
      const template = await update("welcome", { subject: "Hi {{ first_name }}" });
      expect(template).toMatchObject({ latest_version: 1, has_draft: true, subject: "Hi {{ first_name }}", html: WELCOME.html });
      expect(await versions("welcome")).toEqual(["1:draft"]);
    });

    it("makes a new draft from the published version plus the changes, and edits that draft after", async () => {
      await create({ publish: true });
      let template = await update("welcome", { html: "<p>New {{ first_name }}</p>" });
      expect(template).toMatchObject({ published_version: 1, latest_version: 2, has_draft: true, subject: WELCOME.subject, html: "<p>New {{ first_name }}</p>" });
      template = await update("welcome", { subject: "Newer" });
      expect(template).toMatchObject({ latest_version: 2, subject: "Newer", html: "<p>New {{ first_name }}</p>" });
      expect(await versions("welcome")).toEqual(["2:draft", "1:published"]);
      // Nothing sends differently until the draft is published.
      const rendered = await render("welcome", { variables: { first_name: "Ada" } });
      expect(rendered.json()).toMatchObject({ version: 1, subject: "Welcome, Ada" });
    });

    it("finds the variables the version uses again for the fields an edit changes, and keeps them for the others", async () => {
      const made = await create({ publish: true, variables: [], html: "<p>Hello {{ first_name }}</p>", text: "Your code: {{ code }}" });
      expect(made.referenced_variables).toEqual(["first_name", "code"]);
      let template = await update("welcome", { html: "<p>Hello {{ first_name }}, you are on {{ plan_name }}</p>" });
      expect(template).toMatchObject({ latest_version: 2, referenced_variables: ["first_name", "plan_name", "code"] });
      template = await update("welcome", { variables: [{ name: "first_name", type: "string" }] });
      expect(template.referenced_variables).toEqual(["first_name", "plan_name", "code"]);
      template = await update("welcome", { text: null, subject: "Welcome" });
      expect(template.referenced_variables).toEqual(["first_name", "plan_name"]);
      // Each version accepts what it uses: version 1 never used plan_name, the draft no longer uses code.
      const draft = await render("welcome", { version: "draft", variables: { first_name: "Ada", plan_name: "Pro" } });
      expect(draft.json()).toMatchObject({ version: 2, html: "<p>Hello Ada, you are on Pro</p>" });
      const one = await render("welcome", { version: 1, variables: { first_name: "Ada", code: "42", plan_name: "Pro" } });
      expect(one.json().errors).toEqual([{ location: "body", pointer: "/variables/plan_name", message: "is neither declared nor used by the template" }]);
      const stale = await render("welcome", { version: "draft", variables: { first_name: "Ada", code: "42" } });
      expect(stale.json().errors).toEqual([{ location: "body", pointer: "/variables/code", message: "is neither declared nor used by the template" }]);
      expect((await t.call({ method: "GET", url: "/v1/templates/welcome/versions/1" })).json().referenced_variables).toEqual(["first_name", "code"]);
    });

    it("renames at once without a new version: the name is not versioned", async () => {
      await create({ publish: true });
      const template = await update("welcome", { name: "Welcome mail" });
      expect(template).toMatchObject({ name: "Welcome mail", latest_version: 1, has_draft: false });
      expect(await versions("welcome")).toEqual(["1:published"]);
    });

    it("derives the text again when text is set to null", async () => {
      await create({ text: "Plain {{ first_name }}" });
      expect((await update("welcome", { text: null })).text).toBeNull();
      expect((await render("welcome", { variables: { first_name: "Ada" } })).json().text).toBe("Hello Ada, you are on the free plan.");
    });

    it("refuses to change the slug: slugs are permanent", async () => {
      await create();
      const res = await t.call({ method: "PATCH", url: "/v1/templates/welcome", payload: { slug: "hello", name: "Hello" } });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ pointer: "/slug", message: expect.stringContaining("slugs are permanent") }] });
      expect((await t.call({ method: "GET", url: "/v1/templates/welcome" })).json().name).toBe("Welcome");
    });

    it("refuses a syntax error with its line and an empty body, and changes nothing", async () => {
      await create({ publish: true });
      let res = await t.call({ method: "PATCH", url: "/v1/templates/welcome", payload: { html: "<p>\n{% for %}</p>" } });
      expect(res.statusCode).toBe(422);
      expect(res.json().errors).toEqual([expect.objectContaining({ pointer: "/html", line: 2 })]);
      res = await t.call({ method: "PATCH", url: "/v1/templates/welcome", payload: {} });
      expect(res.statusCode).toBe(422);
      expect(await versions("welcome")).toEqual(["1:published"]);
    });

    it("answers 404 for another workspace's template", async () => {
      await create();
      const res = await t.call({ method: "PATCH", url: "/v1/templates/welcome", payload: { name: "Mine now" }, key: t.other.sandboxKey });
      expect(res.statusCode).toBe(404);
      expect((await t.call({ method: "GET", url: "/v1/templates/welcome" })).json().name).toBe("Welcome");
    });

    it("refuses an edit based on an older revision with 409 template_changed, and stores nothing, not even the name", async () => {
      const read = await create({ publish: true });
      expect(read.revision).toBe(1);
      // Someone else (CI, another member) saves a draft after the editor read revision 1.
      const theirs = await update("welcome", { html: "<p>Theirs {{ first_name }}</p>" });
      expect(theirs).toMatchObject({ revision: 2, latest_version: 2 });
      t.clock.advance(1000);
      const res = await t.call({ method: "PATCH", url: "/v1/templates/welcome", payload: { base_revision: read.revision, html: "<p>Stale {{ first_name }}</p>", name: "Renamed" } });
      expect(res.statusCode, res.body).toBe(409);
      expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ status: 409, code: "template_changed", detail: expect.stringContaining("revision 2") });
      expect((await t.call({ method: "GET", url: "/v1/templates/welcome" })).json()).toEqual(theirs);
      expect(await versions("welcome")).toEqual(["2:draft", "1:published"]);
      // Based on what is there now, it applies.
      const mine = await update("welcome", { base_revision: theirs.revision, html: "<p>Mine {{ first_name }}</p>" });
      expect(mine).toMatchObject({ revision: 3, latest_version: 2, html: "<p>Mine {{ first_name }}</p>" });
    });

    it("answers an edit that gives the values the template has with the template as it is: no new draft, no new revision", async () => {
      const { subject, html, variables } = WELCOME;
      await create({ publish: true, text: "Hi {{ first_name }}" });
      t.clock.advance(1000);
      let before = (await t.call({ method: "GET", url: "/v1/templates/welcome" })).json() as Template;
      // Equal to the published version: no draft is made of it.
      expect(await update("welcome", { name: "Welcome", subject, html, text: "Hi {{ first_name }}", layout: null, variables })).toEqual(before);
      expect(await versions("welcome")).toEqual(["1:published"]);
      await update("welcome", { html: "<p>Two {{ first_name }}</p>", text: null });
      t.clock.advance(1000);
      before = (await t.call({ method: "GET", url: "/v1/templates/welcome" })).json() as Template;
      expect(before).toMatchObject({ revision: 2, latest_version: 2, has_draft: true });
      // Equal to the draft: the draft is left as it is.
      expect(await update("welcome", { html: "<p>Two {{ first_name }}</p>", text: null, base_revision: 2 })).toEqual(before);
      // Some fields equal, one not: a change, counted once.
      expect(await update("welcome", { html: "<p>Two {{ first_name }}</p>", subject: "Three" })).toMatchObject({ revision: 3, latest_version: 2, subject: "Three" });
      expect(await versions("welcome")).toEqual(["2:draft", "1:published"]);
    });

    it("counts each draft save, publish and rollback as a revision, a rename alone not; base_revision alone only checks", async () => {
      await create({ publish: true });
      expect((await update("welcome", { name: "Welcome mail" })).revision).toBe(1);
      expect((await update("welcome", { subject: "Two" })).revision).toBe(2); // a new draft
      expect((await update("welcome", { subject: "Two, again" })).revision).toBe(3); // the draft, in place
      expect((await publish("welcome")).revision).toBe(4);
      expect((await publish("welcome", { version: 1 })).revision).toBe(5); // a rollback
      // Publishing the published version changes nothing.
      expect((await publish("welcome", { version: 1 })).revision).toBe(5);
      // The editor read revision 4: the rollback since refuses its edit (which would publish 2's content again).
      const stale = await t.call({ method: "PATCH", url: "/v1/templates/welcome", payload: { base_revision: 4, subject: "Two, edited" } });
      expect(stale.statusCode).toBe(409);
      expect(stale.json().code).toBe("template_changed");
      t.clock.advance(1000);
      const before = (await t.call({ method: "GET", url: "/v1/templates/welcome" })).json() as Template;
      expect(await update("welcome", { base_revision: 5 })).toEqual(before);
      expect((await t.call({ method: "PATCH", url: "/v1/templates/welcome", payload: { base_revision: 4 } })).json().code).toBe("template_changed");
      expect(await versions("welcome")).toEqual(["2:archived", "1:published"]);
    });
  });

  describe("publishTemplate", () => {
    it("sends the published version at once, even after a send made while the publish was committing", async () => {
      await create({ publish: true });
      await update("welcome", { subject: "Two: {{ first_name }}" });
      const repository = t.runtime.repositories.templates;
      const before = await repository.resolve(t.workspace.id, "welcome", "published");
      const locked = repository.withLockedTemplate.bind(repository);
      vi.spyOn(repository, "withLockedTemplate").mockImplementation((workspaceId, id, work) =>
        locked(workspaceId, id, async (trx, template) => {
          const result = await work(trx, template);
          // A send between the change and its commit reads the state committed before (as on MySQL; SQLite's one connection would wait).
          const resolve = vi.spyOn(repository, "resolve").mockResolvedValue(before);
          expect((await t.runtime.services.templates.renderForMessage(t.workspace.id, { slug: "welcome", variables: { first_name: "Ada" } })).subject).toBe("Welcome, Ada");
          resolve.mockRestore();
          return result;
        }),
      );
      await publish("welcome");
      vi.restoreAllMocks();
      const sent = await send({ ...aMessage({ subject: undefined, html: undefined }), template: { slug: "welcome", variables: { first_name: "Ada" } } });
      expect(sent.statusCode, sent.body).toBe(202);
      expect(sent.json()).toMatchObject({ subject: "Two: Ada", template: { version: 2 } });
    });

    it("publishes the draft and archives the version published before, which stays addressable", async () => {
      await create({ publish: true });
      await update("welcome", { subject: "Version two, {{ first_name }}" });
      const template = await publish("welcome");
      expect(template).toMatchObject({ published_version: 2, latest_version: 2, has_draft: false, subject: "Version two, {{ first_name }}" });
      expect(await versions("welcome")).toEqual(["2:published", "1:archived"]);
      expect((await render("welcome", { variables: { first_name: "Ada" } })).json()).toMatchObject({ version: 2, subject: "Version two, Ada" });
      expect((await render("welcome", { version: 1, variables: { first_name: "Ada" } })).json()).toMatchObject({ version: 1, subject: "Welcome, Ada" });
    });

    it("rolls back to an earlier version, keeping the draft", async () => {
      await create({ publish: true });
      await update("welcome", { subject: "Two" });
      await publish("welcome");
      await update("welcome", { subject: "Three" });
      const template = await publish("welcome", { version: 1 });
      expect(template).toMatchObject({ published_version: 1, latest_version: 3, has_draft: true, subject: "Three" });
      expect(await versions("welcome")).toEqual(["3:draft", "2:archived", "1:published"]);
    });

    it("shows the version rolled back to when there is no draft, and an untouched save of it makes none", async () => {
      await create({ publish: true });
      await update("welcome", { subject: "Two" });
      await publish("welcome");
      const rolledBack = await publish("welcome", { version: 1 });
      // Version 2 is the newest but archived: what sends, and what an edit starts from, is 1.
      expect(rolledBack).toMatchObject({ published_version: 1, latest_version: 2, has_draft: false, subject: "Welcome, {{ first_name }}" });
      const got = (await t.call({ method: "GET", url: "/v1/templates/welcome" })).json();
      expect(got).toEqual(rolledBack);
      expect((await t.call({ method: "GET", url: "/v1/templates" })).json().data).toEqual([rolledBack]);
      const { subject, html, text, layout, variables } = got;
      const saved = await update("welcome", { subject, html, text, layout, variables });
      expect(saved).toEqual(rolledBack);
      expect(await versions("welcome")).toEqual(["2:archived", "1:published"]);
    });

    it("answers the template unchanged when the version is already the published one", async () => {
      const made = await create({ publish: true });
      t.clock.advance(1000);
      expect(await publish("welcome", { version: 1 })).toEqual(made);
    });

    it("answers 409 nothing_to_publish without a draft, and 422 for a version that does not exist", async () => {
      await create({ publish: true });
      let res = await t.call({ method: "POST", url: "/v1/templates/welcome/publish" });
      expect(res.statusCode).toBe(409);
      expect(res.json().code).toBe("nothing_to_publish");
      res = await t.call({ method: "POST", url: "/v1/templates/welcome/publish", payload: { version: 9 } });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ pointer: "/version" }] });
      expect(await versions("welcome")).toEqual(["1:published"]);
    });

    it("refuses a publish based on an older revision with 409 template_changed, and publishes nothing", async () => {
      await create({ publish: true });
      const read = await update("welcome", { subject: "Two, {{ first_name }}" });
      expect(read.revision).toBe(2);
      // Someone else saves over the draft after the publisher read revision 2: publishing would send what it never saw.
      const theirs = await update("welcome", { subject: "Theirs, {{ first_name }}" });
      t.clock.advance(1000);
      const res = await t.call({ method: "POST", url: "/v1/templates/welcome/publish", payload: { base_revision: read.revision } });
      expect(res.statusCode, res.body).toBe(409);
      expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ status: 409, code: "template_changed", detail: expect.stringContaining("revision 3, not 2") });
      expect((await t.call({ method: "GET", url: "/v1/templates/welcome" })).json()).toEqual(theirs);
      expect(await versions("welcome")).toEqual(["2:draft", "1:published"]);
      expect((await render("welcome", { variables: { first_name: "Ada" } })).json()).toMatchObject({ version: 1, subject: "Welcome, Ada" });
      // Based on what is there now, it publishes.
      const published = await publish("welcome", { base_revision: theirs.revision });
      expect(published).toMatchObject({ published_version: 2, has_draft: false, revision: 4, subject: "Theirs, {{ first_name }}" });
      expect(await versions("welcome")).toEqual(["2:published", "1:archived"]);
    });

    it("refuses a rollback based on an older revision with 409 template_changed, and leaves the published version alone", async () => {
      await create({ publish: true });
      await update("welcome", { subject: "Two" });
      const read = await publish("welcome");
      expect(read.revision).toBe(3);
      // Someone else publishes a fix (v3) after the page showing v2 as published was read: rolling back to v1 would undo it unseen.
      await update("welcome", { subject: "Three" });
      const theirs = await publish("welcome");
      t.clock.advance(1000);
      const res = await t.call({ method: "POST", url: "/v1/templates/welcome/publish", payload: { version: 1, base_revision: read.revision } });
      expect(res.statusCode, res.body).toBe(409);
      expect(res.json()).toMatchObject({ code: "template_changed", detail: expect.stringContaining("revision 5, not 3") });
      expect((await t.call({ method: "GET", url: "/v1/templates/welcome" })).json()).toEqual(theirs);
      expect(await versions("welcome")).toEqual(["3:published", "2:archived", "1:archived"]);
      // Even re-publishing the version already published is checked: the answer would claim a state the caller never saw.
      const same = await t.call({ method: "POST", url: "/v1/templates/welcome/publish", payload: { version: 3, base_revision: read.revision } });
      expect(same.json().code).toBe("template_changed");
      expect(await publish("welcome", { version: 3, base_revision: theirs.revision })).toEqual(theirs);
      // Based on the current revision, it rolls back.
      const rolledBack = await publish("welcome", { version: 1, base_revision: theirs.revision });
      expect(rolledBack).toMatchObject({ published_version: 1, latest_version: 3, revision: 6 });
      expect(await versions("welcome")).toEqual(["3:archived", "2:archived", "1:published"]);
    });

    it("publishes and rolls back without base_revision whatever changed since, as before", async () => {
      await create({ publish: true });
      await update("welcome", { subject: "Two" });
      await update("welcome", { subject: "Two, again" });
      expect(await publish("welcome", {})).toMatchObject({ published_version: 2, revision: 4, subject: "Two, again" });
      expect(await publish("welcome", { version: 1 })).toMatchObject({ published_version: 1, revision: 5 });
    });

    it("applies one of two publishes based on the same revision and refuses the other", async () => {
      await create({ publish: true });
      const read = await update("welcome", { subject: "Two" });
      const answers = await Promise.all([
        t.call({ method: "POST", url: "/v1/templates/welcome/publish", payload: { base_revision: read.revision } }),
        t.call({ method: "POST", url: "/v1/templates/welcome/publish", payload: { version: 1, base_revision: read.revision } }),
      ]);
      expect(answers.map((res) => res.statusCode).sort()).toEqual([200, 409]);
      expect(answers.find((res) => res.statusCode === 409)!.json().code).toBe("template_changed");
      expect((await t.call({ method: "GET", url: "/v1/templates/welcome" })).json().revision).toBe(3);
    });

    it("refuses a base_revision that is not a revision number", async () => {
      await create({ publish: true });
      for (const base_revision of [0, "2", 1.5]) {
        const res = await t.call({ method: "POST", url: "/v1/templates/welcome/publish", payload: { version: 1, base_revision } });
        expect(res.statusCode, JSON.stringify(base_revision)).toBe(422);
        expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ pointer: "/base_revision" }] });
      }
    });

    it("answers 404 for another workspace's template, with or without base_revision, and leaves it alone", async () => {
      await create({ publish: true });
      const made = await update("welcome", { subject: "Two" });
      for (const payload of [{}, { base_revision: made.revision }, { base_revision: 1 }, { version: 1, base_revision: made.revision }]) {
        const res = await t.call({ method: "POST", url: "/v1/templates/welcome/publish", payload, key: t.other.sandboxKey });
        expect(res.statusCode, JSON.stringify(payload)).toBe(404);
        expect(res.json().code).toBe("not_found");
      }
      expect((await t.call({ method: "GET", url: "/v1/templates/welcome" })).json()).toEqual(made);
      expect(await versions("welcome")).toEqual(["2:draft", "1:published"]);
    });
  });

  describe("listTemplateVersions", () => {
    it("pages through the versions, newest first", async () => {
      await create({ publish: true });
      for (const subject of ["2", "3", "4"]) {
        await update("welcome", { subject });
        await publish("welcome");
      }
      const seen: number[] = [];
      let after: string | null = null;
      do {
        const res = await t.call({ method: "GET", url: `/v1/templates/welcome/versions?limit=3${after ? `&after=${after}` : ""}` });
        expect(res.statusCode).toBe(200);
        seen.push(...(res.json().data as TemplateVersion[]).map((v) => v.version));
        after = res.json().next_cursor;
      } while (after !== null);
      expect(seen).toEqual([4, 3, 2, 1]);
    });

    it("refuses a cursor that is not a version number, and answers 404 for an unknown template", async () => {
      await create();
      expect((await t.call({ method: "GET", url: "/v1/templates/welcome/versions?after=abc" })).statusCode).toBe(422);
      expect((await t.call({ method: "GET", url: "/v1/templates/nope/versions" })).statusCode).toBe(404);
    });
  });

  describe("getTemplateVersion", () => {
    it("answers one version as it sends", async () => {
      const made = await create({ publish: true });
      await update("welcome", { subject: "Two" });
      const res = await t.call({ method: "GET", url: "/v1/templates/welcome/versions/1" });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        object: "template_version",
        template_id: made.id,
        slug: "welcome",
        version: 1,
        state: "published",
        subject: WELCOME.subject,
        html: WELCOME.html,
        text: null,
        layout: null,
        variables: made.variables,
        referenced_variables: ["first_name", "plan"],
        created_at: made.created_at,
        published_at: made.created_at,
      });
      expect((await t.call({ method: "GET", url: "/v1/templates/welcome/versions/2" })).json()).toMatchObject({ state: "draft", subject: "Two", published_at: null });
    });

    it("answers 404 for a version that does not exist and for another workspace's template", async () => {
      await create();
      expect((await t.call({ method: "GET", url: "/v1/templates/welcome/versions/2" })).statusCode).toBe(404);
      expect((await t.call({ method: "GET", url: "/v1/templates/welcome/versions/1", key: t.other.liveKey })).statusCode).toBe(404);
    });
  });

  describe("deleteTemplate", () => {
    it("removes the template and its versions; the slug is free again and sent messages keep their reference", async () => {
      const made = await create({ publish: true });
      const sent = await send({ ...aMessage({ subject: undefined, html: undefined }), template: { slug: "welcome", variables: { first_name: "Ada" } } });
      expect(sent.statusCode, sent.body).toBe(202);
      const res = await t.call({ method: "DELETE", url: "/v1/templates/welcome" });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ id: made.id, object: "template", deleted: true });
      expect((await t.call({ method: "GET", url: `/v1/templates/${made.id}` })).statusCode).toBe(404);
      expect(await t.runtime.db.knex("template_versions").where({ template_id: made.id })).toEqual([]);
      expect((await t.call({ method: "GET", url: `/v1/messages/${sent.json().id}` })).json().template).toEqual({ id: made.id, slug: "welcome", version: 1, layout: null });
      await create();
    });

    it("answers 409 template_in_use while a scheduled message of either environment uses it, and deletes once it is canceled", async () => {
      await t.verifiedDomain("acme.example");
      await create({ publish: true });
      const scheduled = await send(
        { ...aMessage({ subject: undefined, html: undefined }), template: { slug: "welcome", variables: { first_name: "Ada" } }, scheduled_at: new Date(t.clock.now() + 3_600_000).toISOString() },
        t.workspace.liveKey,
      );
      expect(scheduled.statusCode, scheduled.body).toBe(202);
      let res = await t.call({ method: "DELETE", url: "/v1/templates/welcome" });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ code: "template_in_use", detail: expect.stringContaining("1 scheduled message") });
      expect((await t.call({ method: "GET", url: "/v1/templates/welcome" })).statusCode).toBe(200);
      expect((await t.call({ method: "POST", url: `/v1/messages/${scheduled.json().id}/cancel`, key: t.workspace.liveKey })).statusCode).toBe(200);
      res = await t.call({ method: "DELETE", url: "/v1/templates/welcome" });
      expect(res.statusCode).toBe(200);
    });

    it("answers 404 for another workspace's template and leaves it alone", async () => {
      await create();
      expect((await t.call({ method: "DELETE", url: "/v1/templates/welcome", key: t.other.sandboxKey })).statusCode).toBe(404);
      expect(await slugs()).toEqual(["welcome"]);
    });
  });

  describe("renderTemplate", () => {
    it("renders the published version: html escaped, subject and text not, text derived from the html", async () => {
      await create({ publish: true, subject: "{{ first_name }} & co", html: "<p>Hi {{ first_name }}</p><p>{{ first_name | raw }}</p>" });
      const res = await render("welcome", { variables: { first_name: "<b>Ada</b>" } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({
        object: "rendered_template",
        template_id: expect.stringMatching(/^tpl_/),
        slug: "welcome",
        version: 1,
        layout: null,
        subject: "<b>Ada</b> & co",
        html: "<p>Hi &lt;b&gt;Ada&lt;/b&gt;</p><p><b>Ada</b></p>",
        text: "Hi <b>Ada</b>\n\nAda",
      });
    });

    it("escapes a captured value and an | escape'd value once", async () => {
      const html = [
        "{% capture g %}<b>Hi {{ first_name }}</b>{% endcapture %}[{{ g }}]",
        "[{{ first_name | escape }}][{{ first_name | escape_once }}][{{ first_name | xml_escape }}]",
        "{% assign e = first_name | escape %}[{{ e }}][{% echo e %}][{% echo g %}][{% cycle g, 'x' %}]",
        "{% liquid\ncapture c\necho first_name\nendcapture\necho c\n%}",
        "[{{ g | default: 'none' }}][{{ g | strip }}][{{ g.size }}][{{ g | size }}]{% if g contains 'Hi' %}[yes]{% endif %}{% if e == 'O&#39;Brien &amp; Co &lt;script&gt;' %}[equal]{% endif %}",
        "[{{ first_name }}][{% echo first_name %}][{% cycle first_name, 'y' %}][{{ g | append: first_name }}][{{ first_name | escape | append: '<i>' }}][{{ g | strip: '<' }}]",
      ].join("\n");
      await create({ publish: true, html });
      const res = await render("welcome", { variables: { first_name: "O'Brien & Co <script>" } });
      expect(res.statusCode, res.body).toBe(200);
      const name = "O&#39;Brien &amp; Co &lt;script&gt;";
      const hi = `<b>Hi ${name}</b>`;
      expect(res.json().html.split("\n")).toEqual([
        `[${hi}]`,
        `[${name}][${name}][${name}]`,
        `[${name}][${name}][${hi}][${hi}]`,
        name,
        `[${hi}][${hi}][${hi.length}][${hi.length}][yes][equal]`,
        // What a filter makes of an escaped value is plain text again, and escaped as such; a variable always is.
        `[${name}][${name}][${name}][&lt;b&gt;Hi O&amp;#39;Brien &amp;amp; Co &amp;lt;script&amp;gt;&lt;/b&gt;${name}][O&amp;#39;Brien &amp;amp; Co &amp;lt;script&amp;gt;&lt;i&gt;][b&gt;Hi O&amp;#39;Brien &amp;amp; Co &amp;lt;script&amp;gt;&lt;/b&gt;]`,
      ]);
      expect(res.json().html).not.toContain("<script>");
    });

    it("renders the draft when nothing is published, and the version asked for", async () => {
      await create({ text: "Text {{ first_name }}" });
      expect((await render("welcome", { variables: { first_name: "Ada" } })).json()).toMatchObject({ version: 1, text: "Text Ada" });
      await publish("welcome");
      await update("welcome", { subject: "Draft {{ first_name }}" });
      expect((await render("welcome", { version: "draft", variables: { first_name: "Ada" } })).json()).toMatchObject({ version: 2, subject: "Draft Ada" });
      expect((await render("welcome", { version: 1, variables: { first_name: "Ada" } })).json()).toMatchObject({ version: 1, subject: "Welcome, Ada" });
      const missing = await render("welcome", { version: 3 });
      expect(missing.statusCode).toBe(422);
      expect(missing.json().errors).toEqual([expect.objectContaining({ pointer: "/version" })]);
    });

    it("applies defaults and gives templates their variables' own properties only", async () => {
      await create({
        publish: true,
        html: "[{{ plan }}][{{ user.name }}][{{ user.constructor }}][{{ user.__proto__ }}][{{ user.toString }}][{{ tags.size }}][{{ first_name.constructor.name }}][{{ user.hasOwnProperty }}]",
        variables: [...WELCOME.variables, { name: "user", type: "object" }, { name: "tags", type: "array", default: [] }],
      });
      const res = await render("welcome", { variables: { first_name: "Ada", user: { name: "Ada" } } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().html).toBe("[the free plan][Ada][][][][0][][]");
    });

    it("lists every missing, extra and mistyped variable in one 422", async () => {
      await create({ publish: true, variables: [...WELCOME.variables, { name: "count", type: "number" }, { name: "vip", type: "boolean" }, { name: "items", type: "array" }] });
      const res = await render("welcome", { variables: { plan: 3, count: "7", vip: "yes", items: {}, colour: "red", extra: 1 } });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed" });
      expect(res.json().errors).toEqual([
        { location: "body", pointer: "/variables/first_name", message: "is required" },
        { location: "body", pointer: "/variables/plan", message: "must be a string" },
        { location: "body", pointer: "/variables/count", message: "must be a number" },
        { location: "body", pointer: "/variables/vip", message: "must be a boolean" },
        { location: "body", pointer: "/variables/items", message: "must be an array" },
        { location: "body", pointer: "/variables/colour", message: "is neither declared nor used by the template" },
        { location: "body", pointer: "/variables/extra", message: "is neither declared nor used by the template" },
      ]);
    });

    it("renders with a variable the template uses without declaring it, of any type; one left out renders empty", async () => {
      const made = await create({ publish: true, variables: [], subject: "Order {{ order.id }}", html: "<p>{{ greeting | default: 'Hello' }} {{ first_name }}: {{ order.items | size }} items{% assign total = order.total %} {{ total }}</p>" });
      expect(made).toMatchObject({ variables: [], referenced_variables: ["order", "greeting", "first_name"] });
      let res = await render("welcome", { variables: { first_name: "<Ada>", order: { id: 7, items: [1, 2], total: "9.50" } } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ subject: "Order 7", html: "<p>Hello &lt;Ada&gt;: 2 items 9.50</p>" });
      res = await render("welcome", { variables: {} });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ subject: "Order", html: "<p>Hello : 0 items </p>" }); // trimmed, as sent
      // The template assigns total itself: it is not one of its variables.
      res = await render("welcome", { variables: { order: { id: 7 }, total: 1 } });
      expect(res.json().errors).toEqual([{ location: "body", pointer: "/variables/total", message: "is neither declared nor used by the template" }]);
    });

    it("answers the subject as it is sent: line breaks as spaces, trimmed, and at most 998 characters", async () => {
      await create({ publish: true });
      const res = await render("welcome", { variables: { first_name: "Ada\r\nBcc: eve@example.com\u0000 \n" } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().subject).toBe("Welcome, Ada Bcc: eve@example.com");
      const tooLong = await render("welcome", { variables: { first_name: "😀".repeat(990) } });
      expect(tooLong.statusCode).toBe(422);
      expect(tooLong.json()).toMatchObject({ code: "validation_failed", errors: [{ pointer: "/variables", message: expect.stringMatching(/a subject of 999 characters.*at most 998/) }] });
      expect((await render("welcome", { variables: { first_name: "😀".repeat(989) } })).statusCode).toBe(200);
    });

    it("refuses, as a send does, a subject with a run of more than 997 characters without a space, which no header line could hold", async () => {
      await create({ publish: true, subject: "{{ first_name }}" });
      const variables = { first_name: "x".repeat(998) };
      const rendered = await render("welcome", { variables });
      expect(rendered.statusCode, rendered.body.slice(0, 300)).toBe(422);
      expect(rendered.json()).toMatchObject({ code: "validation_failed", errors: [{ pointer: "/variables", message: expect.stringMatching(/^renders a subject that cannot be folded into lines of at most 998 characters/) }] });
      const sent = await t.call({ method: "POST", url: "/v1/messages", payload: { to: "ada@example.com", from: "Acme <hello@acme.example>", template: { slug: "welcome", variables } } });
      expect(sent.statusCode, sent.body.slice(0, 300)).toBe(422);
      expect(sent.json().errors[0].message).toBe(rendered.json().errors[0].message);
      expect((await render("welcome", { variables: { first_name: "x".repeat(997) } })).statusCode).toBe(200);
    });

    it("refuses a subject, html or text that renders empty, as a send does; a layout renders by itself empty of content", async () => {
      await create({ publish: true, subject: "{{ title }}", html: "{% if show %}<p>Hi</p>{% endif %}\n", text: "{{ note }}", variables: [] });
      const res = await render("welcome", { variables: { title: " \n " } });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ pointer: "/variables", message: "renders an empty subject, html and text: a message needs a subject and a body (check the template and the variables it uses)" }] });
      const html = await render("welcome", { variables: { title: "Hi", note: "n" } });
      expect(html.json().errors).toEqual([{ location: "body", pointer: "/variables", message: expect.stringMatching(/^renders an empty html:/) }]);
      expect((await render("welcome", { variables: { title: "Hi", note: "n", show: true } })).statusCode).toBe(200);
      // Without a text of its own, the text is derived from the html, which is sent however little it says.
      await create({ slug: "banner", publish: true, subject: "Hi", html: "<p></p>", variables: [] });
      const banner = await render("banner");
      expect(banner.statusCode, banner.body).toBe(200);
      expect(banner.json().text).toBe("");
      await create({ slug: "base", kind: "layout", publish: true, subject: undefined, html: "<div>{{ content }}</div>", variables: [] });
      expect((await render("base")).statusCode).toBe(200);
    });

    it("refuses variables past 1 MiB as JSON, defaults included, before rendering", async () => {
      await create({ publish: true, subject: "Hi", html: "<p>{{ first_name | size }} {{ plan }} {{ notes | size }}</p>", variables: [...WELCOME.variables, { name: "notes", type: "string", default: "n".repeat(60_000) }] });
      // {"first_name":"…","plan":"the free plan","notes":"…"}: 60,051 bytes besides first_name's value.
      const room = 1_048_576 - 60_051;
      const ok = await render("welcome", { variables: { first_name: "a".repeat(room) } });
      expect(ok.statusCode, ok.body.slice(0, 300)).toBe(200);
      const res = await render("welcome", { variables: { first_name: "a".repeat(room + 1) } });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ pointer: "/variables", message: "are 1,048,577 bytes as JSON, with the defaults of the declared variables; a render takes at most 1,048,576" }] });
      const sent = await send({ ...aMessage({ subject: undefined, html: undefined }), template: { slug: "welcome", variables: { first_name: "a".repeat(room + 1) } } });
      expect(sent.statusCode).toBe(422);
      expect(sent.json().errors).toEqual([expect.objectContaining({ pointer: "/template/variables" })]);
      expect(await storedMessages()).toBe(0);
    });

    it("answers 404 for another workspace's template; a live key of the workspace renders it", async () => {
      await create({ publish: true });
      expect((await render("welcome", { variables: { first_name: "Ada" } }, t.other.sandboxKey)).statusCode).toBe(404);
      expect((await render("welcome", { variables: { first_name: "Ada" } }, t.workspace.liveKey)).statusCode).toBe(200);
    });
  });

  describe("hostile Liquid", () => {
    const HOSTILE: Array<[string, string]> = [
      ["a huge range", "<p>\n{% for i in (1..100000000) %}x{% endfor %}</p>"],
      ["nested loops", "{% for i in (1..5000) %}\n{% for j in (1..5000) %}{% for k in (1..5000) %}{{ k }}{% endfor %}{% endfor %}{% endfor %}"],
      ["a string doubled until it is huge", "{% assign s = 'xxxxxxxx' %}{% for i in (1..40) %}{% assign s = s | append: s %}{% endfor %}{{ s }}"],
      ["giant output", "{% for i in (1..5000) %}{{ first_name }}{% endfor %}"],
    ];

    it.each(HOSTILE)("fails fast with 422 template_render_failed: %s", async (_label, html) => {
      await create({ publish: true, html });
      const started = performance.now();
      const res = await render("welcome", { variables: { first_name: "x".repeat(1000) } });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json()).toMatchObject({ code: "template_render_failed", errors: [{ pointer: "/html", message: expect.stringMatching(/limit|more than/) }] });
      expect(performance.now() - started).toBeLessThan(1500);
      // Sending it fails the same way, before anything is stored.
      const sent = await send({ ...aMessage({ subject: undefined, html: undefined }), template: { slug: "welcome", variables: { first_name: "x".repeat(1000) } } });
      expect(sent.statusCode).toBe(422);
      expect(sent.json().code).toBe("template_render_failed");
      expect(await storedMessages()).toBe(0);
    });

    it("does not stall other requests while a template renders", async () => {
      await create({ publish: true, html: HOSTILE[1]![1] });
      // This thread is left idle while a template renders elsewhere: its event loop's utilization
      // over the render (half a second at least: liquidjs' renderLimit is wall-clock time, which a
      // loaded machine does not stretch as it stretches a request's answer) stays a small part of
      // it: 0.02-0.1 here, quiet or with eight busy processes on two cores. Rendering on this
      // thread keeps it near 1; blocking it for 500 ms of the render made it 0.5.
      const idleSince = nodePerformance.eventLoopUtilization();
      expect((await render("welcome", { variables: { first_name: "Ada" } })).statusCode).toBe(422);
      expect(nodePerformance.eventLoopUtilization(idleSince).utilization).toBeLessThan(0.25);
      // And plain requests are answered meanwhile, all of them before the render ends.
      let renderDone = false;
      const rendering = render("welcome", { variables: { first_name: "Ada" } }).then((res) => ((renderDone = true), res));
      for (let i = 0; i < 5; i++) {
        const res = await t.call({ method: "GET", url: "/v1/messages" });
        expect(res.statusCode).toBe(200);
      }
      expect(renderDone).toBe(false);
      expect((await rendering).statusCode).toBe(422);
    });
  });

  describe("createMessage with a template", () => {
    const templated = (template: object, overrides: Record<string, unknown> = {}) => ({ ...aMessage({ subject: undefined, html: undefined }), template, ...overrides });

    it("stores the rendered content and the template version, and delivers it", async () => {
      const made = await create({ publish: true });
      const res = await send(templated({ slug: "welcome", variables: { first_name: "<Ada>" } }));
      expect(res.statusCode, res.body).toBe(202);
      const message = res.json() as Message;
      expect(message).toMatchObject({ subject: "Welcome, <Ada>", html: "<p>Hello &lt;Ada&gt;, you are on the free plan.</p>", text: null, template: { id: made.id, slug: "welcome", version: 1 } });
      await t.drain();
      const delivered = (await t.call({ method: "GET", url: `/v1/messages/${message.id}` })).json() as Message;
      expect(delivered).toMatchObject({ status: "delivered", text: "Hello <Ada>, you are on the free plan.", template: { id: made.id, slug: "welcome", version: 1 } });
      expect(delivered.mime).toContain("Subject: Welcome, <Ada>");
    });

    it("refuses variables nested deeper than the body may nest (422 at the first too-deep value), with or without an Idempotency-Key, and keeps serving", async () => {
      await create({ slug: "hello", name: "Hello", subject: "Hi", html: "<p>Hello {{ first_name }}</p>", variables: undefined, publish: true });
      // 5,000 nested arrays, 10 KB: deep enough to overflow a recursive walk or a structured clone.
      const deep = `${"[".repeat(5000)}${"]".repeat(5000)}`;
      const body = `{"to":"ada@example.com","template":{"slug":"hello","variables":{"first_name":${deep}}}}`;
      const depthPointer = `/template/variables/first_name${"/0".repeat(LIMITS.bodyDepth - 3)}`;
      for (const headers of [{}, { "idempotency-key": "deep-1" }]) {
        const res = await t.call({ method: "POST", url: "/v1/messages", payload: body, headers: { "content-type": "application/json", ...headers } });
        expect(res.statusCode, res.body).toBe(422);
        expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ pointer: depthPointer, message: `is nested more than ${LIMITS.bodyDepth} levels deep` }] });
      }
      const rendered = await t.call({ method: "POST", url: "/v1/templates/hello/render", payload: `{"variables":{"first_name":${deep}}}`, headers: { "content-type": "application/json" } });
      expect(rendered.statusCode, rendered.body).toBe(422);
      expect(await storedMessages()).toBe(0);
      const nested = await send(templated({ slug: "hello", variables: { first_name: [[["deep", ["enough"]]]] } }));
      expect(nested.statusCode, nested.body).toBe(202);
    });

    it("sends a template that declares no variables with the ones it uses, and refuses one it neither declares nor uses", async () => {
      // The CLI's and the README's own example: no declarations at all.
      const made = await create({ slug: "hello", name: "Hello", subject: "Welcome, {{ first_name }}", html: "<p>Hello {{ first_name }}</p>", variables: undefined, publish: true });
      expect(made).toMatchObject({ variables: [], referenced_variables: ["first_name"] });
      const sent = await send(templated({ slug: "hello", variables: { first_name: "Ada" } }));
      expect(sent.statusCode, sent.body).toBe(202);
      expect(sent.json()).toMatchObject({ subject: "Welcome, Ada", html: "<p>Hello Ada</p>", template: { id: made.id, slug: "hello", version: 1 } });
      const extra = await send(templated({ slug: "hello", variables: { first_name: "Ada", frist_name: "Ada" } }));
      expect(extra.statusCode).toBe(422);
      expect(extra.json()).toMatchObject({ code: "validation_failed", errors: [{ pointer: "/template/variables/frist_name", message: "is neither declared nor used by the template" }] });
      expect(await storedMessages()).toBe(1);
    });

    it("sends an earlier version by slug@N or version, and turns line breaks a variable brings into the subject into spaces", async () => {
      await create({ publish: true });
      await update("welcome", { subject: "Two: {{ first_name }}" });
      await publish("welcome");
      for (const template of [{ slug: "welcome@1" }, { slug: "welcome", version: 1 }, { slug: "welcome@1", version: 1 }]) {
        const res = await send(templated({ ...template, variables: { first_name: "Ada\r\nBcc: eve@example.com" } }));
        expect(res.statusCode, res.body).toBe(202);
        expect(res.json()).toMatchObject({ subject: "Welcome, Ada Bcc: eve@example.com", template: { slug: "welcome", version: 1 } });
      }
      const latest = await send(templated({ slug: "welcome", variables: { first_name: "Ada" } }));
      expect(latest.json()).toMatchObject({ subject: "Two: Ada", template: { version: 2 } });
    });

    it("refuses a rendered subject longer than a subject may be (998 characters), naming its length, and stores nothing", async () => {
      await create({ publish: true });
      // "Welcome, " and 990 characters: 999. A batch's message is refused the same way, on its own.
      const tooLong = templated({ slug: "welcome", variables: { first_name: "x".repeat(990) } });
      for (const res of [await send(tooLong), await send(templated({ slug: "welcome", variables: { first_name: "😀".repeat(990) } }))]) {
        expect(res.statusCode, res.body.slice(0, 300)).toBe(422);
        expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ pointer: "/template", message: expect.stringMatching(/a subject of 999 characters.*at most 998/) }] });
      }
      const batch = await t.call({ method: "POST", url: "/v1/messages/batch", payload: { messages: [tooLong, templated({ slug: "welcome", variables: { first_name: "Ada" } })] } });
      expect(batch.json().data.map((item: { status: number }) => item.status)).toEqual([422, 202]);
      expect(await storedMessages()).toBe(1);
      // 998, emoji counted as one character each as the contract counts them, is sent whole.
      const longest = await send(templated({ slug: "welcome", variables: { first_name: "😀".repeat(989) } }));
      expect(longest.statusCode, longest.body.slice(0, 300)).toBe(202);
      expect([...(longest.json() as Message).subject]).toHaveLength(998);
    });

    it("refuses a template that renders an empty subject or body, naming the fields, and stores nothing; in a layout the html is the layout's", async () => {
      await create({ publish: true, subject: "{{ title }}", html: "{{ body }}", variables: [] });
      const res = await send(templated({ slug: "welcome", variables: { title: "", body: "" } }));
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json()).toMatchObject({ code: "validation_failed", errors: [{ pointer: "/template", message: "renders an empty subject and html: a message needs a subject and a body (check the template and the variables it uses)" }] });
      const batch = await t.call({ method: "POST", url: "/v1/messages/batch", payload: { messages: [templated({ slug: "welcome", variables: { title: "Hi" } }), templated({ slug: "welcome", variables: { title: "Hi", body: "<p>Hi</p>" } })] } });
      expect(batch.json().data.map((item: { status: number }) => item.status)).toEqual([422, 202]);
      expect(await storedMessages()).toBe(1);
      await create({ slug: "base", kind: "layout", publish: true, subject: undefined, html: "<div>{{ content }}</div>", variables: [] });
      await create({ slug: "framed", publish: true, subject: "Hi", html: "{{ body }}", layout: "base", variables: [] });
      const framed = await send(templated({ slug: "framed", variables: {} }));
      expect(framed.statusCode, framed.body).toBe(202);
      expect(framed.json()).toMatchObject({ html: "<div></div>" });
    });

    it("works with a live key too: templates serve both environments", async () => {
      await t.verifiedDomain("acme.example");
      await create({ publish: true });
      const res = await send(templated({ slug: "welcome", variables: { first_name: "Ada" } }), t.workspace.liveKey);
      expect(res.statusCode, res.body).toBe(202);
      expect(res.json()).toMatchObject({ environment: "live", subject: "Welcome, Ada", template: { slug: "welcome" } });
    });

    it("answers 422 before storing anything: unknown slug, unknown or unpublished version, mixed content", async () => {
      await create();
      const cases: Array<[object, Record<string, unknown>, string]> = [
        [{ slug: "nope", variables: {} }, {}, "/template/slug"],
        [{ slug: "welcome", variables: { first_name: "Ada" } }, {}, "/template/slug"],
        [{ slug: "welcome@7", variables: { first_name: "Ada" } }, {}, "/template/slug"],
        [{ slug: "welcome", version: 7, variables: { first_name: "Ada" } }, {}, "/template/version"],
        [{ slug: "welcome@1", version: 2, variables: { first_name: "Ada" } }, {}, "/template/version"],
        [{ slug: "welcome@1", variables: { first_name: "Ada" } }, { subject: "Mine" }, "/template"],
      ];
      for (const [template, overrides, pointer] of cases) {
        const res = await send(templated(template, overrides));
        expect(res.statusCode, JSON.stringify(template)).toBe(422);
        expect(res.json(), JSON.stringify(template)).toMatchObject({ code: "validation_failed", errors: [expect.objectContaining({ pointer })] });
      }
      // A draft is sent only when named: welcome@1 is the draft here.
      expect((await send(templated({ slug: "welcome@1", variables: { first_name: "Ada" } }))).statusCode).toBe(202);
      expect(await storedMessages()).toBe(1);
    });

    it("lists the template's variable problems together with the rest of the message's", async () => {
      await create({ publish: true });
      const res = await send(templated({ slug: "welcome", variables: { plan: 1, colour: "red" } }, { to: "not-an-address" }));
      expect(res.statusCode).toBe(422);
      expect((res.json().errors as Array<{ pointer: string; message: string }>).map((e) => `${e.pointer} ${e.message}`)).toEqual([
        "/template/variables/first_name is required",
        "/template/variables/plan must be a string",
        "/template/variables/colour is neither declared nor used by the template",
        expect.stringMatching(/^\/to /),
      ]);
      expect(await storedMessages()).toBe(0);
      // A message needs a template or subject plus html/text.
      const empty = await send({ to: "ada@example.com", from: "hello@acme.example" });
      expect(empty.statusCode).toBe(422);
      expect((empty.json().errors as Array<{ pointer: string }>).map((e) => e.pointer)).toEqual(["/subject", "/html"]);
    });

    it("lists messages by template, and records null for a message sent without one", async () => {
      await create({ publish: true });
      await create({ slug: "receipt", publish: true });
      const welcome = (await send(templated({ slug: "welcome", variables: { first_name: "Ada" } }))).json() as Message;
      await send(templated({ slug: "receipt", variables: { first_name: "Ada" } }));
      const plain = (await send(aMessage())).json() as Message;
      expect(plain.template).toBeNull();
      const res = await t.call({ method: "GET", url: "/v1/messages?template=welcome" });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual([expect.objectContaining({ id: welcome.id, template: { id: expect.any(String), slug: "welcome", version: 1, layout: null } })]);
      expect((await t.call({ method: "GET", url: "/v1/messages" })).json().data).toHaveLength(3);
      expect((await t.call({ method: "GET", url: "/v1/messages?template=welcome", key: t.workspace.liveKey })).json().data).toEqual([]);
      expect((await t.call({ method: "GET", url: "/v1/messages?template=Not_A_Slug" })).statusCode).toBe(422);
    });

    it("renders each message of a batch on its own", async () => {
      await create({ publish: true });
      const res = await t.call({
        method: "POST",
        url: "/v1/messages/batch",
        payload: { messages: [templated({ slug: "welcome", variables: { first_name: "Ada" } }), templated({ slug: "welcome", variables: {} }), templated({ slug: "nope" })] },
      });
      expect(res.statusCode, res.body).toBe(200);
      const data = res.json().data as Array<{ status: number; message: Message | null; error: { errors: Array<{ pointer: string }> } | null }>;
      expect(data.map((item) => item.status)).toEqual([202, 422, 422]);
      expect(data[0]!.message).toMatchObject({ subject: "Welcome, Ada", template: { slug: "welcome", version: 1 } });
      expect(data[1]!.error!.errors.map((e) => e.pointer)).toEqual(["/template/variables/first_name"]);
      expect(data[2]!.error!.errors.map((e) => e.pointer)).toEqual(["/template/slug"]);
    });
  });
});

describe.each(databases)("Template render hard timeout ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    // liquidjs' own limits effectively off: only the pool's hard timeout can stop this template.
    t = await createTestApp(database, { TEMPLATE_RENDER_LIMIT_MS: "30000", TEMPLATE_RENDER_TIMEOUT_MS: "500", TEMPLATE_MEMORY_LIMIT: String(1e15) });
  });
  afterEach(async () => t.close());

  it("terminates a render past the hard timeout with 422, answers other requests meanwhile, and renders again after", async () => {
    const html = "<p>\n{% for i in (1..100000) %}{% for j in (1..100000) %}{% for k in (1..100000) %}{% endfor %}{% endfor %}{% endfor %}</p>";
    for (const payload of [{ ...WELCOME, slug: "runaway", html, publish: true }, { ...WELCOME, publish: true }]) {
      const created = await t.call({ method: "POST", url: "/v1/templates", payload });
      expect(created.statusCode, created.body).toBe(201);
    }
    const started = performance.now();
    let renderDone = 0;
    const rendering = t.call({ method: "POST", url: "/v1/templates/runaway/render", payload: { variables: { first_name: "Ada" } } }).then((res) => ((renderDone = performance.now()), res));
    const latencies: number[] = [];
    for (let i = 0; i < 5; i++) {
      const before = performance.now();
      expect((await t.call({ method: "GET", url: "/v1/templates" })).statusCode).toBe(200);
      latencies.push(performance.now() - before);
    }
    const answeredBy = performance.now();
    const res = await rendering;
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json()).toMatchObject({ code: "template_render_failed", errors: [{ pointer: "/html", message: "took longer than 500 ms to render" }] });
    expect(renderDone - started).toBeGreaterThanOrEqual(450);
    expect(renderDone - started).toBeLessThan(3000);
    expect(answeredBy).toBeLessThan(renderDone);
    expect(Math.max(...latencies)).toBeLessThan(200);
    // Renders given to the same worker behind the runaway one are not lost: they run on another.
    const runaway = t.call({ method: "POST", url: "/v1/templates/runaway/render", payload: { variables: { first_name: "Ada" } } });
    const behind = await Promise.all([1, 2, 3].map((i) => t.call({ method: "POST", url: "/v1/templates/welcome/render", payload: { variables: { first_name: `Ada ${i}` } } })));
    expect(behind.map((r) => `${r.statusCode} ${r.json().subject}`)).toEqual(["200 Welcome, Ada 1", "200 Welcome, Ada 2", "200 Welcome, Ada 3"]);
    expect((await runaway).statusCode).toBe(422);
    // The worker was replaced: the next render works.
    const next = await t.call({ method: "POST", url: "/v1/templates/welcome/render", payload: { variables: { first_name: "Ada" } } });
    expect(next.statusCode, next.body).toBe(200);
    expect(next.json().subject).toBe("Welcome, Ada");
  });
});
