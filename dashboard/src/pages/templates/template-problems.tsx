import { APIError } from "mailroom";
import { ErrorState } from "../../components/error-state";
import { VariableInputError } from "../../lib/templates";

// The contract's pointers, in words: "/html" is the HTML editor, "/variables/first_name" a sample value.
const FIELD_NAMES: Record<string, string> = {
  subject: "Subject",
  html: "HTML",
  text: "Text",
  layout: "Layout",
  variables: "Variables",
  name: "Name",
  samples: "Sample values",
  version: "Version",
};

function fieldName(pointer: string): string {
  const [field = "", ...rest] = pointer.replace(/^\//, "").split("/");
  const name = FIELD_NAMES[field] ?? field;
  return rest.length > 0 ? `${name} › ${rest.join(" › ")}` : name;
}

/** The lines of `field` ("html") that `error` reports problems at, for the editor to mark. */
export function problemLines(error: unknown, field: string): number[] {
  if (!(error instanceof APIError)) return [];
  return error.errors.flatMap((problem) => (problem.pointer === `/${field}` && typeof problem.line === "number" ? [problem.line] : []));
}

/**
 * Why a template could not be saved or rendered, one line per problem with its field and line:
 * Liquid syntax errors (updateTemplate), and missing, undeclared or mistyped variables and render
 * failures (renderTemplate). Anything else is an ordinary error.
 */
export function TemplateProblems({ error, title }: { error: unknown; title: string }) {
  const problems =
    error instanceof VariableInputError
      ? [{ pointer: error.pointer, message: error.message, line: undefined }]
      : error instanceof APIError && error.status === 422 && error.errors.length > 0
        ? error.errors
        : null;
  if (problems === null) return <ErrorState error={error} title={title} compact />;
  return (
    <div role="alert" className="error-state error-state--compact template-problems">
      <p className="error-state__title">{title}</p>
      <ul className="template-problems__list">
        {problems.map((problem, index) => (
          <li key={index} data-testid="template-problem">
            <span className="template-problems__where">
              {fieldName(problem.pointer)}
              {typeof problem.line === "number" && <>, line {problem.line}</>}
            </span>{" "}
            {problem.message}
          </li>
        ))}
      </ul>
      {error instanceof APIError && (
        <p className="error-state__meta">
          <span>
            Code <code>{error.code}</code>
          </span>
        </p>
      )}
    </div>
  );
}
