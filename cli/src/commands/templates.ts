import type { Argv } from "yargs";
import type { CreateTemplateParams, RenderedTemplate, Template, TemplateVariable, TemplateVersion, UpdateTemplateParams } from "mailroom";
import type { Args, Noun } from "../command.js";
import { UsageError, definedOnly, optionalString, requiredString } from "../command.js";
import { readUserFile, type Io } from "../io.js";
import { listFlags, listQuery, printList } from "../list.js";
import { cell, fields, table } from "../output.js";
import { textOrFile } from "./message-flags.js";
import { versionRef } from "./render.js";
import { variableFlags, variableValues } from "./variable-flags.js";
import { confirm, withYes } from "../confirm.js";

type TemplateKind = Template["kind"];
const KINDS = ["standard", "layout"] as const satisfies readonly TemplateKind[];

const idempotencyFlag = { type: "string", describe: "Make retries of this call safe" } as const;

const templateColumns = {
  headers: ["SLUG", "NAME", "KIND", "PUBLISHED", "DRAFT", "UPDATED", "ID"],
  row: (template: Template) => [template.slug, cell(template.name, 30), template.kind, template.published_version === null ? "none" : `v${template.published_version}`, template.has_draft ? `v${template.latest_version}` : "", template.updated_at, template.id],
};

const versionColumns = {
  headers: ["VERSION", "STATE", "SUBJECT", "CREATED", "PUBLISHED"],
  row: (version: TemplateVersion) => [String(version.version), version.state, cell(version.subject, 50), version.created_at, version.published_at ?? ""],
};

/** The content flags of create and update: one per versioned field of the template. */
function contentFlags(yargs: Argv): Argv {
  return yargs
    .option("subject", { type: "string", describe: "The subject line (Liquid)" })
    .option("html", { type: "string", describe: "The HTML body (Liquid; output is HTML-escaped unless piped through raw)" })
    // requiresArg: takes the next word whatever it is, so that `-` (stdin) is not read as a positional.
    .option("html-file", { type: "string", requiresArg: true, describe: "Read the HTML body from a file; - reads stdin", conflicts: "html" })
    .option("text", { type: "string", describe: "The text body (Liquid; derived from the rendered HTML when absent)" })
    .option("text-file", { type: "string", requiresArg: true, describe: "Read the text body from a file; - reads stdin", conflicts: "text" })
    .option("layout", { type: "string", describe: "Send it in this layout: the slug of a template of kind layout (its published version is used)" })
    .option("variables-file", { type: "string", describe: 'The declared variables: a JSON file holding [{ "name", "type", "required", "default", "description" }, …]' });
}

/** `--variables-file` for create and update: the declarations, a JSON array, read before anything is sent. */
async function declaredVariables(args: Args, io: Io): Promise<TemplateVariable[] | undefined> {
  const path = optionalString(args, "variables-file");
  if (path === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse((await readUserFile(io, path, "variables-file")).toString("utf8"));
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`--variables-file: ${path} is not JSON (${(error as Error).message}).`);
  }
  // Each declaration is the API's to judge (names, types, defaults); only the shape is checked here.
  if (!Array.isArray(parsed)) throw new UsageError(`--variables-file: ${path} must hold a JSON array of variables, such as [{"name": "first_name", "type": "string", "required": true}].`);
  return parsed as TemplateVariable[];
}

/** `--layout SLUG`, or `--no-layout` (which yargs gives as false) for null: sent in no layout. */
const layoutOf = (args: Args): string | null | undefined => (args.layout === false ? null : optionalString(args, "layout"));

/**
 * Frees `--version` for a template version in this command: yargs reserves it for the program's
 * own version, which `mailroom --version` still prints.
 */
const withVersionOption = (yargs: Argv): Argv => yargs.version(false);

/** --base-revision: a whole number (a template's first revision is 1). */
function baseRevisionOf(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const text = String(value);
  if (!/^[1-9]\d{0,15}$/.test(text)) throw new UsageError(`--base-revision takes a revision number (1, 2, …) as templates get shows it; got "${text}".`);
  return Number(text);
}

/** A version for --version or <version>: a whole number, or `draft` where the command allows it. */
function versionOf(value: unknown, { draft, name = "--version" }: { draft: boolean; name?: string }): number | "draft" | undefined {
  if (value === undefined) return undefined;
  const text = String(value);
  if (draft && text === "draft") return "draft";
  const number = Number(text);
  if (!/^\d+$/.test(text) || number < 1) throw new UsageError(`${name} takes a version number (1, 2, …)${draft ? " or draft" : ""}; got "${text}".`);
  return number;
}

