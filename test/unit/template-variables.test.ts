import { describe, expect, it, vi } from "vitest";
import { Token, TokenKind } from "liquidjs";
import { createEngines, globalsOf, parseAll } from "../../src/templates/liquid.js";
import { checkDeclarations, normaliseDeclarations, resolveValues } from "../../src/templates/variables.js";

describe("template variable declarations", () => {
  it("spells every field out", () => {
    expect(normaliseDeclarations([{ name: "a", type: "string" }])).toEqual([{ name: "a", type: "string", required: false, default: null, description: null }]);
  });

  it("accepts defaults of the declared type, including falsy ones", () => {
    const ok = [
      { name: "s", type: "string", default: "" },
      { name: "n", type: "number", default: 0 },
      { name: "b", type: "boolean", default: false },
      { name: "o", type: "object", default: {} },
      { name: "a", type: "array", default: [] },
    ] as const;
    expect(checkDeclarations(ok.map((v) => ({ ...v })))).toEqual([]);
  });

  it("refuses a duplicate name, a default of another type and a default on a required variable", () => {
    expect(
      checkDeclarations([
        { name: "a", type: "string" },
        { name: "a", type: "string" },
        { name: "o", type: "object", default: [] },
        { name: "r", type: "number", required: true, default: 1 },
      ]).map((e) => `${e.pointer} ${e.message}`),
    ).toEqual(["/variables/1/name a is declared twice", "/variables/2/default must be an object", "/variables/3/default a required variable has no default"]);
  });
});

describe("template variable values", () => {
  const declared = normaliseDeclarations([
    { name: "name", type: "string", required: true },
    { name: "count", type: "number", default: 1 },
    { name: "tags", type: "array" },
  ]);

  it("fills defaults (null when there is none) under the given values", () => {
    const { values, errors } = resolveValues(declared, [], { name: "Ada" }, "/variables");
    expect(errors).toEqual([]);
    expect({ ...values }).toEqual({ name: "Ada", count: 1, tags: null });
  });

  it("lists every missing, mistyped and extra variable, with escaped pointers", () => {
    const { errors } = resolveValues(declared, ["name", "count"], { count: "2", tags: {}, "a/b": 1, constructor: 1 }, "/template/variables");
    expect(errors.map((e) => `${e.pointer} ${e.message}`)).toEqual([
      "/template/variables/name is required",
      "/template/variables/count must be a number",
      "/template/variables/tags must be an array",
      "/template/variables/a~1b is neither declared nor used by the template",
      "/template/variables/constructor is neither declared nor used by the template",
    ]);
  });

  it("treats null as not given", () => {
    expect(resolveValues(declared, [], { name: null }, "/variables").errors.map((e) => e.message)).toEqual(["is required"]);
  });

  it("takes a variable the template uses without declaring it as given, of any type, and leaves it out when not given", () => {
    const { values, errors } = resolveValues(declared, ["name", "order", "first_name", "missing"], { name: "Ada", first_name: "Ada", order: { id: 7 } }, "/variables");
    expect(errors).toEqual([]);
    expect({ ...values }).toEqual({ name: "Ada", count: 1, tags: null, first_name: "Ada", order: { id: 7 } });
    expect(Object.hasOwn(values, "missing")).toBe(false);
  });

  it("keeps checking a declared variable the template also uses", () => {
    const { errors } = resolveValues(declared, ["name", "count"], { count: "2" }, "/variables");
    expect(errors.map((e) => `${e.pointer} ${e.message}`)).toEqual(["/variables/name is required", "/variables/count must be a number"]);
  });

  it("works without declarations: used variables only", () => {
    const { values, errors } = resolveValues([], ["first_name"], { first_name: "Ada", colour: "red" }, "/template/variables");
    expect({ ...values }).toEqual({ first_name: "Ada" });
    expect(errors.map((e) => `${e.pointer} ${e.message}`)).toEqual(["/template/variables/colour is neither declared nor used by the template"]);
  });
});

