import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { databases } from "../helpers/databases.js";
import { templateCalls } from "../helpers/template-calls.js";
import { aMessage, createTestApp, type TestApp } from "../helpers/test-app.js";
import type { components } from "../../generated/v1.js";

type Template = components["schemas"]["Template"];
type Message = components["schemas"]["Message"];

const BASE = {
  kind: "layout",
  slug: "base",
  name: "Base",
  html: '<div class="mail">{{ content }}<p>{{ company }}</p></div>',
  variables: [{ name: "company", type: "string", default: "Acme & Co" }],
};
const WELCOME = {
  slug: "welcome",
  name: "Welcome",
  subject: "Welcome, {{ first_name }}",
  html: "<p>Hello <b>{{ first_name }}</b></p>",
  layout: "base",
};

describe.each(databases)("Template layouts ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(database);
  });
  afterEach(async () => t.close());

  const { create, update, publish } = templateCalls(() => t);
  const send = (template: object) => t.call({ method: "POST", url: "/v1/messages", payload: { ...aMessage({ subject: undefined, html: undefined }), template } });
  const storedTemplates = async () => (await t.runtime.db.knex("templates").count({ n: "*" }).first())!.n;
  const storedMessages = async () => (await t.runtime.db.knex("messages").count({ n: "*" }).first())!.n;
  const pointers = (body: { errors: Array<{ pointer: string }> }) => body.errors.map((e) => e.pointer);

  describe("createTemplate", () => {
    it("creates a layout: no subject, no layout of its own, its slot not counted as a variable", async () => {
      const layout = await create({ ...BASE, publish: true });
      expect(layout).toMatchObject({ kind: "layout", slug: "base", subject: "", layout: null, published_version: 1, referenced_variables: ["company"] });
      const standard = await create({ ...WELCOME });
      expect(standard).toMatchObject({ kind: "standard", layout: "base", referenced_variables: ["first_name"] });
    });

    it("refuses a layout with a subject, a layout, a variable named content, or html or text without {{ content }}, all in one 422", async () => {
      const res = await t.call({
        method: "POST",
        url: "/v1/templates",
        payload: { ...BASE, subject: "Hi", layout: "other", html: "<div>{{ company }}</div>", text: "{{ company }}", variables: [{ name: "content", type: "string" }] },
      });
      expect(res.statusCode, res.body).toBe(422);
      expect(pointers(res.json())).toEqual(["/subject", "/layout", "/variables/0/name", "/html", "/text"]);
      expect(await storedTemplates()).toBe(0);
    });

    it("needs a subject for a standard template, and a layout that is one of the workspace's layouts", async () => {
      await create({ ...BASE });
      await create({ slug: "plain", name: "Plain", subject: "Hi", html: "<p>Hi</p>" });
      await create({ ...BASE, slug: "elsewhere" }, t.other.sandboxKey);
      for (const [layout, message] of [
        ["missing", "no layout missing in this workspace"],
        ["plain", "plain is a standard template, not a layout (a layout is created with kind: layout)"],
        // Another workspace's layout is not there at all.
        ["elsewhere", "no layout elsewhere in this workspace"],
      ]) {
        const res = await t.call({ method: "POST", url: "/v1/templates", payload: { ...WELCOME, layout } });
        expect(res.statusCode, res.body).toBe(422);
        expect(res.json().errors).toEqual([{ location: "body", pointer: "/layout", message }]);
      }
      const noSubject = await t.call({ method: "POST", url: "/v1/templates", payload: { ...WELCOME, subject: undefined } });
      expect(noSubject.statusCode).toBe(422);
      expect(noSubject.json().errors).toEqual([{ location: "body", pointer: "/subject", message: "is required (only a layout has no subject)" }]);
      expect(await storedTemplates()).toBe(3); // base, plain and the other workspace's

    });
  });

  describe("listTemplates", () => {
    it("lists the layouts alone with kind=layout", async () => {
      await create({ ...BASE });
      await create({ ...WELCOME });
      const layouts = await t.call({ method: "GET", url: "/v1/templates?kind=layout" });
      expect((layouts.json().data as Template[]).map((x) => x.slug)).toEqual(["base"]);
      const standard = await t.call({ method: "GET", url: "/v1/templates?kind=standard" });
      expect((standard.json().data as Template[]).map((x) => x.slug)).toEqual(["welcome"]);
    });

    it("lists with layout=<slug> the templates whose published version or draft is sent in that layout, in this workspace only", async () => {
      await create({ ...BASE, publish: true });
      await create({ ...BASE, slug: "plain-frame" });
      await create({ ...WELCOME, publish: true });
      await create({ ...WELCOME, slug: "receipt", name: "Receipt", publish: true });
      await create({ ...WELCOME, slug: "bare", name: "Bare", layout: undefined });
      // Its draft moves it to another layout: it sends in base until that draft is published.
      await update("receipt", { layout: "plain-frame" });
      await create({ ...BASE }, t.other.sandboxKey);
      await create({ ...WELCOME, slug: "elsewhere" }, t.other.sandboxKey);
      const inBase = await t.call({ method: "GET", url: "/v1/templates?layout=base" });
      expect(inBase.statusCode, inBase.body).toBe(200);
      expect((inBase.json().data as Template[]).map((x) => x.slug)).toEqual(["receipt", "welcome"]);
      const inFrame = await t.call({ method: "GET", url: "/v1/templates?layout=plain-frame&kind=standard" });
      expect((inFrame.json().data as Template[]).map((x) => x.slug)).toEqual(["receipt"]);
      const inNone = await t.call({ method: "GET", url: "/v1/templates?layout=missing" });
      expect(inNone.json()).toMatchObject({ data: [], has_more: false });
    });
  });

  describe("createMessage with a template in a layout", () => {
    it("places the rendered html in the layout, unescaped, and records the layout version it was sent in", async () => {
      const layout = await create({ ...BASE, publish: true });
      await create({ ...WELCOME, publish: true });
      const res = await send({ slug: "welcome", variables: { first_name: "<Ada>" } });
      expect(res.statusCode, res.body).toBe(202);
      const message = res.json() as Message;
      expect(message.html).toBe('<div class="mail"><p>Hello <b>&lt;Ada&gt;</b></p><p>Acme &amp; Co</p></div>');
      expect(message.template).toEqual({ id: expect.stringMatching(/^tpl_/), slug: "welcome", version: 1, layout: { id: layout.id, slug: "base", version: 1 } });
      await t.drain();
      const delivered = (await t.call({ method: "GET", url: `/v1/messages/${message.id}` })).json() as Message;
      // No text in either: derived from the whole html, as for any message.
      expect(delivered).toMatchObject({ status: "delivered", text: expect.stringMatching(/Hello <Ada>\s+Acme & Co/), template: { layout: { slug: "base", version: 1 } } });
    });

    it("wraps the template's text (or the text of its html) in a layout's text", async () => {
      await create({ ...BASE, text: "{{ content }}\n-- \n{{ company }}", publish: true });
      await create({ ...WELCOME, text: "Hello {{ first_name }}", publish: true });
      await create({ ...WELCOME, slug: "no-text", publish: true });
      const withText = await send({ slug: "welcome", variables: { first_name: "Ada", company: "Initech" } });
      expect(withText.json()).toMatchObject({ text: "Hello Ada\n-- \nInitech" });
      const derived = await send({ slug: "no-text", variables: { first_name: "Ada" } });
      expect(derived.json()).toMatchObject({ text: "Hello Ada\n-- \nAcme & Co" });
    });

    it("sends in the layout's published version: a layout draft changes nothing until it is published", async () => {
      await create({ ...BASE, publish: true });
      await create({ ...WELCOME, publish: true });
      await update("base", { html: "<main>{{ content }}</main>" });
      expect((await send({ slug: "welcome", variables: { first_name: "Ada" } })).json().html).toContain('<div class="mail">');
      await publish("base");
      const after = (await send({ slug: "welcome", variables: { first_name: "Ada" } })).json() as Message;
      expect(after.html).toBe("<main><p>Hello <b>Ada</b></p></main>");
      expect(after.template?.layout).toMatchObject({ slug: "base", version: 2 });
    });

    it("checks the variables against the template and its layout together", async () => {
      await create({ ...BASE, html: "<div>{{ content }}{{ footer }}</div>", variables: [{ name: "company", type: "string", required: true }], publish: true });
      await create({ ...WELCOME, publish: true });
      const res = await send({ slug: "welcome", variables: { first_name: "Ada", footer: 3, colour: "red" } });
      expect(res.statusCode).toBe(422);
      expect(res.json().errors.map((e: { pointer: string; message: string }) => `${e.pointer} ${e.message}`)).toEqual([
        "/template/variables/company is required",
        "/template/variables/colour is neither declared nor used by the template",
      ]);
      const ok = await send({ slug: "welcome", variables: { first_name: "Ada", footer: 3, company: "Initech" } });
      expect(ok.statusCode, ok.body).toBe(202);
      expect(ok.json().html).toBe("<div><p>Hello <b>Ada</b></p>3</div>");
    });

    it("refuses, storing nothing: a layout sent by itself, a draft in a layout never published, a layout's render failure", async () => {
      await create({ ...BASE });
      await create({ ...WELCOME });
      const itself = await send({ slug: "base" });
      expect(itself.statusCode).toBe(422);
      expect(itself.json().errors[0]).toMatchObject({ pointer: "/template/slug", message: expect.stringContaining("base is a layout") });
      const unpublished = await send({ slug: "welcome@1", variables: { first_name: "Ada" } });
      expect(unpublished.statusCode).toBe(422);
      expect(unpublished.json().errors[0]).toMatchObject({ pointer: "/template/slug", message: "welcome@1 is sent in layout base, which has no published version yet: publish it" });
      await update("base", { html: "<div>{{ content }}{% for i in (1..100000000) %}x{% endfor %}</div>" });
      await publish("base");
      await publish("welcome");
      const failing = await send({ slug: "welcome", variables: { first_name: "Ada" } });
      expect(failing.statusCode).toBe(422);
      expect(failing.json()).toMatchObject({ code: "template_render_failed", errors: [{ pointer: "/html", message: expect.stringMatching(/^in layout base: /) }] });
      expect(await storedMessages()).toBe(0);
    });
  });

  describe("limits", () => {
    it("refuses a layout whose output with the content in place passes TEMPLATE_MAX_OUTPUT_CHARS, before building it", async () => {
      await create({ ...BASE, html: "{% for i in (1..1000) %}{{ content }}{% endfor %}", publish: true });
      await create({ ...WELCOME, html: `<p>${"x".repeat(5_000)}</p>`, publish: true });
      const res = await send({ slug: "welcome", variables: { first_name: "Ada" } });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: "template_render_failed", errors: [{ pointer: "/html", message: "in layout base: renders to more than 2000000 characters with the content in place" }] });
      expect(await storedMessages()).toBe(0);
    });
  });

  describe("updateTemplate", () => {
    it("changes the layout in the draft only, and takes it away with null", async () => {
      await create({ ...BASE, publish: true });
      await create({ ...BASE, slug: "plain-layout", name: "Plain", html: "{{ content }}", publish: true });
      await create({ ...WELCOME, publish: true });
      const draft = await update("welcome", { layout: "plain-layout" });
      expect(draft).toMatchObject({ layout: "plain-layout", has_draft: true, latest_version: 2 });
      expect((await send({ slug: "welcome", variables: { first_name: "Ada" } })).json().template.layout.slug).toBe("base");
      await publish("welcome");
      expect((await send({ slug: "welcome", variables: { first_name: "Ada" } })).json().html).toBe("<p>Hello <b>Ada</b></p>");
      await update("welcome", { layout: null });
      await publish("welcome");
      const bare = (await send({ slug: "welcome", variables: { first_name: "Ada" } })).json() as Message;
      expect(bare).toMatchObject({ html: "<p>Hello <b>Ada</b></p>", template: { version: 3, layout: null } });
    });

    it("keeps a layout a layout: no subject, no layout, and its html must keep {{ content }}", async () => {
      await create({ ...BASE, publish: true });
      await create({ ...BASE, slug: "other" });
      const res = await t.call({ method: "PATCH", url: "/v1/templates/base", payload: { subject: "Hi", layout: "other", html: "<div></div>" } });
      expect(res.statusCode).toBe(422);
      expect(pointers(res.json())).toEqual(["/subject", "/layout", "/html"]);
      const kind = await t.call({ method: "PATCH", url: "/v1/templates/base", payload: { kind: "standard" } });
      expect(kind.statusCode).toBe(422);
      expect((await t.call({ method: "GET", url: "/v1/templates/base" })).json()).toMatchObject({ kind: "layout", latest_version: 1, has_draft: false });
    });
  });

  describe("renderTemplate", () => {
    it("renders a template in its layout as it sends, and a layout with an empty content", async () => {
      const layout = await create({ ...BASE, publish: true });
      await create({ ...WELCOME });
      const rendered = await t.call({ method: "POST", url: "/v1/templates/welcome/render", payload: { variables: { first_name: "Ada" } } });
      expect(rendered.statusCode, rendered.body).toBe(200);
      expect(rendered.json()).toMatchObject({
        version: 1,
        layout: { id: layout.id, slug: "base", version: 1 },
        html: '<div class="mail"><p>Hello <b>Ada</b></p><p>Acme &amp; Co</p></div>',
        text: expect.stringMatching(/Hello Ada\s+Acme & Co/),
      });
      const alone = await t.call({ method: "POST", url: "/v1/templates/base/render", payload: { variables: { company: "Initech" } } });
      expect(alone.statusCode, alone.body).toBe(200);
      expect(alone.json()).toMatchObject({ layout: null, subject: "", html: '<div class="mail"><p>Initech</p></div>' });
    });

    it("renders in the layout's draft or another of its versions with layout_version, sending on in the published one", async () => {
      const layout = await create({ ...BASE, publish: true });
      await create({ ...WELCOME, publish: true });
      await update("base", { html: "<main>{{ content }}<footer>{{ company }}</footer></main>" });
      const render = (payload: object) => t.call({ method: "POST", url: "/v1/templates/welcome/render", payload: { variables: { first_name: "Ada" }, ...payload } });

      const inDraft = await render({ layout_version: "draft" });
      expect(inDraft.statusCode, inDraft.body).toBe(200);
      expect(inDraft.json()).toMatchObject({ version: 1, layout: { id: layout.id, slug: "base", version: 2 }, html: "<main><p>Hello <b>Ada</b></p><footer>Acme &amp; Co</footer></main>" });
      const inFirst = await render({ layout_version: 1 });
      expect(inFirst.json()).toMatchObject({ layout: { version: 1 }, html: '<div class="mail"><p>Hello <b>Ada</b></p><p>Acme &amp; Co</p></div>' });
      // Rendering in the draft publishes nothing: the template still sends in version 1.
      const sent = await send({ slug: "welcome", variables: { first_name: "Ada" } });
      expect(sent.json()).toMatchObject({ template: { layout: { version: 1 } }, html: '<div class="mail"><p>Hello <b>Ada</b></p><p>Acme &amp; Co</p></div>' });
    });

    it("refuses a layout_version for a template without a layout, and one its layout does not have, at /layout_version", async () => {
      await create({ ...BASE, publish: true });
      await create({ ...WELCOME, publish: true });
      await create({ ...WELCOME, slug: "bare", name: "Bare", layout: undefined });
      for (const [slug, layoutVersion, message] of [
        ["welcome", "draft", "welcome@1 is sent in layout base, which has no draft (no unpublished changes)"],
        ["welcome", 9, "welcome@1 is sent in layout base, which has no version 9"],
        ["bare", "draft", "bare@1 is not sent in a layout: render a template that names one (layout)"],
        // A layout is not sent in a layout of its own.
        ["base", 1, "base@1 is not sent in a layout: render a template that names one (layout)"],
      ] as const) {
        const res = await t.call({ method: "POST", url: `/v1/templates/${slug}/render`, payload: { layout_version: layoutVersion, variables: slug === "base" ? {} : { first_name: "Ada" } } });
        expect(res.statusCode, res.body).toBe(422);
        expect(res.json().errors).toEqual([{ location: "body", pointer: "/layout_version", message }]);
      }
    });
  });

  describe("publishTemplate", () => {
    it("answers 409 layout_unavailable for a version in a layout with no published version, at creation too; publishes once the layout is", async () => {
      await create({ ...BASE });
      const atCreation = await t.call({ method: "POST", url: "/v1/templates", payload: { ...WELCOME, publish: true } });
      expect(atCreation.statusCode).toBe(409);
      expect(atCreation.json()).toMatchObject({ code: "layout_unavailable", detail: "welcome@1 is sent in layout base, which has no published version yet: publish base first." });
      expect(await storedTemplates()).toBe(1);
      await create({ ...WELCOME });
      const refused = await t.call({ method: "POST", url: "/v1/templates/welcome/publish" });
      expect(refused.statusCode).toBe(409);
      expect(refused.json().code).toBe("layout_unavailable");
      await publish("base");
      expect(await publish("welcome")).toMatchObject({ published_version: 1, layout: "base" });
    });
  });

  describe("deleteTemplate", () => {
    it("answers 409 layout_in_use while a template's published version or draft uses the layout; an archived version then fails to send", async () => {
      await create({ ...BASE, publish: true });
      await create({ ...WELCOME, publish: true });
      const inUse = await t.call({ method: "DELETE", url: "/v1/templates/base" });
      expect(inUse.statusCode).toBe(409);
      expect(inUse.json()).toMatchObject({ code: "layout_in_use", detail: expect.stringContaining("welcome") });
      await update("welcome", { layout: null });
      // The draft no longer uses it, the published version still does.
      expect((await t.call({ method: "DELETE", url: "/v1/templates/base" })).statusCode).toBe(409);
      await publish("welcome");
      const deleted = await t.call({ method: "DELETE", url: "/v1/templates/base" });
      expect(deleted.statusCode, deleted.body).toBe(200);
      const archived = await send({ slug: "welcome@1", variables: { first_name: "Ada" } });
      expect(archived.statusCode).toBe(422);
      expect(archived.json().errors[0]).toMatchObject({ pointer: "/template/slug", message: expect.stringContaining("which is no longer a layout of this workspace") });
      // Nor is it published again: a published version can always be sent.
      const rollback = await t.call({ method: "POST", url: "/v1/templates/welcome/publish", payload: { version: 1 } });
      expect(rollback.statusCode).toBe(409);
      expect(rollback.json()).toMatchObject({ code: "layout_unavailable", detail: expect.stringContaining("welcome@1 is sent in layout base, which is no longer a layout of this workspace") });
    });

    it("answers 409 layout_in_use to a delete of the layout made while a publish or a create that puts it to use commits", async () => {
      await create({ ...BASE, publish: true });
      await create({ ...WELCOME, publish: true });
      await update("welcome", { layout: null });
      await publish("welcome"); // welcome@1, archived, is the only version in base: base may be deleted
      const repository = t.runtime.repositories.templates;
      const deletes: Array<ReturnType<TestApp["call"]>> = [];
      // The delete starts inside the transaction that puts the layout to use, and has time to finish before it commits, unless it waits for it.
      const deleteMeanwhile = async () => {
        deletes.push(t.call({ method: "DELETE", url: "/v1/templates/base" }));
        await new Promise((resolve) => setTimeout(resolve, 500));
      };
      const locked = repository.withLockedTemplate.bind(repository);
      vi.spyOn(repository, "withLockedTemplate").mockImplementationOnce((workspaceId, id, work) =>
        locked(workspaceId, id, async (trx, template) => {
          const result = await work(trx, template);
          await deleteMeanwhile();
          return result;
        }),
      );
      const rollback = await t.call({ method: "POST", url: "/v1/templates/welcome/publish", payload: { version: 1 } });
      expect(rollback.statusCode, rollback.body).toBe(200);
      const insert = repository.insert.bind(repository);
      vi.spyOn(repository, "insert").mockImplementationOnce((template, version, check) =>
        insert(template, version, async (trx) => {
          await check?.(trx);
          await deleteMeanwhile();
        }),
      );
      await create({ ...WELCOME, slug: "other", publish: true });
      for (const res of await Promise.all(deletes)) {
        expect(res.statusCode, res.body).toBe(409);
        expect(res.json()).toMatchObject({ code: "layout_in_use" });
      }
      for (const slug of ["welcome", "other"]) {
        const sent = await send({ slug, variables: { first_name: "Ada" } });
        expect(sent.statusCode, sent.body).toBe(202);
        expect(sent.json()).toMatchObject({ template: { slug, layout: { slug: "base" } } });
      }
    });

    it("answers 409 template_in_use to a delete of a layout that a scheduled message was rendered in, naming how many wait; the message goes out in it", async () => {
      await create({ ...BASE, publish: true });
      await create({ ...WELCOME, publish: true });
      const at = t.clock.now() + 3_600_000;
      const scheduled = await t.call({
        method: "POST",
        url: "/v1/messages",
        payload: { ...aMessage({ subject: undefined, html: undefined }), template: { slug: "welcome", variables: { first_name: "Ada" } }, scheduled_at: new Date(at).toISOString() },
      });
      expect(scheduled.statusCode, scheduled.body).toBe(202);
      // No template's published version or draft is in base any more: only the waiting message is.
      await update("welcome", { layout: null });
      await publish("welcome");
      const inUse = await t.call({ method: "DELETE", url: "/v1/templates/base" });
      expect(inUse.statusCode, inUse.body).toBe(409);
      expect(inUse.json()).toMatchObject({ code: "template_in_use", detail: expect.stringContaining("1 scheduled message") });
      expect((await t.call({ method: "GET", url: "/v1/templates/base" })).statusCode).toBe(200);
      // Rendered when accepted: it goes out in the layout it was accepted in.
      t.clock.advance(3_600_000);
      await t.drain();
      const sent = (await t.call({ method: "GET", url: `/v1/messages/${scheduled.json().id}` })).json() as Message;
      expect(sent).toMatchObject({ status: "delivered", html: expect.stringContaining('<div class="mail">'), template: { slug: "welcome", layout: { slug: "base", version: 1 } } });
      const deleted = await t.call({ method: "DELETE", url: "/v1/templates/base" });
      expect(deleted.statusCode, deleted.body).toBe(200);
    });

    it("leaves another workspace's layout alone: its id is 404", async () => {
      const theirs = await create({ ...BASE }, t.other.sandboxKey);
      expect((await t.call({ method: "DELETE", url: `/v1/templates/${theirs.id}` })).statusCode).toBe(404);
      expect((await t.call({ method: "GET", url: `/v1/templates/${theirs.id}`, key: t.other.sandboxKey })).statusCode).toBe(200);
    });
  });
});