const variableLine = (variable: TemplateVariable) =>
  [
    variable.name,
    variable.type,
    variable.required ? "required" : variable.default === undefined || variable.default === null ? "optional" : `default ${JSON.stringify(variable.default)}`,
    variable.description ?? "",
  ];

function renderContent(content: { subject: string; html: string; text: string | null; variables: TemplateVariable[] }): string {
  const variables = content.variables.length > 0 ? table(["VARIABLE", "TYPE", "", "DESCRIPTION"], content.variables.map(variableLine)) : "No declared variables.";
  // A layout's subject is "": the template sent in it gives the subject, so there is no line to show.
  const subject = content.subject === "" ? [] : [`subject  ${content.subject}`];
  return [...subject, `html:\n${content.html}`, content.text === null ? "text: derived from the HTML" : `text:\n${content.text}`, variables].join("\n\n");
}

function renderTemplate(template: Template): string {
  const summary = fields([
    ["id", template.id],
    ["slug", template.slug],
    ["name", template.name],
    ["kind", template.kind],
    // The latest version's layout; a layout is never itself sent in one, so it has no such line.
    ["layout", template.kind === "layout" ? undefined : (template.layout ?? "none")],
    ["published_version", template.published_version ?? "none yet"],
    ["latest_version", `${template.latest_version}${template.has_draft ? " (draft)" : ""}`],
    ["revision", template.revision],
    ["created_at", template.created_at],
    ["updated_at", template.updated_at],
  ]);
  return `${summary}\n\n${renderContent(template)}`;
}

function renderVersion(version: TemplateVersion): string {
  const summary = fields([
    ["template", `${version.slug}@${version.version}`],
    ["template_id", version.template_id],
    ["state", version.state],
    ["layout", version.layout ?? "none"],
    ["created_at", version.created_at],
    ["published_at", version.published_at],
  ]);
  return `${summary}\n\n${renderContent(version)}`;
}

function renderRendered(rendered: RenderedTemplate): string {
  const sources = fields([
    ["template", versionRef(rendered)],
    ["layout", rendered.layout && versionRef(rendered.layout)],
  ]);
  return [sources, `subject   ${rendered.subject}`, `html:\n${rendered.html}`, `text:\n${rendered.text}`].join("\n\n");
}

/**
 * What a person does next with the template, said after create and update. A layout is never sent
 * by itself (422), so its hints point at the templates sent in it instead.
 */
function nextStep(template: Template): string {
  if (template.kind === "layout") {
    if (!template.has_draft) return `v${template.published_version} is published: the templates sent in layout ${template.slug} use it; see them with: ${templatesIn(template)}`;
    return `Draft v${template.latest_version} saved. Publishing it changes the mail of every template sent in layout ${template.slug} (${templatesIn(template)}); check one in it with: mailroom templates render <template> --layout-version draft; publish it with: mailroom templates publish ${template.slug}`;
  }
  if (template.has_draft) return `Draft v${template.latest_version} saved. Check it with: mailroom templates render ${template.slug} --version draft; send it with: mailroom templates publish ${template.slug}`;
  return `v${template.published_version} is published: mailroom send --to … --template ${template.slug} sends it.`;
}

/** Said after publish: what now sends. */
function published(template: Template): string {
  if (template.kind === "layout") return `Published: the templates sent in layout ${template.slug} now use v${template.published_version}; see them with: ${templatesIn(template)}`;
  return `Published: v${template.published_version} now sends as ${template.slug}.`;
}

const templatesIn = (layout: Template) => `mailroom templates list --layout ${layout.slug}`;

