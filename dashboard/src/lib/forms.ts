import { APIError } from "mailroom";
import type { FormEvent } from "react";

export interface FormValues {
  /** A text field, trimmed. */
  text: (name: string) => string;
  /** A field exactly as typed (passwords: spaces count). */
  raw: (name: string) => string;
}

/** Stops the browser's own submission and reads the form's fields by name. */
export function readForm(event: FormEvent<HTMLFormElement>): FormValues {
  event.preventDefault();
  const data = new FormData(event.currentTarget);
  const raw = (name: string) => {
    const value = data.get(name);
    return typeof value === "string" ? value : "";
  };
  return { raw, text: (name) => raw(name).trim() };
}

/**
 * A setting that is a number or nothing (the monthly quota, the content retention), as its
 * `<input type="number">` gives it: "" unless it holds a number, so empty means null. The browser
 * checks min, max and step before submitting; the server still validates.
 */
export function numberOrNull(value: string): number | null {
  return value === "" ? null : Number(value);
}

/**
 * What a 422 says about one field of a form (its pointer, or one below it: `/url`,
 * `/event_types/0`), to show beside that field; the message without the pointer, which the
 * field's label already says.
 */
export function problemsAt(error: unknown, pointer: string): string[] {
  if (!(error instanceof APIError) || error.status !== 422) return [];
  return error.errors.filter((field) => isAtOrBelow(field.pointer, pointer)).map((field) => field.message);
}

/** Whether a problem's JSON pointer is `base` or one inside it (`/url`, `/event_types/0` under `/event_types`). */
export function isAtOrBelow(pointer: string, base: string): boolean {
  return pointer === base || pointer.startsWith(`${base}/`);
}
