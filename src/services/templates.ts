import { changedOnly } from "../domain/changes.js";
import type { Clock } from "../domain/clock.js";
import { ConflictError, NotFoundError, TemplateRenderFailedError, UniqueViolation, ValidationError, type FieldError } from "../domain/errors.js";
import type { Principal } from "../domain/environments.js";
import { newId } from "../domain/ids.js";
import { LIMITS } from "../domain/limits.js";
import { UNFOLDABLE, unfoldable } from "../domain/mime-headers.js";
import type { Page, PageRequest } from "../db/pagination.js";
import { referencedNames, TemplatesRepository, type ResolvedVersion, type TemplateFilters, type TemplateKind, type TemplateRow, type TemplatesTransaction, type VersionContent, type VersionRow } from "../db/repositories/templates.js";
import type { FieldProblem, ReferencedVariables, TemplateSources } from "../templates/liquid.js";
import { CONTENT_SLOT, kindProblems, slotProblems, withoutSlot } from "../templates/layouts.js";
import type { RenderOutcome, SourceCheck } from "../templates/render-pool.js";
import type { LayoutSources, RenderedSources, RenderOptions } from "../templates/render-protocol.js";
import { checkDeclarations, normaliseDeclarations, resolveValues } from "../templates/variables.js";
import type { components } from "../../generated/v1.js";

type Template = components["schemas"]["Template"];
type TemplateVersion = components["schemas"]["TemplateVersion"];
type CreateTemplateRequest = components["schemas"]["CreateTemplateRequest"];
type UpdateTemplateRequest = components["schemas"]["UpdateTemplateRequest"];
type PublishTemplateRequest = components["schemas"]["PublishTemplateRequest"];
type RenderTemplateRequest = components["schemas"]["RenderTemplateRequest"];
type RenderedTemplate = components["schemas"]["RenderedTemplate"];
type MessageTemplateInput = components["schemas"]["MessageTemplateInput"];
type MessageTemplate = components["schemas"]["MessageTemplate"];
type TemplateLayoutRef = components["schemas"]["TemplateLayoutRef"];
type DeletedObject = components["schemas"]["DeletedObject"];

/** An updateTemplate's answer, and the fields it changed (none: the template was left as it was). */
export interface UpdatedTemplate {
  template: Template;
  changed: string[];
}

/** A publishTemplate's answer, and whether it changed the published version. */
export interface PublishedTemplate {
  template: Template;
  changed: boolean;
}

/** Where templates are parsed and rendered: the worker-thread pool (src/templates/render-pool.ts). */
export interface TemplateRenderer {
  check(sources: TemplateSources): Promise<SourceCheck>;
  render(key: string, sources: TemplateSources, variables: Record<string, unknown>, options: RenderOptions): Promise<RenderOutcome>;
}

/** A message's content rendered from a template, and which version it came from. */
export interface RenderedForMessage {
  subject: string;
  html: string;
  /** Null when the version has no text: the delivery pipeline derives it, as for any message. */
  text: string | null;
  template: MessageTemplate;
}

export interface TemplatesServiceSettings {
  /**
   * How long a send's lookup of a template version is answered from memory (TEMPLATE_CACHE_MS;
   * 0: never). Sends run it per message, and on SQLite a read waits for the writer's commit. The
   * price is staleness towards changes made through another process (this one forgets at once):
   * a publish, edit of a sent draft or delete there reaches sends here within this time.
   */
  cacheMs: number;
}

const SEND_CACHE_MAX_ENTRIES = 10_000;

/** `welcome` or `welcome@3` (MessageTemplateInput.slug). */
const SLUG_AT_VERSION = /^([a-z0-9]+(?:-[a-z0-9]+)*)(?:@([0-9]+))?$/;

/**
 * Templates: versioned Liquid content addressed by a permanent slug. Editing changes the draft,
 * publishing picks the version that sends; rendering goes through the worker pool so a runaway
 * template never stalls the server. Templates belong to the workspace and serve both
 * environments, so the environment plays no part here.
 */
