import { parentPort } from "node:worker_threads";
import { composeMessage } from "./compose.js";
import type { ComposeAnswer, ComposeJob } from "./compose-protocol.js";

/**
 * One compose thread: renders and DKIM-signs the messages the pool gives it (ComposeThreads).
 * Answers are sent back together, once per turn of this thread's event loop, since waking the
 * other thread costs more than a small message's answer.
 */
let answers: ComposeAnswer[] = [];

function answer(reply: ComposeAnswer): void {
  if (answers.push(reply) === 1) {
    setImmediate(() => {
      parentPort!.postMessage(answers);
      answers = [];
    });
  }
}

parentPort!.on("message", (jobs: ComposeJob[]) => {
  for (const { id, request } of jobs) {
    composeMessage(request).then(
      (rendered) => answer({ id, rendered }),
      (error: unknown) => answer({ id, error: error instanceof Error ? { message: error.message, stack: error.stack } : { message: String(error) } }),
    );
  }
});
