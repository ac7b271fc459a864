import { APIConnectionError, APIError } from "mailroom";
import { describe, expect, it } from "vitest";
import { formatDate } from "../../dashboard/src/lib/format.js";
import { VariableInputError } from "../../dashboard/src/lib/templates.js";
import { fieldOf, problemFields, problemsAt, recipientOutlook, testSendBody } from "../../dashboard/src/lib/test-send.js";

/**
 * The template page's "Send a test" in the dashboard's helpers (dashboard/src/lib/test-send.ts):
 * the body built from the form, the server's problems put beside their field, and each
 * recipient's line. The Idempotency-Key kept for a retry is dashboard-idempotent-attempt.test.ts's;
 * the dialog itself is driven in the browser (test/e2e/template-test-send.test.ts).
 */
const FORM = { to: " ada@example.com ", from: "", variablesText: '{"first_name": "Ada"}' };

/** An answer of the API with a status, a code and field problems, as the SDK throws it. */
const refusal = (status: number, code: string, errors: Array<{ pointer: string; message: string }> = []) =>
  new APIError(
    status,
    { type: `https://mailroom.dev/problems/${code}`, title: code, status, code, request_id: "req_test", errors: errors.map((error) => ({ location: "body" as const, ...error })) },
    new Headers(),
  );

describe("testSendBody", () => {
  it("sends the template by its slug alone (its published version), the addresses trimmed and an empty From left out", () => {
    expect(testSendBody("welcome", FORM)).toEqual({ to: "ada@example.com", template: { slug: "welcome", variables: { first_name: "Ada" } } });
    expect(testSendBody("welcome", { ...FORM, from: " Acme <hello@acme.example> " })).toMatchObject({ from: "Acme <hello@acme.example>" });
  });

  it("refuses variables that are not a JSON object, at the pointer the server would use", () => {
    for (const variablesText of ["", "{first_name: 1}", "[1]", "null", '"Ada"']) {
      const attempt = () => testSendBody("welcome", { ...FORM, variablesText });
      expect(attempt, variablesText).toThrow(VariableInputError);
      try {
        attempt();
      } catch (error) {
        expect((error as VariableInputError).pointer).toBe("/template/variables");
        expect((error as VariableInputError).message).toBe('The variables must be a JSON object, such as {"first_name": "Ada"}.');
      }
    }
  });
});

describe("problemsAt", () => {
  it("names the field of each pointer, the longest prefix first", () => {
    expect(["/to", "/to/0", "/from", "/template/variables", "/template/variables/first_name", "/template/slug", "/template", "/subject", "/tos"].map(fieldOf)).toEqual([
      "to",
      "to",
      "from",
      "variables",
      "variables",
      "template",
      "template",
      null,
      null,
    ]);
  });

  it("puts a 422's problems beside their field, a variable's led by its name", () => {
    const error = refusal(422, "validation_failed", [
      { pointer: "/to", message: 'is not a valid email address: "ada@"' },
      { pointer: "/from", message: "is required: this workspace has no default sender (default_from)" },
      { pointer: "/template/variables/first_name", message: "is required" },
      { pointer: "/template/variables/a~1b~0c", message: "is neither declared nor used by the template" },
    ]);
    expect(problemsAt(error, "to")).toEqual(['is not a valid email address: "ada@"']);
    expect(problemsAt(error, "from")).toEqual(["is required: this workspace has no default sender (default_from)"]);
    expect(problemsAt(error, "variables")).toEqual(["first_name is required", "a/b~c is neither declared nor used by the template"]);
    expect(problemsAt(error, "template")).toEqual([]);
  });

  it("shows a template without a published version beside the template, as the server words it", () => {
    const message = "template welcome has no published version yet: publish it, or send a version (welcome@1)";
    expect(problemsAt(refusal(422, "validation_failed", [{ pointer: "/template/slug", message }]), "template")).toEqual([message]);
  });

  it("shows variables that could not be read beside the variables, and nothing for other errors", () => {
    const unreadable = new VariableInputError("/template/variables", "The variables must be a JSON object.");
    expect(problemsAt(unreadable, "variables")).toEqual(["The variables must be a JSON object."]);
    expect(problemsAt(unreadable, "to")).toEqual([]);
    expect(problemsAt(refusal(429, "monthly_quota_exceeded"), "to")).toEqual([]);
    expect(problemsAt(new APIConnectionError(), "to")).toEqual([]);
  });
});

describe("problemFields", () => {
  it("names the fields a refusal is about, and none for a failure beside no field", () => {
    const error = refusal(422, "validation_failed", [
      { pointer: "/from", message: "is required" },
      { pointer: "/template/variables/first_name", message: "is required" },
      { pointer: "/subject", message: "is not allowed" },
    ]);
    expect(problemFields(error)).toEqual(["from", "variables", null]);
    expect(problemFields(new VariableInputError("/template/variables", "The variables must be a JSON object."))).toEqual(["variables"]);
    expect(problemFields(refusal(422, "validation_failed"))).toEqual([null]);
    expect(problemFields(refusal(429, "monthly_quota_exceeded"))).toEqual([null]);
    expect(problemFields(new APIConnectionError())).toEqual([null]);
  });
});

describe("recipientOutlook", () => {
  const open = { suppression: null, simulated_outcome: null };

  it("warns that a suppressed recipient would be skipped, with the reason and since when, in either environment", () => {
    const suppression = { id: "sup_1", reason: "complaint" as const, created_at: "2025-03-01T12:00:00Z" };
    for (const environment of ["sandbox", "live"] as const) {
      const outlook = recipientOutlook({ suppression, simulated_outcome: null }, environment);
      expect(outlook.kind).toBe("suppressed");
      expect(outlook.text).toBe(`Suppressed (Complaint, since ${formatDate(suppression.created_at)}): it would be skipped and get nothing. Remove the address from the suppression list to send to it.`);
    }
  });

  it("says what the simulator would do in sandbox", () => {
    expect(recipientOutlook({ ...open, simulated_outcome: "delivered" }, "sandbox")).toEqual({ kind: "sandbox", text: "The simulator would deliver it; nothing leaves Mailroom." });
    expect(recipientOutlook({ ...open, simulated_outcome: "bounced" }, "sandbox").text).toBe("The simulator would bounce it (a hard bounce); nothing leaves Mailroom.");
    expect(recipientOutlook({ ...open, simulated_outcome: "soft_bounced" }, "sandbox").text).toBe("The simulator would bounce it (a soft bounce: mailbox full); nothing leaves Mailroom.");
  });

  it("says that live mail reaches a real mailbox", () => {
    expect(recipientOutlook(open, "live")).toEqual({ kind: "live", text: "Will be delivered to a real mailbox." });
  });
});