export class TemplatesService {
  private readonly sendCache = new Map<string, { expiresAt: number; resolved: Promise<ResolvedVersion | undefined> }>();

  constructor(
    private readonly templates: TemplatesRepository,
    private readonly renderer: TemplateRenderer,
    private readonly clock: Clock,
    private readonly settings: TemplatesServiceSettings,
  ) {}

  async create(principal: Principal, input: CreateTemplateRequest): Promise<Template> {
    const kind = input.kind ?? "standard";
    const variables = normaliseDeclarations(input.variables ?? []);
    const referenced = await this.checkContent(principal.workspaceId, kind, { subject: input.subject, html: input.html, text: input.text ?? null, layout: input.layout ?? null }, variables, { creating: true });
    if (await this.templates.find(principal.workspaceId, input.slug)) throw templateExists(input.slug);
    const now = this.clock.now();
    const publish = input.publish === true;
    const layout = input.layout ?? null;
    const template: TemplateRow = {
      id: newId("template", now),
      workspace_id: principal.workspaceId,
      kind,
      slug: input.slug,
      name: input.name,
      published_version: publish ? 1 : null,
      latest_version: 1,
      revision: 1,
      created_at: now,
      updated_at: now,
    };
    const version: VersionRow = {
      template_id: template.id,
      version: 1,
      state: publish ? "published" : "draft",
      // A layout has no subject: the template sent in it gives one.
      subject: input.subject ?? "",
      html: input.html,
      text: input.text ?? null,
      layout: input.layout ?? null,
      variables,
      referenced_variables: { subject: [], html: [], text: [], ...referenced },
      created_at: now,
      updated_at: now,
      published_at: publish ? now : null,
    };
    // The layout checked again in the insert's transaction, its row held (see holdLayout).
    const holdLayout = layout === null ? undefined : (trx: TemplatesTransaction) => this.holdLayout(principal.workspaceId, layout, trx, publish ? `${input.slug}@1` : null);
    try {
      await this.templates.insert(template, version, holdLayout);
    } catch (error) {
      if (error instanceof UniqueViolation) throw templateExists(input.slug); // created meanwhile by a concurrent request
      throw error;
    }
    this.forgetCommitted(principal.workspaceId, input.slug);
    return TemplatesRepository.toWire(template, version);
  }

  async list(principal: Principal, page: PageRequest, filters: TemplateFilters = {}): Promise<Page<Template>> {
    return this.templates.list(principal.workspaceId, page, filters);
  }

  async get(principal: Principal, ref: string): Promise<Template> {
    const resolved = await this.templates.resolve(principal.workspaceId, ref, "working");
    if (!resolved) throw new NotFoundError("template", ref);
    return TemplatesRepository.toWire(resolved.template, resolved.version);
  }

