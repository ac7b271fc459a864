import { useRef, useState } from "react";
import type { Message } from "mailroom";
import { useApi } from "../api/api-context";
import { serverClock } from "../api/server-clock";
import { useAction } from "../api/use-request";
import { ActionButton } from "../components/action-button";
import { Card } from "../components/card";
import { ErrorState } from "../components/error-state";
import { Field } from "../components/field";
import { useFocusWhenLost } from "../components/use-focus-when-lost";
import { formatDateTime } from "../lib/format";
import { readForm } from "../lib/forms";
import { SCHEDULE_LIMIT_DAYS, dateTimeInputToInstant, dateTimeInputValue, scheduleBounds } from "../lib/schedule";

/**
 * Moves a scheduled message to another time, or sends it now (rescheduleMessage). The page shows
 * it only for a `scheduled` message and to members who may send. A message `due` now (after a
 * Send now, or once its send time has come: isDueNow) is the worker's to send next: it is offered
 * neither control, only a line saying so.
 */
export function MessageSchedule({ message, due, onChange }: { message: Message; due: boolean; onChange: (message: Message) => void }) {
  const api = useApi();
  // What the last change asked for, once it has answered: the status line words its outcome.
  const [changed, setChanged] = useState<"moved" | "now" | null>(null);
  const reschedule = useAction(async (scheduledAt: string | null) => {
    setChanged(null);
    onChange(await api.call((mr) => mr.messages.reschedule(message.id, { scheduled_at: scheduledAt })));
    setChanged(scheduledAt === null ? "now" : "moved");
  });
  // From the server's now, which judges the new time: the browser's clock may be off.
  const bounds = scheduleBounds(message.expires_at, serverClock.now());
  // Send now takes its own button away: the keyboard's focus goes to the line that says why.
  const dueLine = useRef<HTMLParagraphElement>(null);
  useFocusWhenLost(dueLine, due && changed === "now" ? "due" : null);

  return (
    <Card title="Schedule">
      {/* A live region for as long as the card is shown, so that screen readers announce the line
          when the send time comes by itself, as they would not a region that appears with it. */}
      <div role="status">
        {due && (
          <p ref={dueLine} tabIndex={-1} className="notice" data-testid="reschedule-result">
            Due now: it is sent next.
          </p>
        )}
      </div>
      {!due && (
        <form
          className="form form--narrow"
          aria-label="Reschedule"
          onSubmit={(event) => {
            const instant = dateTimeInputToInstant(readForm(event).text("scheduled_at"));
            // The input is required and typed: the browser lets through only a time it can read.
            if (instant !== undefined) void reschedule.run(instant);
          }}
        >
          <p className="muted">
            Up to {SCHEDULE_LIMIT_DAYS} days ahead{message.expires_at && <>, and before it expires ({formatDateTime(message.expires_at)})</>}. The
            message keeps its ID and content; its events record the change.
          </p>
          <Field label="New time" hint="In your time zone.">
            <input
              name="scheduled_at"
              type="datetime-local"
              required
              min={bounds.min}
              max={bounds.max}
              defaultValue={message.scheduled_at ? dateTimeInputValue(message.scheduled_at) : ""}
            />
          </Field>
          {reschedule.error !== undefined && <ErrorState error={reschedule.error} title="Could not reschedule the message" compact />}
          <div className="form__actions">
            <ActionButton label="Reschedule" pendingLabel="Rescheduling…" pending={reschedule.pending} />
            <button type="button" className="button" disabled={reschedule.pending} onClick={() => void reschedule.run(null)}>
              Send now
            </button>
            <span role="status" className="form__status" data-testid="reschedule-result">
              {changed === "moved" && !reschedule.pending && `Rescheduled for ${formatDateTime(message.scheduled_at)}.`}
            </span>
          </div>
        </form>
      )}
    </Card>
  );
}
