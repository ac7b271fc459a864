import type { Locator, Page } from "playwright-core";
import { expect } from "vitest";

/**
 * The template page as the browser tests drive it (templates.test.ts, template-layouts.test.ts).
 * `current` gives the page at the time of use: the tests open it in `beforeAll`.
 */
export function templatePage(current: () => Page) {
  const previewStatus = () => current().getByTestId("preview-status");
  return {
    nav: (name: string) => current().getByRole("navigation", { name: "Main" }).getByRole("link", { name, exact: true }),
    /** A CodeMirror editor, by its name; on another member's page when given. */
    editor: (name: "Subject" | "HTML" | "Text", on: Page = current()) => on.getByRole("textbox", { name, exact: true }),
    previewFrame: () => current().frameLocator('iframe[title="Email HTML preview"]'),
    previewStatus,
    problems: () => current().getByTestId("template-problem"),
    /** The summary's "Sends": the published version, and a Draft badge. */
    sends: () => current().locator(".template-summary").getByTestId("template-published"),

    /** Replaces an editor's whole content, as a person selecting all and typing would. */
    async replace(target: Locator, text: string): Promise<void> {
      await target.click();
      await current().keyboard.press("ControlOrMeta+A");
      await current().keyboard.insertText(text);
    },

    /**
     * Waits until the preview has rendered the current source (debounced save, then render): the
     * template by itself or in its layout, or on a layout's page a template in the layout.
     */
    async previewSettled(): Promise<string> {
      await expect
        .poll(() => previewStatus().textContent(), { timeout: 15_000 })
        .toMatch(
          /^(Version \d+( in layout [a-z0-9-]+ v\d+)?, as it renders now\.|[a-z0-9-]+ v\d+ in this layout's (v\d+, as it would send once this layout is published|published v\d+)\.|The preview is out of date\.)$/,
        );
      return (await previewStatus().textContent()) ?? "";
    },
  };
}