  /**
   * Content changes go to the draft: the existing one is changed in place, or a new draft is made
   * from the published version plus the changes. `name` is not versioned. Slugs are permanent.
   * A field given with the value it has is no change: an edit that changes nothing makes no
   * draft, counts no revision and answers the template as it is, with `changed` empty (so the
   * audit log records nothing); otherwise `changed` names the fields that did change.
   */
  async update(principal: Principal, ref: string, input: UpdateTemplateRequest): Promise<UpdatedTemplate> {
    if (input.slug !== undefined) {
      throw ValidationError.field("/slug", "cannot be changed: slugs are permanent, so code that sends by slug never sends something else (create a new template with the new slug instead)");
    }
    const given: Partial<VersionContent> = {};
    if (input.subject !== undefined) given.subject = input.subject;
    if (input.html !== undefined) given.html = input.html;
    if (input.text !== undefined) given.text = input.text;
    if (input.layout !== undefined) given.layout = input.layout;
    if (input.variables !== undefined) given.variables = normaliseDeclarations(input.variables);
    const { id, kind, slug } = await this.find(principal, ref);
    const referenced = await this.checkContent(principal.workspaceId, kind, given, given.variables ?? [], { creating: false });
    const updated = await this.templates.withLockedTemplate(principal.workspaceId, id, async (trx, template) => {
      if (!template) throw new NotFoundError("template", ref);
      // Checked under the row lock: a save or publish committed meanwhile has already counted.
      if (input.base_revision !== undefined && input.base_revision !== template.revision) throw templateChanged(template, input.base_revision);
      if (given.layout !== undefined && given.layout !== null) await this.holdLayout(principal.workspaceId, given.layout, trx, null);
      const latest = (await this.templates.findVersion(trx, template.id, template.latest_version))!;
      // What the draft is, or would be made from (the working version, which the template shows):
      // given the values it has, nothing is written.
      const base =
        latest.state === "draft" || template.published_version === null ? latest : ((await this.templates.findVersion(trx, template.id, template.published_version)) ?? latest);
      const changes = changedOnly<VersionContent>(base, given);
      const renamed = input.name !== undefined && input.name !== template.name;
      const changed = [...Object.keys(changes), ...(renamed ? ["name"] : [])].sort();
      // base_revision alone (or values as they are) only checks.
      if (changed.length === 0) return { template: TemplatesRepository.toWire(template, base), changed };
      const contentChanges = Object.keys(changes).length > 0;
      const now = this.clock.now();
      let draft = latest;
      if (contentChanges) {
        const content = { ...changes, referenced_variables: { ...base.referenced_variables, ...referenced } };
        if (latest.state === "draft") {
          draft = { ...latest, ...content, updated_at: now };
          await this.templates.updateVersionContent(trx, template.id, latest.version, draft, now);
        } else {
          draft = { ...base, ...content, version: template.latest_version + 1, state: "draft", created_at: now, updated_at: now, published_at: null };
          await this.templates.insertVersion(trx, draft);
        }
      }
      // A rename alone is not a revision: base_revision guards the versions, which it leaves alone.
      const revision = contentChanges ? template.revision + 1 : template.revision;
      const row: TemplateRow = { ...template, name: input.name ?? template.name, latest_version: draft.version, revision, updated_at: now };
      await this.templates.updateTemplate(trx, template.id, { name: row.name, latest_version: row.latest_version, revision, updated_at: now });
      return { template: TemplatesRepository.toWire(row, contentChanges ? draft : base), changed };
    });
    this.forgetCommitted(principal.workspaceId, slug);
    return updated;
  }

