// The version `--version` prints and SARIF names: the package's, taken from package.json when the CLI is bundled
// (a named import, so the bundle keeps only this field of the manifest).
import { version } from '../../package.json';

export const TOOL_VERSION: string = version;
