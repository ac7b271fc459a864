import { describe, expect, it } from "vitest";
import { ConflictError, NotFoundError, UnprocessableEntityError, type DeletedObject, type RenderedTemplate, type Template, type TemplateVersion } from "../src/index.js";
import { ANY_KEY, acceptedMessage, contractExample, fakeClient, fakeFetch, json, page, problem, theRequest, twoPages } from "./helpers.js";

/**
 * `mr.templates` (tag `Templates`) and sending by template over a fake fetch: each method's
 * request (method, path, query, body, Idempotency-Key) and how its answer comes back, the answers
 * being the contract's examples.
 */
const TEMPLATE_ID = "tpl_01jd3k8m2q5v7w9x1y3z5a7b9c";
const published = contractExample<Template>("PublishedTemplate");
const withDraft = contractExample<Template>("TemplateWithDraft");
const deleted = contractExample<DeletedObject>("DeletedTemplate");
const version = contractExample<TemplateVersion>("PublishedTemplateVersion");
const rendered = contractExample<RenderedTemplate>("RenderedTemplate");

describe("templates.create", () => {
  it("POSTs the template to /v1/templates with an Idempotency-Key and resolves to it", async () => {
    const fake = fakeFetch([json(201, published)]);
    const params = {
      slug: "welcome",
      name: "Welcome",
      subject: "Welcome, {{ first_name }}",
      html: "<p>Hello {{ first_name }}</p>",
      variables: [{ name: "first_name", type: "string" as const, required: true }],
      publish: true,
    };
    await expect(fakeClient(fake).templates.create(params)).resolves.toEqual(published);
    expect(theRequest(fake)).toEqual({ method: "POST", target: "/v1/templates", body: params, idempotencyKey: ANY_KEY });
  });

  it("throws ConflictError template_exists for a slug the workspace already has", async () => {
    const fake = fakeFetch([problem(409, "template_exists")]);
    const error = await fakeClient(fake).templates.create({ slug: "welcome", name: "W", subject: "S", html: "<p>H</p>" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ status: 409, code: "template_exists" });
  });

  it("throws UnprocessableEntityError naming the field and line of a Liquid syntax error", async () => {
    const errors = [{ location: "body", pointer: "/html", message: "tag {% if %} not closed", line: 3 }];
    const fake = fakeFetch([problem(422, "validation_failed", { extra: { errors } })]);
    const error = await fakeClient(fake).templates.create({ slug: "welcome", name: "W", subject: "S", html: "<p>\n\n{% if x %}</p>" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect((error as UnprocessableEntityError).errors).toEqual(errors);
  });
});

describe("templates.list", () => {
  it("GETs /v1/templates with the query and resolves to a page of templates", async () => {
    const fake = fakeFetch([page([published])]);
    const first = await fakeClient(fake).templates.list({ limit: 10 });
    expect(first.data).toEqual([published]);
    expect(theRequest(fake)).toEqual({ method: "GET", target: "/v1/templates?limit=10", body: undefined, idempotencyKey: null });
  });

  it("walks every page with for await, sending the cursor as after", async () => {
    const fake = twoPages(published, { ...withDraft, id: "tpl_2", slug: "receipt" });
    const slugs: string[] = [];
    for await (const template of fakeClient(fake).templates.list({ limit: 1 })) slugs.push(template.slug);
    expect(slugs).toEqual(["welcome", "receipt"]);
    expect(fake.requests.map((request) => request.url.search)).toEqual(["?limit=1", "?limit=1&after=cur_2"]);
  });
});

describe("templates.get", () => {
  it("GETs /v1/templates/{template} by slug and resolves to the template", async () => {
    const fake = fakeFetch([json(200, withDraft)]);
    await expect(fakeClient(fake).templates.get("welcome")).resolves.toEqual(withDraft);
    expect(theRequest(fake)).toEqual({ method: "GET", target: "/v1/templates/welcome", body: undefined, idempotencyKey: null });
  });

  it("takes the tpl_ id as well, escaped in the path", async () => {
    const fake = fakeFetch([json(200, published), json(200, published)]);
    const mr = fakeClient(fake);
    await mr.templates.get(TEMPLATE_ID);
    await mr.templates.get("a/../b");
    expect(fake.requests.map((request) => request.url.pathname)).toEqual([`/v1/templates/${TEMPLATE_ID}`, "/v1/templates/a%2F..%2Fb"]);
  });

  it("throws NotFoundError for a template the workspace does not have", async () => {
    const fake = fakeFetch([problem(404, "not_found")]);
    await expect(fakeClient(fake).templates.get("nope")).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("templates.update", () => {
  it("PATCHes the changed fields, without an Idempotency-Key, and resolves to the template with its draft", async () => {
    const fake = fakeFetch([json(200, withDraft)]);
    await expect(fakeClient(fake).templates.update("welcome", { subject: "Welcome aboard, {{ first_name }}", text: null })).resolves.toEqual(withDraft);
    expect(theRequest(fake)).toEqual({ method: "PATCH", target: "/v1/templates/welcome", body: { subject: "Welcome aboard, {{ first_name }}", text: null }, idempotencyKey: null });
  });
});

describe("templates.publish", () => {
  it("POSTs to /v1/templates/{template}/publish with an Idempotency-Key and an empty body by default", async () => {
    const fake = fakeFetch([json(200, published)]);
    await expect(fakeClient(fake).templates.publish("welcome")).resolves.toEqual(published);
    expect(theRequest(fake)).toEqual({ method: "POST", target: "/v1/templates/welcome/publish", body: {}, idempotencyKey: ANY_KEY });
  });

  it("sends the version to roll back to, and the caller's own Idempotency-Key", async () => {
    const fake = fakeFetch([json(200, published)]);
    await fakeClient(fake).templates.publish("welcome", { version: 2 }, { idempotencyKey: "rollback-welcome" });
    expect(theRequest(fake)).toMatchObject({ body: { version: 2 }, idempotencyKey: "rollback-welcome" });
  });

  it("throws ConflictError nothing_to_publish when there is no draft", async () => {
    const fake = fakeFetch([problem(409, "nothing_to_publish")]);
    await expect(fakeClient(fake).templates.publish("welcome")).rejects.toMatchObject({ status: 409, code: "nothing_to_publish" });
  });
});

describe("templates.listVersions", () => {
  it("GETs /v1/templates/{template}/versions and walks every page with for await", async () => {
    const draft = contractExample<{ data: TemplateVersion[] }>("TemplateVersionListPage").data[0] as TemplateVersion;
    const fake = twoPages(draft, version);
    const numbers: number[] = [];
    for await (const each of fakeClient(fake).templates.listVersions("welcome", { limit: 1 })) numbers.push(each.version);
    expect(numbers).toEqual([2, 1]);
    expect(fake.requests.map((request) => `${request.method} ${request.url.pathname}${request.url.search}`)).toEqual([
      "GET /v1/templates/welcome/versions?limit=1",
      "GET /v1/templates/welcome/versions?limit=1&after=cur_2",
    ]);
  });
});

describe("templates.getVersion", () => {
  it("GETs /v1/templates/{template}/versions/{version} and resolves to the version", async () => {
    const fake = fakeFetch([json(200, version)]);
    await expect(fakeClient(fake).templates.getVersion("welcome", 1)).resolves.toEqual(version);
    expect(theRequest(fake)).toEqual({ method: "GET", target: "/v1/templates/welcome/versions/1", body: undefined, idempotencyKey: null });
  });
});

describe("templates.delete", () => {
  it("DELETEs /v1/templates/{template}, without an Idempotency-Key, and resolves to the deleted object", async () => {
    const fake = fakeFetch([json(200, deleted)]);
    await expect(fakeClient(fake).templates.delete("welcome")).resolves.toEqual({ id: TEMPLATE_ID, object: "template", deleted: true });
    expect(theRequest(fake)).toEqual({ method: "DELETE", target: "/v1/templates/welcome", body: undefined, idempotencyKey: null });
  });

  it("throws ConflictError template_in_use while a scheduled message needs it", async () => {
    const fake = fakeFetch([problem(409, "template_in_use")]);
    await expect(fakeClient(fake).templates.delete("welcome")).rejects.toMatchObject({ status: 409, code: "template_in_use" });
  });
});

describe("templates.render", () => {
  it("POSTs the version and variables to /v1/templates/{template}/render and resolves to the rendered content", async () => {
    const fake = fakeFetch([json(200, rendered)]);
    const result = await fakeClient(fake).templates.render("welcome", { version: "draft", variables: { first_name: "Ada", order: { id: 7 } } });
    expect(result).toEqual(rendered);
    expect(theRequest(fake)).toEqual({
      method: "POST",
      target: "/v1/templates/welcome/render",
      body: { version: "draft", variables: { first_name: "Ada", order: { id: 7 } } },
      idempotencyKey: ANY_KEY,
    });
  });

  it("sends an empty body by default: the published version, no variables", async () => {
    const fake = fakeFetch([json(200, rendered)]);
    await fakeClient(fake).templates.render("welcome");
    expect(theRequest(fake).body).toEqual({});
  });

  it("throws UnprocessableEntityError with one pointer per bad variable", async () => {
    const errors = [
      { location: "body", pointer: "/variables/first_name", message: "is required" },
      { location: "body", pointer: "/variables/nickname", message: "is not declared" },
    ];
    const fake = fakeFetch([problem(422, "validation_failed", { extra: { errors } })]);
    const error = (await fakeClient(fake).templates.render("welcome", { variables: { nickname: "A" } }).catch((e: unknown) => e)) as UnprocessableEntityError;
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(error.errors.map((field) => field.pointer)).toEqual(["/variables/first_name", "/variables/nickname"]);
  });

  it("throws template_render_failed, with the line, for a template that fails while rendering", async () => {
    const fake = fakeFetch([problem(422, "template_render_failed", { extra: { errors: [{ location: "body", pointer: "/html", message: "loop limit", line: 2 }] } })]);
    await expect(fakeClient(fake).templates.render("welcome")).rejects.toMatchObject({ code: "template_render_failed", errors: [{ pointer: "/html", line: 2 }] });
  });
});

describe("messages.create with a template", () => {
  it("sends template { slug, version, variables } in place of subject and html", async () => {
    const fake = fakeFetch([acceptedMessage()]);
    await fakeClient(fake).messages.create({ to: "ada@example.com", template: { slug: "welcome", version: 3, variables: { first_name: "Ada", order: { id: 7 } } } });
    expect(theRequest(fake)).toEqual({
      method: "POST",
      target: "/v1/messages",
      body: { to: "ada@example.com", template: { slug: "welcome", version: 3, variables: { first_name: "Ada", order: { id: 7 } } } },
      idempotencyKey: ANY_KEY,
    });
  });

  it("lists messages sent from a template with the template filter", async () => {
    const fake = fakeFetch([page([])]);
    await fakeClient(fake).messages.list({ template: "welcome" });
    expect(theRequest(fake).target).toBe("/v1/messages?template=welcome");
  });
});