  /**
   * Makes the draft (or, with `version`, an earlier version: a rollback) the one that sends. The
   * version published before is archived and stays addressable as `slug@N`. With `base_revision`,
   * only while the template is as the caller read it, as for update. Publishing the version that
   * is published already changes nothing: `changed` is false.
   */
  async publish(principal: Principal, ref: string, input: PublishTemplateRequest): Promise<PublishedTemplate> {
    const { id, slug } = await this.find(principal, ref);
    const published = await this.templates.withLockedTemplate(principal.workspaceId, id, async (trx, template) => {
      if (!template) throw new NotFoundError("template", ref);
      // Under the row lock, before anything else: a page that read an older revision would publish
      // a draft saved since unseen, or roll back over a version published since. Also when the
      // target is already published: the unchanged answer would vouch for a state it never saw.
      if (input.base_revision !== undefined && input.base_revision !== template.revision) throw templateChanged(template, input.base_revision);
      const latest = (await this.templates.findVersion(trx, template.id, template.latest_version))!;
      let target: VersionRow;
      if (input.version !== undefined) {
        const chosen = await this.templates.findVersion(trx, template.id, input.version);
        if (!chosen) throw ValidationError.field("/version", `template ${template.slug} has no version ${input.version} (its versions are 1 to ${template.latest_version})`);
        target = chosen;
      } else if (latest.state === "draft") {
        target = latest;
      } else {
        throw new ConflictError("nothing_to_publish", "Nothing to publish", `Template ${template.slug} has no draft: edit it first, or give the version to publish again.`);
      }
      if (target.version === template.published_version) return { template: TemplatesRepository.toWire(template, latest.state === "draft" ? latest : target), changed: false };
      await this.assertLayoutPublished(principal.workspaceId, `${template.slug}@${target.version}`, target.layout, trx);
      const now = this.clock.now();
      if (template.published_version !== null) await this.templates.setVersionState(trx, template.id, template.published_version, "archived");
      await this.templates.setVersionState(trx, template.id, target.version, "published", now);
      const updated: TemplateRow = { ...template, published_version: target.version, revision: template.revision + 1, updated_at: now };
      await this.templates.updateTemplate(trx, template.id, { published_version: target.version, revision: updated.revision, updated_at: now });
      // A rollback keeps the draft, which the template goes on showing; else it shows what now sends.
      const working = latest.state === "draft" && target.version !== latest.version ? latest : { ...target, state: "published" as const, published_at: now };
      return { template: TemplatesRepository.toWire(updated, working), changed: true };
    });
    this.forgetCommitted(principal.workspaceId, slug);
    return published;
  }

  async listVersions(principal: Principal, ref: string, page: PageRequest): Promise<Page<TemplateVersion>> {
    return this.templates.listVersions(await this.find(principal, ref), page);
  }

  async getVersion(principal: Principal, ref: string, version: number): Promise<TemplateVersion> {
    const resolved = await this.templates.resolve(principal.workspaceId, ref, version);
    if (!resolved) {
      const template = await this.find(principal, ref);
      throw new NotFoundError("template version", `${template.slug}@${version}`);
    }
    return TemplatesRepository.versionToWire(resolved.template, resolved.version);
  }

  /**
   * Refused while a scheduled message (of either environment) rendered from the template, or in
   * it when it is a layout, still waits to be sent: its content is stored, but it goes out in the
   * template's name and would point at one that no longer exists.
   */
  async delete(principal: Principal, ref: string): Promise<DeletedObject> {
    const { id, slug } = await this.find(principal, ref);
    await this.templates.withLockedTemplate(principal.workspaceId, id, async (trx, template) => {
      if (!template) throw new NotFoundError("template", ref);
      const waiting = await this.templates.countScheduledMessages(trx, principal.workspaceId, template.id);
      if (waiting > 0) {
        const messages = waiting === 1 ? "1 scheduled message that has" : `${waiting.toLocaleString("en-US")} scheduled messages that have`;
        const how = template.kind === "layout" ? "rendered in it" : "rendered from it";
        throw new ConflictError("template_in_use", "Template in use", `${template.kind === "layout" ? "Layout" : "Template"} ${template.slug} is used by ${messages} not been sent yet (${how}): cancel them or wait until they are sent, then delete it.`);
      }
      const users = template.kind === "layout" ? await this.templates.usersOfLayout(trx, principal.workspaceId, template.slug) : [];
      if (users.length > 0) {
        throw new ConflictError("layout_in_use", "Layout in use", `Layout ${template.slug} is used by the published version or the draft of ${users.join(", ")}: give those templates another layout (or none, layout: null) and publish them, then delete it.`);
      }
      await this.templates.delete(trx, template.id);
    });
    this.forgetCommitted(principal.workspaceId, slug);
    return { id, object: "template", deleted: true };
  }

