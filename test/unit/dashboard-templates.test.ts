import { describe, expect, it } from "vitest";
import { VariableInputError, contentOf, previewRenderRequest, previewSamples, sameContent, sampleValues, slugify, toRow, toVariables } from "../../dashboard/src/lib/templates.js";

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
      ],
    };
    const rows = template.variables.map((variable) => toRow(variable));
    const edited = { subject: template.subject, html: template.html, text: "", variables: toVariables(rows) };
    expect(sameContent(edited, contentOf(template))).toBe(true);
    expect(sameContent({ ...edited, html: "<p>Hello</p>" }, contentOf(template))).toBe(false);
    expect(sameContent({ ...edited, variables: edited.variables.slice(1) }, contentOf(template))).toBe(false);
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