describe("variables a template uses", () => {
  const engines = createEngines({ parseLimit: 100_000, renderLimitMs: 500, memoryLimit: 1_000_000, maxOutputChars: 100_000 });
  const globals = (subject: string, html: string, text: string | null = null) => {
    const { templates, problems } = parseAll(engines, { subject, html, text });
    expect(problems).toEqual([]);
    return globalsOf(engines, templates);
  };

  it("names each field's variables by their root, once each", () => {
    expect(globals("Welcome, {{ first_name }}", "<p>{{ first_name | upcase }}: order {{ order.id }} of {{ order.items[0].name }}</p>", "{{ user['first name'] }}")).toEqual({
      subject: ["first_name"],
      html: ["first_name", "order"],
      text: ["user"],
    });
  });

  it("finds variables in tags, filters and conditions, and not the names the template assigns itself", () => {
    const html = "{% assign greeting = salutation | default: fallback %}{% capture who %}{{ name }}{% endcapture %}{{ greeting }} {{ who }}{% for item in items %}{{ item.name }}{{ forloop.index }}{% endfor %}{% if vip %}VIP{% endif %}{% increment counter %}";
    expect(globals("", html).html!.sort()).toEqual(["fallback", "items", "name", "salutation", "vip"]);
  });

  it("leaves out a field that is not there", () => {
    expect(globals("Hi", "<p>Hi</p>")).toEqual({ subject: [], html: [] });
  });

  it("finds the variables of many outputs reading the source once in all, not once per variable (liquidjs alone: quadratic)", () => {
    const large = createEngines({ parseLimit: 1_000_000, renderLimitMs: 500, memoryLimit: 1_000_000, maxOutputChars: 100_000 });
    const html = Array.from({ length: 500 }, (_, i) => `<td>{{ v${i}.name }}</td>`).join("\n");
    const { templates } = parseAll(large, { subject: "", html, text: null });
    // The analysis asks a position of every variable. liquidjs' own Token#getPosition reads the
    // source from its start each time (3 s for 6,000 outputs); the indexed one reads it once.
    // Counted, not timed (a clock flakes on a loaded machine): every position is computed by the
    // installed getPosition with the source behind a counter of reads.
    let reads = 0;
    const source = new Proxy(new String(html), {
      get(target, key) {
        reads++;
        const value = Reflect.get(target, key) as unknown;
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const installed = Token.prototype.getPosition;
    const positions = vi.spyOn(Token.prototype, "getPosition").mockImplementation(function (this: Token) {
      return installed.call(Object.assign(Object.create(this) as Token, { input: source as unknown as string }));
    });
    try {
      expect(globalsOf(large, templates).html).toHaveLength(500);
      // Every position went through the counted getPosition, so the count below covers them all.
      expect(positions.mock.calls.length).toBeGreaterThanOrEqual(500);
    } finally {
      positions.mockRestore();
    }
    expect(reads).toBeLessThanOrEqual(html.length);
  });

  it("still places an error at its line and column", () => {
    const { problems } = parseAll(engines, { subject: "Hi", html: "<p>\n  ok {{ a }}\n\n   {{ b | shout }}</p>", text: "one\n{% if %}" });
    expect(problems).toEqual([
      { field: "html", line: 4, message: "undefined filter: shout" },
      { field: "text", line: 2, message: expect.any(String) },
    ]);
    class SourceToken extends Token {}
    for (const [source, begin] of [["abc", 0], ["abc", 2], ["a\nb\n\ncd", 6], ["\n\n", 2], ["x\ny", 1]] as const) {
      const naive = (() => {
        let [row, col] = [1, 1];
        for (let i = 0; i < begin; i++) [row, col] = source[i] === "\n" ? [row + 1, 1] : [row, col + 1];
        return [row, col];
      })();
      expect(new SourceToken(TokenKind.HTML, source, begin, source.length).getPosition()).toEqual(naive);
    }
  });
});
