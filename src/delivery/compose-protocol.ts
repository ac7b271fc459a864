import type { ComposeRequest } from "./compose.js";
import type { RenderedMessage } from "./render.js";

/** A compose job as the pool posts it to a thread (several go in one message). */
export interface ComposeJob {
  id: number;
  request: ComposeRequest;
}

/** A thread's answer to one job: the composed message, or why it could not be composed (a bug). */
export type ComposeAnswer = { id: number; rendered: RenderedMessage } | { id: number; error: { message: string; stack?: string } };
