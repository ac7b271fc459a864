import type { Knex } from "knex";
import { toIso, toIsoOrNull } from "../../domain/clock.js";
import { ENVIRONMENTS } from "../../domain/environments.js";
import { UniqueViolation } from "../../domain/errors.js";
import { isUniqueViolation } from "../driver-errors.js";
import { paginate, type Page, type PageRequest } from "../pagination.js";
import { parseJson, toNumber, toNumberOrNull } from "../rows.js";
import type { ReferencedVariables } from "../../templates/liquid.js";
import type { components } from "../../../generated/v1.js";

type Template = components["schemas"]["Template"];
type TemplateVersion = components["schemas"]["TemplateVersion"];
export type TemplateVariable = components["schemas"]["TemplateVariable"];
export type TemplateVersionState = components["schemas"]["TemplateVersionState"];
export type TemplateKind = components["schemas"]["TemplateKind"];

export interface TemplateRow {
  id: string;
  workspace_id: string;
  kind: TemplateKind;
  slug: string;
  name: string;
  published_version: number | null;
  latest_version: number;
  /** Counts the changes to the versions (the contract's Template.revision; migration 030). */
  revision: number;
  created_at: number;
  updated_at: number;
}

export interface VersionContent {
  subject: string;
  html: string;
  text: string | null;
  /** The slug of the layout the version is sent in (a template of kind `layout`), or null. */
  layout: string | null;
  variables: TemplateVariable[];
  /** Derived from the sources when they are saved (TemplatesService). */
  referenced_variables: ReferencedVariables;
}

export interface VersionRow extends VersionContent {
  template_id: string;
  version: number;
  state: TemplateVersionState;
  created_at: number;
  updated_at: number;
  published_at: number | null;
}

/** The transaction withLockedTemplate runs its work in, for the reads that work makes. */
export type TemplatesTransaction = Knex.Transaction;

/** A template with one of its versions: what sending and rendering need in one read. */
export interface ResolvedVersion {
  template: TemplateRow;
  version: VersionRow;
}

/** What listTemplates narrows the list to. */
export interface TemplateFilters {
  kind?: TemplateKind;
  layout?: string;
}

/** Which version to read: a number, the draft, the published one, the latest, or the working one (WORKING_VERSION). */
export type VersionSelector = number | "draft" | "published" | "latest" | "working";

/**
 * The version a template shows and an edit starts from: its draft, else its published version,
 * else (never published) its latest. After a rollback the newest version is archived, and what
 * the template is, is the version rolled back to. A draft is always the newest version.
 */
const WORKING_VERSION = "COALESCE((SELECT d.version FROM template_versions d WHERE d.template_id = t.id AND d.state = 'draft'), t.published_version, t.latest_version)";

export const UQ_TEMPLATE_SLUG = "uq_templates__workspace_slug";

/** The versions that send, or will once published: an archived one sends only when asked for by number. */
const SENDING_STATES: TemplateVersionState[] = ["published", "draft"];

const TEMPLATE_COLUMNS = ["t.id", "t.workspace_id", "t.kind", "t.slug", "t.name", "t.published_version", "t.latest_version", "t.revision", "t.created_at", "t.updated_at"];
const VERSION_COLUMNS = ["v.template_id", "v.version", "v.state", "v.subject", "v.html", "v.text", "v.layout", "v.variables", "v.referenced_variables", "v.created_at as v_created_at", "v.updated_at as v_updated_at", "v.published_at"];

/**
 * Templates belong to a workspace and serve both its environments: every query is scoped by
 * workspace. A template is addressed by id or slug; its content lives in numbered versions.
 */
export class TemplatesRepository {
  constructor(private readonly knex: Knex) {}

  /**
   * Stores a template with its first version, after `check` (which may throw) in the same
   * transaction. Throws UniqueViolation(UQ_TEMPLATE_SLUG) when the slug is taken.
   */
  async insert(template: TemplateRow, version: VersionRow, check?: (trx: Knex.Transaction) => Promise<void>): Promise<void> {
    try {
      await this.knex.transaction(async (trx) => {
        await check?.(trx);
        await trx("templates").insert(template);
        await trx("template_versions").insert(toVersionRow(version));
      });
    } catch (error) {
      // The id is fresh; (workspace_id, slug) is the table's only other unique key.
      if (isUniqueViolation(error)) throw new UniqueViolation(UQ_TEMPLATE_SLUG);
      throw error;
    }
  }

  /**
   * By `tpl_` id or by slug; inside `trx` when given (SQLite's one connection is the
   * transaction's). `share` holds a shared lock on the row until `trx` ends (MySQL; SQLite has one
   * writer): withLockedTemplate of that template, as a delete takes it, waits until then.
   */
  async find(workspaceId: string, ref: string, trx?: Knex.Transaction, lock?: "share"): Promise<TemplateRow | undefined> {
    const column = ref.startsWith("tpl_") ? "id" : "slug";
    const query = (trx ?? this.knex)("templates").where({ workspace_id: workspaceId, [column]: ref });
    return normaliseTemplate(await (trx && lock === "share" ? query.forShare() : query).first());
  }

