export { run, EXIT } from "./run.js";
export { nouns, shortcuts, tools, commandsByOperation } from "./commands/index.js";
export type { Io } from "./io.js";