export const templates: Noun = {
  name: "templates",
  describe: "Reusable messages in Liquid, addressed by slug and versioned",
  commands: [
    {
      command: "create",
      describe: "Create a template (version 1, a draft unless --publish)",
      operationId: "createTemplate",
      examples: [
        ['$0 templates create --slug welcome --name Welcome --subject "Welcome, {{ first_name }}" --html "<p>Hello {{ first_name }}</p>" --publish', "Create and publish a template"],
        ['$0 templates create --slug receipt --name Receipt --subject "Order {{ order.id }}" --html-file receipt.html --variables-file receipt-vars.json', "HTML and declared variables from files; a draft"],
        ["$0 templates create --kind layout --slug base --name Base --html '<div class=\"mail\">{{ content }}<p>Acme Inc.</p></div>' --publish", "A layout: the html around the content of the templates sent in it"],
        ['$0 templates create --slug welcome --name Welcome --layout base --subject "Welcome, {{ first_name }}" --html "<p>Hello {{ first_name }}</p>" --publish', "A template sent in the layout base"],
      ],
      noForms: ["layout"],
      builder: (yargs) =>
        contentFlags(
          yargs
            .option("slug", { type: "string", describe: "The permanent name sends use: lowercase letters, digits, hyphens", demandOption: "Give the template a --slug." })
            .option("name", { type: "string", describe: "A name for people", demandOption: "Give the template a --name." })
            .option("kind", { type: "string", choices: KINDS, describe: "standard (the default) is sent by its slug; layout is the html around other templates' content, placed with {{ content }}, and has no subject" }),
        )
          .option("publish", { type: "boolean", describe: "Publish version 1 at once (default: leave it a draft)" })
          .option("idempotency-key", idempotencyFlag),
      async run({ client, output, io }, args) {
        const html = await textOrFile(args, "html", io);
        if (html === undefined) throw new UsageError("Give the HTML body with --html or --html-file.");
        // --subject is the API's to require: a standard template needs one (422 at /subject), a layout has none.
        const body: CreateTemplateParams = {
          slug: requiredString(args, "slug"),
          name: requiredString(args, "name"),
          html,
          ...definedOnly({
            kind: optionalString(args, "kind") as TemplateKind | undefined,
            subject: optionalString(args, "subject"),
            text: await textOrFile(args, "text", io),
            layout: layoutOf(args),
            variables: await declaredVariables(args, io),
            publish: args.publish as boolean | undefined,
          }),
        };
        const template = await client().templates.create(body, definedOnly({ idempotencyKey: optionalString(args, "idempotency-key") }));
        output.result(template, () => renderTemplate(template), () => nextStep(template));
      },
    },
    {
      command: "list",
      describe: "List the workspace's templates, newest first",
      operationId: "listTemplates",
      examples: [
        ["$0 templates list", "Every template, its published version and any draft"],
        ["$0 templates list --kind layout", "The layouts only"],
        ["$0 templates list --layout base", "The templates a change to the layout base will touch"],
      ],
      builder: (yargs) =>
        listFlags(yargs, { createdRange: false })
          .option("kind", { type: "string", choices: KINDS, describe: "Only templates of this kind" })
          .option("layout", { type: "string", describe: "Only templates whose published version or draft is sent in the layout with this slug" }),
      async run(context, args) {
        const filters = definedOnly({ kind: optionalString(args, "kind") as TemplateKind | undefined, layout: optionalString(args, "layout") });
        await printList(context, args, context.client().templates.list({ ...listQuery(args, { createdRange: false }), ...filters }), templateColumns);
      },
    },
    {
      command: "get <template>",
      describe: "Show a template (by slug or id) with its latest version: the draft, when there is one",
      operationId: "getTemplate",
      examples: [["$0 templates get welcome", "The template's content and variables"]],
      async run({ client, output }, args) {
        const template = await client().templates.get(requiredString(args, "template"));
        output.result(template, () => renderTemplate(template));
      },
    },
    {
      command: "update <template>",
      describe: "Edit the draft (made from the published version when there is none); publish to send it",
      operationId: "updateTemplate",
      examples: [
        ['$0 templates update welcome --subject "Welcome aboard, {{ first_name }}"', "Change the draft's subject"],
        ["$0 templates update welcome --html-file welcome.html --no-text", "New HTML; derive the text from it again"],
        ["$0 templates update welcome --layout base", "Send the draft in the layout base"],
        ["$0 templates update welcome --no-layout", "Send the draft in no layout"],
        ["$0 templates update welcome --html-file welcome.html --base-revision 7", "Only if nobody changed it since you read revision 7"],
      ],
      noForms: ["text", "layout"],
      builder: (yargs) =>
        contentFlags(
          yargs
            .option("name", { type: "string", describe: "A name for people (not versioned: changes at once)" })
            .option("base-revision", { type: "string", describe: "Refuse the edit (409 template_changed) unless the template is still at this revision (templates get shows it)" }),
        ).epilogue("--no-text drops the draft's own text, so that it is derived from the rendered HTML again. --no-layout sends the draft in no layout."),
      async run({ client, output, io }, args) {
        const body: UpdateTemplateParams = definedOnly({
          name: optionalString(args, "name"),
          subject: optionalString(args, "subject"),
          html: await textOrFile(args, "html", io),
          text: args.text === false ? null : await textOrFile(args, "text", io),
          layout: layoutOf(args),
          variables: await declaredVariables(args, io),
          base_revision: baseRevisionOf(args["base-revision"]),
        });
        if (Object.keys(body).length === 0) throw new UsageError("Nothing to update: give --name, --subject, --html, --html-file, --text, --text-file, --no-text, --layout, --no-layout or --variables-file.");
        const template = await client().templates.update(requiredString(args, "template"), body);
        output.result(template, () => renderTemplate(template), () => nextStep(template));
      },
    },
    {
      command: "publish <template>",
      describe: "Make the draft the version that sends, or roll back to an earlier --version",
      operationId: "publishTemplate",
      examples: [
        ["$0 templates publish welcome", "Publish the draft"],
        ["$0 templates publish welcome --version 2", "Roll back: version 2 sends again"],
        ["$0 templates publish welcome --base-revision 7", "Only if nobody changed it since you read revision 7 (the draft you checked is the one published)"],
      ],
      builder: (yargs) =>
        withVersionOption(yargs)
          .option("version", { type: "string", describe: "Publish this earlier version instead of the draft (a rollback)" })
          .option("base-revision", { type: "string", describe: "Refuse the publish or rollback (409 template_changed) unless the template is still at this revision (templates get shows it)" })
          .option("idempotency-key", idempotencyFlag),
      async run({ client, output }, args) {
        // Both checked before anything is sent.
        const version = versionOf(args.version, { draft: false }) as number | undefined;
        const body = definedOnly({ version, base_revision: baseRevisionOf(args["base-revision"]) });
        const template = await client().templates.publish(requiredString(args, "template"), body, definedOnly({ idempotencyKey: optionalString(args, "idempotency-key") }));
        output.result(template, () => renderTemplate(template), () => published(template));
      },
    },
    {
      command: "list-versions <template>",
      aliases: ["versions"],
      describe: "List a template's versions, newest first: the draft, the published one, the archived ones",
      operationId: "listTemplateVersions",
      examples: [["$0 templates versions welcome", "Every version and its state"]],
      builder: (yargs) => listFlags(yargs, { createdRange: false }),
      async run(context, args) {
        const list = context.client().templates.listVersions(requiredString(args, "template"), listQuery(args, { createdRange: false }));
        await printList(context, args, list, versionColumns);
      },
    },
    {
      command: "get-version <template> <version>",
      describe: "Show one version, exactly as it sends when addressed as slug@version",
      operationId: "getTemplateVersion",
      examples: [["$0 templates get-version welcome 3", "What welcome@3 sends"]],
      builder: withVersionOption,
      async run({ client, output }, args) {
        const number = versionOf(args.version, { draft: false, name: "<version>" }) as number;
        const version = await client().templates.getVersion(requiredString(args, "template"), number);
        output.result(version, () => renderVersion(version));
      },
    },
    {
      command: "delete <template>",
      describe: "Delete a template and all its versions; sending by its slug fails from then on",
      operationId: "deleteTemplate",
      examples: [
        ["$0 templates delete welcome", "Delete a template"],
        ["$0 templates delete welcome --yes", "The same without asking, as a script must"],
      ],
      builder: withYes,
      async run(context, args) {
        const { client, output } = context;
        const slug = requiredString(args, "template");
        await confirm(context, args, { command: "templates delete", verb: "delete", what: `template ${slug}`, consequence: "Messages already sent keep their content; this cannot be undone." });
        const deleted = await client().templates.delete(slug);
        output.result(deleted, () => `Deleted ${deleted.id} and all its versions.`);
      },
    },
    {
      command: "render <template>",
      describe: "Render a version with variables, as a send would, without sending",
      operationId: "renderTemplate",
      examples: [
        ['$0 templates render welcome --version draft --variables \'{"first_name": "Ada"}\'', "Check the draft before publishing it"],
        ["$0 templates render welcome --var first_name=Ada --var-json '{\"order\":{\"id\":7}}'", "The published version, with a string and a nested variable"],
        ["$0 templates render welcome --layout-version draft --var first_name=Ada", "In its layout's draft: what publishing the layout would send"],
      ],
      builder: (yargs) =>
        variableFlags(withVersionOption(yargs))
          .option("version", { type: "string", describe: "A version number, or draft (default: the published version, else the draft)" })
          .option("layout-version", { type: "string", describe: "For a template in a layout: the layout's version to render in, a number or draft (default: its published version, as sending uses)" })
          .option("idempotency-key", idempotencyFlag),
      async run({ client, output, io }, args) {
        const body = definedOnly({
          version: versionOf(args.version, { draft: true }),
          layout_version: versionOf(args["layout-version"], { draft: true, name: "--layout-version" }),
          variables: await variableValues(args, io),
        });
        const rendered = await client().templates.render(requiredString(args, "template"), body, definedOnly({ idempotencyKey: optionalString(args, "idempotency-key") }));
        output.result(rendered, () => renderRendered(rendered));
      },
    },
  ],
};