  /**
   * The template and the selected version in one query (the send path runs this per message);
   * undefined when either does not exist.
   */
  async resolve(workspaceId: string, ref: string, selector: VersionSelector): Promise<ResolvedVersion | undefined> {
    const query = this.knex("templates as t")
      .join("template_versions as v", "v.template_id", "t.id")
      .where("t.workspace_id", workspaceId)
      .andWhere(ref.startsWith("tpl_") ? "t.id" : "t.slug", ref)
      .first([...TEMPLATE_COLUMNS, ...VERSION_COLUMNS]);
    if (typeof selector === "number") query.andWhere("v.version", selector);
    else if (selector === "draft") query.andWhere("v.state", "draft");
    else if (selector === "published") query.andWhereRaw("v.version = t.published_version");
    else if (selector === "working") query.andWhereRaw(`v.version = ${WORKING_VERSION}`);
    else query.andWhereRaw("v.version = t.latest_version");
    const row = (await query) as Record<string, unknown> | undefined;
    return row ? { template: normaliseTemplate(row)!, version: normaliseJoinedVersion(row) } : undefined;
  }

  /**
   * Templates, newest first, each with its working version (WORKING_VERSION); `kind` keeps those of that kind,
   * `layout` those whose published version or draft is sent in the layout with that slug (the
   * templates a change to it touches, now or once they are published: usersOfLayout's).
   */
  async list(workspaceId: string, page: PageRequest, { kind, layout }: TemplateFilters = {}): Promise<Page<Template>> {
    const query = this.knex("templates as t")
      .join("template_versions as v", "v.template_id", "t.id")
      .where("t.workspace_id", workspaceId)
      .andWhereRaw(`v.version = ${WORKING_VERSION}`)
      .select([...TEMPLATE_COLUMNS, ...VERSION_COLUMNS]);
    if (kind !== undefined) query.andWhere("t.kind", kind);
    if (layout !== undefined) {
      query.whereExists((sent) => sent.from("template_versions as l").whereRaw("l.template_id = t.id").andWhere("l.layout", layout).whereIn("l.state", SENDING_STATES));
    }
    return paginate<Record<string, unknown>, Template>(query, "t.id", (row) => String(row.id), page, "desc", (row) =>
      TemplatesRepository.toWire(normaliseTemplate(row)!, normaliseJoinedVersion(row)),
    );
  }

  /** Versions of a template, newest first; the cursor is a version number. */
  async listVersions(template: TemplateRow, page: PageRequest): Promise<Page<TemplateVersion>> {
    const query = this.knex("template_versions").where({ template_id: template.id });
    return paginate<Record<string, unknown>, TemplateVersion>(query, "version", (row) => Number(row.version), page, "desc", (row) =>
      TemplatesRepository.versionToWire(template, normaliseVersion(row)),
    );
  }

  /**
   * Runs `work` in a transaction holding the template's row lock (MySQL; SQLite has one writer),
   * so concurrent edits and publishes of one template apply one after the other.
   */
  async withLockedTemplate<T>(workspaceId: string, id: string, work: (trx: Knex.Transaction, template: TemplateRow | undefined) => Promise<T>): Promise<T> {
    return this.knex.transaction(async (trx) => {
      const row = await trx("templates").where({ workspace_id: workspaceId, id }).forUpdate().first();
      return work(trx, normaliseTemplate(row));
    });
  }

  async findVersion(trx: Knex.Transaction | null, templateId: string, version: number): Promise<VersionRow | undefined> {
    const row = await (trx ?? this.knex)("template_versions").where({ template_id: templateId, version }).first();
    return row ? normaliseVersion(row) : undefined;
  }

  async insertVersion(trx: Knex.Transaction, version: VersionRow): Promise<void> {
    await trx("template_versions").insert(toVersionRow(version));
  }

  async updateVersionContent(trx: Knex.Transaction, templateId: string, version: number, content: VersionContent, now: number): Promise<void> {
    await trx("template_versions")
      .where({ template_id: templateId, version })
      .update({
        subject: content.subject,
        html: content.html,
        text: content.text,
        layout: content.layout,
        variables: JSON.stringify(content.variables),
        referenced_variables: JSON.stringify(content.referenced_variables),
        updated_at: now,
      });
  }

  async setVersionState(trx: Knex.Transaction, templateId: string, version: number, state: TemplateVersionState, publishedAt?: number): Promise<void> {
    await trx("template_versions")
      .where({ template_id: templateId, version })
      .update({ state, ...(publishedAt === undefined ? {} : { published_at: publishedAt }) });
  }

