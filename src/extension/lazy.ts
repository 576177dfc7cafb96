// Everything the extension needs only after activation: the command handlers and, through them, the YAML and
// schema libraries, the importers, the native runner, tree-sitter and the analysis. scripts/build.mjs bundles
// this file on its own (dist/extension-lazy.js) and keeps `import('./lazy')` a runtime require in
// dist/extension.js, so activation compiles and runs only the small main bundle.
export * as training from './handlers/training';
export * as collectives from './handlers/collectives';
export * as selectSystem from './handlers/select-system';
export * as traceFiles from './handlers/trace-files';
export * as measurements from './handlers/measurements';
export * as native from './handlers/native';
export * as workspaceCheck from './handlers/workspace-check';
export { loadAnalyzer } from './analysis-host';
export { indexWorkspace } from './workspace-index';
export { loadManifests } from './workspace-manifests';
export { loadSystemFile } from '../config/system-file';
