import { APIConnectionError, APIError, APITimeoutError } from "mailroom";
import { describe, expect, it, vi } from "vitest";
import { VariableInputError, contentOf, defaultEdit, draftUpdate, savedDespite, previewRenderRequest, previewSamples, sameContent, sampleValues, slugify, toRow, toVariables } from "../../dashboard/src/lib/templates.js";

/** The template editor's form <-> contract conversions (dashboard/src/lib/templates.ts). */
describe("the template editor's variables", () => {
  it("keeps a string default as typed and reads any other type's default as JSON", () => {
    const rows = [
      { ...toRow(), name: "first_name", defaultText: "there" },
      { ...toRow(), name: "count", type: "number" as const, defaultText: "3" },
      { ...toRow(), name: "items", type: "array" as const, defaultText: '["a"]' },
      { ...toRow(), name: "plan", defaultText: "" },
    ];
    expect(toVariables(rows)).toEqual([
      { name: "first_name", type: "string", required: false, default: "there" },
      { name: "count", type: "number", required: false, default: 3 },
      { name: "items", type: "array", required: false, default: ["a"] },
      { name: "plan", type: "string", required: false },
    ]);
  });

  it("drops the default of a required variable, which the contract does not allow", () => {
    expect(toVariables([{ ...toRow(), name: "first_name", required: true, defaultText: "there" }])).toEqual([{ name: "first_name", type: "string", required: true }]);
  });

  it("points at a default that is not JSON rather than sending it", () => {
    const attempt = () => toVariables([{ ...toRow(), name: "ok" }, { ...toRow(), name: "count", type: "number", defaultText: "three" }]);
    expect(attempt).toThrow(VariableInputError);
    expect(attempt).toThrow("The default of count is not valid JSON.");
    try {
      attempt();
    } catch (error) {
      expect((error as VariableInputError).pointer).toBe("/variables/1/default");
    }
  });

  it("round-trips the declarations the server answers, so an untouched template is not saved again", () => {
    const template = {
      subject: "Hi {{ first_name }}",
      html: "<p>Hi</p>",
      text: null,
      variables: [
        { name: "first_name", type: "string" as const, required: false, default: "there", description: "Their name" },
        { name: "total", type: "number" as const, required: true, default: null, description: null },
        { name: "flags", type: "object" as const, default: { vip: true } },
        // Built in code: an empty default ("" is truthy in Liquid, none is not), an empty
        // description and one with spaces around it are all stored as given.
        { name: "greeting", type: "string" as const, required: false, default: "", description: "" },
        { name: "note", type: "string" as const, required: false, default: null, description: "  Said first  " },
      ],
    };
    const rows = template.variables.map((variable) => toRow(variable));
    const edited = { subject: template.subject, html: template.html, text: "", variables: toVariables(rows) };
    expect(sameContent(edited, contentOf(template))).toBe(true);
    expect(sameContent({ ...edited, html: "<p>Hello</p>" }, contentOf(template))).toBe(false);
    expect(sameContent({ ...edited, variables: edited.variables.slice(1) }, contentOf(template))).toBe(false);
    expect(edited.variables[3]).toEqual({ name: "greeting", type: "string", required: false, default: "", description: "" });
    expect(edited.variables[4]).toEqual({ name: "note", type: "string", required: false, description: "  Said first  " });
  });

  it("tells an empty string default from none once the default is edited, and trims an edited description", () => {
    const [greeting] = [{ name: "greeting", type: "string" as const, required: false, default: "", description: "  Said first  " }].map((variable) => toRow(variable));
    // Typed into and emptied again: no default, as an empty default field means for a new row.
    const cleared = { ...greeting!, ...defaultEdit(""), description: " Their greeting " };
    expect(toVariables([cleared])).toEqual([{ name: "greeting", type: "string", required: false, description: "Their greeting" }]);
    expect(toVariables([{ ...greeting!, ...defaultEdit("Hi") }])).toEqual([{ name: "greeting", type: "string", required: false, default: "Hi", description: "  Said first  " }]);
    // An emptied description is none.
    expect(toVariables([{ ...greeting!, description: "" }])[0]).not.toHaveProperty("description");
  });

  it("gives a preview a value for every variable: its default, or one of its type", () => {
    expect(
      sampleValues([
        { name: "first_name", type: "string", default: "there" },
        { name: "order_id", type: "string", required: true },
        { name: "total", type: "number", required: true },
        { name: "vip", type: "boolean" },
        { name: "items", type: "array" },
        { name: "", type: "string" },
      ]),
    ).toEqual({ first_name: "there", order_id: "order id", total: 1, vip: true, items: [] });
  });
});

describe("a slug from a template's name", () => {
  it.each([
    ["Welcome email", "welcome-email"],
    ["  Order receipt! (v2) ", "order-receipt-v2"],
    ["Café crème", "cafe-creme"],
    ["---", ""],
  ])("%j -> %j", (name, slug) => {
    expect(slugify(name)).toBe(slug);
  });
});