  async updateTemplate(trx: Knex.Transaction, id: string, changes: Partial<Pick<TemplateRow, "name" | "published_version" | "latest_version" | "revision" | "updated_at">>): Promise<void> {
    await trx("templates").where({ id }).update(changes);
  }

  /** The slugs of the templates whose published version or draft is sent in the layout `slug`. */
  async usersOfLayout(trx: Knex.Transaction, workspaceId: string, slug: string): Promise<string[]> {
    const rows = await trx("template_versions as v")
      .join("templates as t", "t.id", "v.template_id")
      .where({ "v.layout": slug, "t.workspace_id": workspaceId })
      .whereIn("v.state", SENDING_STATES)
      .distinct("t.slug")
      .orderBy("t.slug");
    return rows.map((row: { slug: string }) => String(row.slug));
  }

  /**
   * How many scheduled messages of either environment, rendered from the template or in it (a
   * layout), still wait to be sent. Read through the status index (workspace, environment,
   * status): scheduled messages are few, so no index of their own is kept on layout_id, which
   * every accepted message would pay for.
   */
  async countScheduledMessages(trx: Knex.Transaction, workspaceId: string, templateId: string): Promise<number> {
    const row = await trx("messages")
      .where({ workspace_id: workspaceId, status: "scheduled" })
      .whereIn("environment", ENVIRONMENTS)
      .andWhere((uses) => uses.where({ template_id: templateId }).orWhere({ layout_id: templateId }))
      .count({ n: "*" })
      .first();
    return Number(row?.n ?? 0);
  }

  async delete(trx: Knex.Transaction, id: string): Promise<void> {
    await trx("template_versions").where({ template_id: id }).delete();
    await trx("templates").where({ id }).delete();
  }

  /** The template showing `working`: its draft, else its published version, else its latest (WORKING_VERSION). */
  static toWire(template: TemplateRow, working: VersionRow): Template {
    return {
      id: template.id,
      object: "template",
      kind: template.kind,
      slug: template.slug,
      name: template.name,
      published_version: template.published_version,
      latest_version: template.latest_version,
      has_draft: working.state === "draft",
      revision: template.revision,
      subject: working.subject,
      html: working.html,
      text: working.text,
      layout: working.layout,
      variables: working.variables,
      referenced_variables: referencedNames(working),
      created_at: toIso(template.created_at),
      updated_at: toIso(template.updated_at),
    };
  }

  static versionToWire(template: TemplateRow, version: VersionRow): TemplateVersion {
    return {
      object: "template_version",
      template_id: template.id,
      slug: template.slug,
      version: version.version,
      state: version.state,
      subject: version.subject,
      html: version.html,
      text: version.text,
      layout: version.layout,
      variables: version.variables,
      referenced_variables: referencedNames(version),
      created_at: toIso(version.created_at),
      published_at: toIsoOrNull(version.published_at),
    };
  }
}

/** The names a version's fields use, each once, in field order (subject, html, text). */
export function referencedNames(version: Pick<VersionContent, "referenced_variables">): string[] {
  const { subject, html, text } = version.referenced_variables;
  return [...new Set([...subject, ...html, ...text])];
}

function toVersionRow(version: VersionRow) {
  return { ...version, variables: JSON.stringify(version.variables), referenced_variables: JSON.stringify(version.referenced_variables) };
}

/** A row as the driver returns it: BIGINT possibly as strings. */
function normaliseTemplate(raw: unknown): TemplateRow | undefined {
  if (!raw) return undefined;
  const row = raw as Record<string, unknown>;
  return {
    id: String(row.id),
    workspace_id: String(row.workspace_id),
    kind: row.kind as TemplateKind,
    slug: String(row.slug),
    name: String(row.name),
    published_version: toNumberOrNull(row.published_version),
    latest_version: toNumber(row.latest_version),
    revision: toNumber(row.revision),
    created_at: toNumber(row.created_at),
    updated_at: toNumber(row.updated_at),
  };
}

function normaliseVersion(row: Record<string, unknown>): VersionRow {
  return {
    template_id: String(row.template_id),
    version: toNumber(row.version),
    state: row.state as TemplateVersionState,
    subject: String(row.subject),
    html: String(row.html),
    text: (row.text as string | null) ?? null,
    layout: (row.layout as string | null) ?? null,
    variables: parseJson<TemplateVariable[]>(row.variables),
    referenced_variables: parseJson<ReferencedVariables>(row.referenced_variables),
    created_at: toNumber(row.created_at),
    updated_at: toNumber(row.updated_at),
    published_at: toNumberOrNull(row.published_at),
  };
}

/** A version read joined with its template: its timestamps are aliased apart from the template's. */
const normaliseJoinedVersion = (row: Record<string, unknown>): VersionRow => normaliseVersion({ ...row, created_at: row.v_created_at, updated_at: row.v_updated_at });