  /** Renders a version exactly as sending would, without storing anything. */
  async render(principal: Principal, ref: string, input: RenderTemplateRequest): Promise<RenderedTemplate> {
    let resolved: ResolvedVersion | undefined;
    if (input.version === undefined) {
      resolved = (await this.templates.resolve(principal.workspaceId, ref, "published")) ?? (await this.templates.resolve(principal.workspaceId, ref, "latest"));
      if (!resolved) throw new NotFoundError("template", ref);
    } else {
      resolved = await this.templates.resolve(principal.workspaceId, ref, input.version);
      if (!resolved) {
        const template = await this.find(principal, ref);
        throw ValidationError.field("/version", input.version === "draft" ? `template ${template.slug} has no draft` : `template ${template.slug} has no version ${input.version}`);
      }
    }
    const layout = await this.layoutToRenderIn(resolved, input.layout_version);
    const rendered = await this.renderVersion(resolved, layout, input.variables ?? {}, "/variables", true);
    // As sending has it, but for a layout by itself (no subject, no content). The request's
    // variables are what make a subject too long or a field empty here.
    const sent = resolved.template.kind === "layout" ? rendered : sentContent(rendered, hasOwnText(resolved, layout), "/variables");
    return {
      object: "rendered_template",
      template_id: resolved.template.id,
      slug: resolved.template.slug,
      version: resolved.version.version,
      layout: layoutRef(layout),
      subject: sent.subject,
      html: sent.html,
      text: sent.text ?? "",
    };
  }

  /**
   * The content of a message sent with `template`: the published version, or the one named by
   * `slug@N` or `version`. Problems point into the message request (`/template/...`).
   */
  async renderForMessage(workspaceId: string, input: MessageTemplateInput): Promise<RenderedForMessage> {
    const [, slug = "", atVersion] = SLUG_AT_VERSION.exec(input.slug) ?? [];
    const fromSlug = atVersion === undefined ? undefined : Number(atVersion);
    if (fromSlug !== undefined && input.version !== undefined && fromSlug !== input.version) {
      throw ValidationError.field("/template/version", `is ${input.version} but the slug names version ${fromSlug}: give one of them`);
    }
    const version = fromSlug ?? input.version;
    const resolved = await this.resolveForSend(workspaceId, slug, version ?? "published");
    if (!resolved) {
      const template = await this.templates.find(workspaceId, slug);
      if (!template) throw ValidationError.field("/template/slug", `no template ${slug} in this workspace`);
      if (template.kind === "layout") throw layoutSentAlone(slug);
      if (version === undefined) throw ValidationError.field("/template/slug", `template ${slug} has no published version yet: publish it, or send a version (${slug}@1)`);
      throw ValidationError.field(fromSlug === undefined ? "/template/version" : "/template/slug", `template ${slug} has no version ${version}`);
    }
    if (resolved.template.kind === "layout") throw layoutSentAlone(slug);
    const layout = await this.layoutOf(resolved, "/template/slug", (layoutSlug) => this.resolveForSend(workspaceId, layoutSlug, "published"));
    const rendered = sentContent(await this.renderVersion(resolved, layout, input.variables ?? {}, "/template/variables", false), hasOwnText(resolved, layout), "/template");
    return {
      subject: rendered.subject,
      html: rendered.html,
      text: rendered.text,
      template: { id: resolved.template.id, slug: resolved.template.slug, version: resolved.version.version, layout: layoutRef(layout) },
    };
  }

  /** The version a send uses, from memory for up to `cacheMs` (see TemplatesServiceSettings). */
  private async resolveForSend(workspaceId: string, slug: string, selector: number | "published"): Promise<ResolvedVersion | undefined> {
    if (this.settings.cacheMs === 0) return this.templates.resolve(workspaceId, slug, selector);
    const key = `${workspaceId}\u0000${slug}\u0000${selector}`;
    const now = this.clock.now();
    const cached = this.sendCache.get(key);
    if (cached && cached.expiresAt > now) return cached.resolved;
    const entry = { expiresAt: now + this.settings.cacheMs, resolved: this.templates.resolve(workspaceId, slug, selector) };
    this.sendCache.delete(key);
    for (const [oldest, old] of this.sendCache) {
      if (old.expiresAt > now && this.sendCache.size < SEND_CACHE_MAX_ENTRIES) break;
      this.sendCache.delete(oldest);
    }
    this.sendCache.set(key, entry); // concurrent sends share this lookup
    try {
      const resolved = await entry.resolved;
      // Only what exists is remembered: a template created elsewhere is usable at once.
      if (!resolved && this.sendCache.get(key) === entry) this.sendCache.delete(key);
      return resolved;
    } catch (error) {
      if (this.sendCache.get(key) === entry) this.sendCache.delete(key);
      throw error;
    }
  }

