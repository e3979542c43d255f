import { vi } from "vitest";

/**
 * Setup file of the projects that run without isolation (`isolate: false`, vitest.config.ts): a
 * worker process runs many test files, keeping what Node loaded (vitest, node_modules), but every
 * file starts with a fresh registry of the project's own modules, so module state — a helper's
 * hooks and registries, an engine's singletons — is the file's own, as with isolation. Measured
 * on 2 cores (issue 36): a third less CPU per file than a process per file.
 */
vi.resetModules();
