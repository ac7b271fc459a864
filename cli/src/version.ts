/** The CLI's version, as `mailroom --version` prints it (kept equal to package.json's). */
export const VERSION = "0.1.0";