  /**
   * Drops what sends remember of a template, once this process's change to it is committed: not
   * before, or a send reading in between (on MySQL it reads the last committed state) would
   * remember the old state for cacheMs. A lookup started before is dropped too.
   */
  private forgetCommitted(workspaceId: string, slug: string): void {
    const prefix = `${workspaceId}\u0000${slug}\u0000`;
    for (const key of this.sendCache.keys()) if (key.startsWith(prefix)) this.sendCache.delete(key);
  }

  /**
   * The layout version renderTemplate renders in: the published one, as sending does, or the one
   * `layout_version` names, so that a layout's draft can be tried on the templates it will change.
   */
  private async layoutToRenderIn(resolved: ResolvedVersion, layoutVersion: RenderTemplateRequest["layout_version"]): Promise<ResolvedVersion | null> {
    const { workspace_id: workspaceId } = resolved.template;
    if (layoutVersion === undefined) return this.layoutOf(resolved, "/version", (slug) => this.templates.resolve(workspaceId, slug, "published"));
    if (resolved.version.layout === null) {
      throw ValidationError.field("/layout_version", `${resolved.template.slug}@${resolved.version.version} is not sent in a layout: render a template that names one (layout)`);
    }
    const missing = layoutVersion === "draft" ? "which has no draft (no unpublished changes)" : `which has no version ${layoutVersion}`;
    return this.layoutOf(resolved, "/layout_version", (slug) => this.templates.resolve(workspaceId, slug, layoutVersion), missing);
  }

  /**
   * The layout a version is sent in (null: none), as `lookUp` reads it: its published version,
   * through the send cache when sending. A layout deleted, or without the version looked up
   * (`missing` says so; by default it was never published), fails here, at `pointer`, rather than
   * sending the content unwrapped.
   */
  private async layoutOf(
    resolved: ResolvedVersion,
    pointer: string,
    lookUp: (slug: string) => Promise<ResolvedVersion | undefined>,
    missing = "which has no published version yet: publish it",
  ): Promise<ResolvedVersion | null> {
    const slug = resolved.version.layout;
    if (slug === null) return null;
    const layout = await lookUp(slug);
    const sent = `${resolved.template.slug}@${resolved.version.version} is sent in layout ${slug}`;
    if (layout?.template.kind === "layout") return layout;
    if (layout === undefined && (await this.templates.find(resolved.template.workspace_id, slug))?.kind === "layout") {
      throw ValidationError.field(pointer, `${sent}, ${missing}`);
    }
    throw ValidationError.field(pointer, `${sent}, which is no longer a layout of this workspace: give the template another layout and publish it`);
  }

  /**
   * A version is published only while its layout can send it: the layout exists and has a
   * published version. So a published template sends, and does not wait on a layout to fail.
   */
  private async assertLayoutPublished(workspaceId: string, version: string, layoutSlug: string | null, trx: TemplatesTransaction): Promise<void> {
    if (layoutSlug === null) return;
    // Held until the publish commits: see holdLayout.
    const layout = await this.templates.find(workspaceId, layoutSlug, trx, "share");
    const sent = `${version} is sent in layout ${layoutSlug}`;
    if (layout?.kind !== "layout") throw new ConflictError("layout_unavailable", "Layout unavailable", `${sent}, which is no longer a layout of this workspace: give the template another layout and publish that.`);
    if (layout.published_version === null) throw new ConflictError("layout_unavailable", "Layout unavailable", `${sent}, which has no published version yet: publish ${layoutSlug} first.`);
  }

