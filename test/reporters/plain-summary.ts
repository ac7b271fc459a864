import type { Reporter, SerializedError, TestModule } from "vitest/node";

/**
 * Ends the run with one plain line, `Tests: N passed, N failed, N skipped`, after vitest's own
 * summary. Vitest's table ("Tests  2984 passed | 2 skipped (2986)") is not a format CI tooling
 * reads; this line is the convention most runners share, so a log's last line says whether tests
 * ran and how they went. A module that failed outside its tests (an import error, a failing
 * beforeAll with no test reached) and an unhandled error each count as a failure: a run that
 * executed nothing is never reported as clean.
 */
export default class PlainSummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const testModule of testModules) {
      let failedTests = 0;
      for (const testCase of testModule.children.allTests()) {
        const state = testCase.result().state;
        if (state === "passed") counts.passed += 1;
        else if (state === "failed") failedTests += 1;
        else counts.skipped += 1; // skipped, todo, or never reached (pending)
      }
      counts.failed += failedTests;
      if (failedTests === 0 && testModule.state() === "failed") counts.failed += 1;
    }
    counts.failed += unhandledErrors.length;
    process.stdout.write(`\nTests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}