describe("a layout page's preview with a template in it (Preview with)", () => {
  const layout = { slug: "base", has_draft: true, published_version: 1 };
  const vars = { first_name: "Ada" };

  it("renders the layout by itself, its latest version, when no template is chosen", () => {
    expect(previewRenderRequest(layout, null, vars)).toEqual({ slug: "base", body: { version: "draft", variables: vars } });
    expect(previewRenderRequest({ ...layout, has_draft: false }, null, vars).body.version).toBe(1);
  });

  it("renders the template's version that is sent in the layout, in the layout's version being edited", () => {
    const inDraftToo = { slug: "welcome", has_draft: true, published_version: 3, layout: "base" };
    expect(previewRenderRequest(layout, inDraftToo, vars)).toEqual({ slug: "welcome", body: { version: "draft", layout_version: "draft", variables: vars } });
    // Its draft moved to another layout: its published version is the one sent in this layout.
    const movedAway = { ...inDraftToo, layout: "other" };
    expect(previewRenderRequest({ ...layout, has_draft: false }, movedAway, vars).body).toEqual({ version: 3, layout_version: 1, variables: vars });
    // Never published: only its draft can be in the layout.
    expect(previewRenderRequest(layout, { ...inDraftToo, published_version: null }, vars).body.version).toBe("draft");
  });

  it("derives the samples from the layout's declarations and the template's, the template's winning", () => {
    const declared = [
      { name: "company", type: "string" as const, default: "Acme" },
      { name: "first_name", type: "string" as const, default: "there" },
    ];
    const template = { variables: [{ name: "first_name", type: "string" as const, default: "Ada" }] };
    expect(previewSamples(declared, template)).toEqual({ company: "Acme", first_name: "Ada" });
    expect(previewSamples(declared, null)).toEqual({ company: "Acme", first_name: "there" });
  });
});

describe("the editor's save (draftUpdate)", () => {
  const base = {
    kind: "standard" as const,
    name: "Welcome",
    revision: 4,
    subject: "Hi",
    html: "<p>Hi</p>",
    text: null,
    layout: null,
    variables: [],
  };
  const content = { subject: "Hi", html: "<p>Hi</p>", text: "", layout: null, variables: [] };

  it("sends nothing when nothing changed, unless asked to check the template is still as read", () => {
    expect(draftUpdate(base, content)).toBeNull();
    expect(draftUpdate(base, content, { name: "Welcome" })).toBeNull();
    expect(draftUpdate(base, content, { check: true })).toEqual({ base_revision: 4 });
  });

  it("bases every save on the revision it read, so a change saved since is not overwritten", () => {
    expect(draftUpdate(base, { ...content, html: "<p>Hello</p>" })).toEqual({ subject: "Hi", html: "<p>Hello</p>", text: null, layout: null, variables: [], base_revision: 4 });
    expect(draftUpdate(base, content, { name: "Welcome mail" })).toEqual({ name: "Welcome mail", base_revision: 4 });
    // A layout has no subject and no layout of its own.
    expect(draftUpdate({ ...base, kind: "layout" }, { ...content, html: "{{ content }}" })).toEqual({ html: "{{ content }}", text: null, variables: [], base_revision: 4 });
  });
});

describe("a save whose outcome is unknown (savedDespite)", () => {
  // The SDK does not send an update with base_revision again after no answer or a 5xx: the edit
  // may be stored, and a repeat of it would be refused as someone else's change.
  const base = { kind: "standard" as const, name: "Welcome", revision: 4, subject: "Hi", html: "<p>Hi</p>", text: null, layout: null, variables: [] };
  const content = { subject: "Hi", html: "<p>Hello</p>", text: "", layout: null, variables: [] };
  const stored = { ...base, revision: 5, html: "<p>Hello</p>" };
  const problem = (status: number, code: string) => APIError.from(status, { type: `https://mailroom.dev/problems/${code}`, title: code, status, code }, new Headers());

  it.each([
    ["timed out", new APITimeoutError(60_000)],
    ["lost its connection", new APIConnectionError("Could not reach the Mailroom API: ECONNRESET")],
    ["got a 5xx", problem(502, "bad_gateway")],
  ])("takes the template read again as saved when a save that %s was stored all the same", async (_what, error) => {
    await expect(savedDespite(error, async () => stored, content, {})).resolves.toBe(stored);
  });

  it("throws the save's error when the template read again does not hold the edit: it was not stored, or another change is there", async () => {
    const error = new APITimeoutError(60_000);
    await expect(savedDespite(error, async () => base, content, {})).rejects.toBe(error);
    await expect(savedDespite(error, async () => ({ ...stored, revision: 6, html: "<p>Theirs</p>" }), content, {})).rejects.toBe(error);
    await expect(savedDespite(error, async () => stored, content, { name: "Welcome mail" })).rejects.toBe(error);
  });

  it("throws the save's error when reading the template again fails too", async () => {
    const error = problem(503, "service_unavailable");
    await expect(savedDespite(error, () => Promise.reject(new APITimeoutError(60_000)), content, {})).rejects.toBe(error);
  });

  it("throws any other error as it is, without reading again: that answer says what became of the save", async () => {
    const reread = vi.fn(async () => stored);
    for (const error of [problem(409, "template_changed"), problem(422, "validation_failed"), new TypeError("a bug")]) {
      await expect(savedDespite(error, reread, content, {})).rejects.toBe(error);
    }
    expect(reread).not.toHaveBeenCalled();
  });
});