  /**
   * Renders a version in its layout, if any. The variables are checked against both: the
   * template's declarations, the layout's (for names the template does not declare), and what
   * either uses. A layout rendered by itself gets an empty content.
   */
  private async renderVersion(resolved: ResolvedVersion, layout: ResolvedVersion | null, given: Record<string, unknown>, base: string, deriveText: boolean) {
    const { template, version } = resolved;
    const declared = [...version.variables, ...(layout?.version.variables ?? []).filter((v) => !version.variables.some((own) => own.name === v.name))];
    const referenced = [...referencedNames(version), ...(layout === null ? [] : referencedNames(layout.version))];
    const { values, errors } = resolveValues(declared, referenced, given, base);
    if (errors.length > 0) throw new ValidationError(errors);
    const scope = template.kind === "layout" ? { ...values, [CONTENT_SLOT]: "" } : values;
    const options: RenderOptions = { deriveText, layout: layout === null ? null : layoutSources(layout) };
    const outcome = await this.renderer.render(`${template.id}@${version.version}`, version, scope, options);
    if (!outcome.ok && outcome.phase === "variables") {
      throw ValidationError.field(base, `are ${outcome.bytes.toLocaleString("en-US")} bytes as JSON, with the defaults of the declared variables; a render takes at most ${outcome.limit.toLocaleString("en-US")}`);
    }
    if (!outcome.ok) throw new TemplateRenderFailedError(outcome.problems.map(toFieldError));
    return outcome.rendered;
  }

  /**
   * Checks the fields given against the template's kind, the declarations, the layout named and
   * the Liquid syntax, every problem at once (422 validation_failed), and answers the variables
   * each of those fields uses. Fields not given keep what was found when their version was saved;
   * a text set to null uses none.
   */
  private async checkContent(workspaceId: string, kind: TemplateKind, content: Partial<VersionContent>, variables: VersionContent["variables"], { creating }: { creating: boolean }): Promise<Partial<ReferencedVariables>> {
    const errors = [...checkDeclarations(variables), ...kindProblems(kind, { ...content, variables }, creating)];
    if (kind === "standard" && content.layout !== undefined && content.layout !== null) errors.push(...(await this.layoutProblems(workspaceId, content.layout)));
    const fields = (["subject", "html", "text"] as const).filter((field) => content[field] !== undefined);
    const sources = { subject: content.subject ?? "", html: content.html ?? "", text: content.text ?? null };
    const check: SourceCheck = fields.some((field) => content[field] !== null) ? await this.renderer.check(sources) : { problems: [], referenced: {} };
    errors.push(...check.problems.map(toFieldError));
    if (check.problems.length === 0) errors.push(...slotProblems(kind, content, check.referenced));
    if (errors.length > 0) throw new ValidationError(errors);
    return Object.fromEntries(fields.map((field) => [field, withoutSlot(kind, check.referenced[field] ?? [])]));
  }

  /**
   * Checks, in the transaction that stores a version naming `slug`, that it is a layout of the
   * workspace, and published when `publishing` (the version, `slug@N`) is. The layout's row is
   * held (shared) until that transaction ends, and deleteTemplate takes it exclusively: a delete
   * of the layout either waits and then finds this version using it (409 layout_in_use), or
   * commits first and this check finds it gone. So no draft or published version is left naming
   * a layout deleted meanwhile.
   */
  private async holdLayout(workspaceId: string, slug: string, trx: TemplatesTransaction, publishing: string | null): Promise<void> {
    const problems = await this.layoutProblems(workspaceId, slug, trx);
    if (problems.length > 0) throw new ValidationError(problems);
    if (publishing !== null) await this.assertLayoutPublished(workspaceId, publishing, slug, trx);
  }

  /** Whether `slug` names a layout of the workspace: a template can only be sent in one of those. */
  private async layoutProblems(workspaceId: string, slug: string, trx?: TemplatesTransaction): Promise<FieldError[]> {
    const layout = await this.templates.find(workspaceId, slug, trx, "share");
    if (layout?.kind === "layout") return [];
    const message = layout ? `${slug} is a standard template, not a layout (a layout is created with kind: layout)` : `no layout ${slug} in this workspace`;
    return [{ location: "body", pointer: "/layout", message }];
  }

  private async find(principal: Principal, ref: string): Promise<TemplateRow> {
    const template = await this.templates.find(principal.workspaceId, ref);
    if (!template) throw new NotFoundError("template", ref);
    return template;
  }
}

/** Whether the text sent is rendered from a text of the template's or its layout's, rather than derived from the html. */
const hasOwnText = (resolved: ResolvedVersion, layout: ResolvedVersion | null) => resolved.version.text !== null || (layout !== null && layout.version.text !== null);

/**
 * The content a rendered template is sent with (and renderTemplate answers). The subject is one
 * header line, so line breaks a variable brought in become spaces, never a second header; and it
 * is held to the contract's limit on a subject given directly, counted as Ajv counts (code
 * points). A subject, html or text of the template's own that renders blank is refused, as a
 * direct send refuses an empty one: mail without a subject or body is a mistake, usually a
 * variable left out. A text derived from the html may be empty (an html of an image alone).
 * Problems are at `pointer`.
 */
function sentContent(rendered: RenderedSources, ownText: boolean, pointer: string): RenderedSources {
  const subject = rendered.subject.replace(/[\r\n\0]+/g, " ").trim();
  const chars = [...subject].length;
  if (chars > LIMITS.subjectMaxChars) {
    throw ValidationError.field(pointer, `renders a subject of ${chars.toLocaleString("en-US")} characters; a subject is at most ${LIMITS.subjectMaxChars} (shorten the template's subject or the variables it uses)`);
  }
  if (unfoldable(subject)) throw ValidationError.field(pointer, `renders a subject that ${UNFOLDABLE}`);
  const blank = [
    ...(subject === "" ? ["subject"] : []),
    ...(rendered.html.trim() === "" ? ["html"] : []),
    ...(ownText && (rendered.text ?? "").trim() === "" ? ["text"] : []),
  ];
  if (blank.length > 0) {
    throw ValidationError.field(pointer, `renders an empty ${new Intl.ListFormat("en-GB").format(blank)}: a message needs a subject and a body (check the template and the variables it uses)`);
  }
  return { ...rendered, subject };
}

const templateExists = (slug: string) =>
  new ConflictError("template_exists", "Template exists", `This workspace already has a template ${slug}. Slugs are permanent and unique: edit that template, or choose another slug.`);

const templateChanged = (template: TemplateRow, base: number) =>
  new ConflictError(
    "template_changed",
    "Template changed",
    `Template ${template.slug} is at revision ${template.revision}, not ${base}: it was changed (a draft saved, a version published or rolled back) since you read it. Nothing was stored or published: get it again, then redo your edit, publish or rollback on it.`,
  );

const layoutSentAlone = (slug: string) => ValidationError.field("/template/slug", `${slug} is a layout, which is not sent by itself: send a template that uses it (layout: ${slug})`);

const layoutRef = (layout: ResolvedVersion | null): TemplateLayoutRef => (layout === null ? null : { id: layout.template.id, slug: layout.template.slug, version: layout.version.version });

const layoutSources = ({ template, version }: ResolvedVersion): LayoutSources => ({ key: `${template.id}@${version.version}`, slug: template.slug, html: version.html, text: version.text });

const toFieldError = (problem: FieldProblem): FieldError => ({ location: "body", pointer: `/${problem.field}`, message: problem.message, ...(problem.line === null ? {} : { line: problem.line }) });
